"""Through the jr2 CLI (a subprocess, `python -m jr2_core`) against the fake Linear
(`LINEAR_API_URL`): `jr2 ready linear:ENG` reads readiness from `blocks` relations and
sub-issues and writes nothing; `jr2 work linear:ENG -- CMD` runs each ready issue once and
completes it; a person canceling a held issue stops its worker and nothing overwrites it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_linear import KEY, FakeLinear


def jr2(*args: str, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture
def fake() -> Iterator[FakeLinear]:
    f = FakeLinear().start()
    one = f.add_issue("Set up CI", labels=("agent",))
    two = f.add_issue("Build on CI", labels=("agent",))
    parent = f.add_issue("Ship the feature", labels=("agent",))
    child = f.add_issue("Write its docs", labels=("agent",))
    dropped = f.add_issue("A plan we dropped", labels=("agent",))
    after = f.add_issue("Urgent, after the dropped plan", labels=("agent",), priority=1)
    f.add_issue("Not for agents")
    f.relate(one, two)  # ENG-1 blocks ENG-2
    f.set_parent(child, parent)
    f.relate(dropped, after)
    f.move(dropped, "canceled")
    yield f
    f.stop()


def _env(fake: FakeLinear) -> dict[str, str]:
    return {"LINEAR_API_URL": fake.url, "LINEAR_API_KEY": KEY, "LINEAR_OAUTH_TOKEN": ""}


def test_jr2_plugins_lists_jr2_linear() -> None:
    infos = json.loads(jr2("plugins", "--json").stdout)
    mine = [i for i in infos if i["distribution"] == "jr2-linear"]
    assert mine and mine[0]["kinds"] == ["linear"] and mine[0]["error"] is None


def test_jr2_ready_reads_relations_and_sub_issues_and_writes_nothing(fake: FakeLinear) -> None:
    res = jr2("ready", "linear:ENG", "--label", "agent", "--json", env=_env(fake))
    assert res.returncode == 0, res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    # Urgent first; a canceled blocker no longer holds its dependent back, and is named
    assert [e["id"] for e in data["ready"]] == ["ENG-6", "ENG-1", "ENG-4"]
    assert data["ready"][0]["extra"]["canceled_blockers"] == ["ENG-5"]
    blocked = {e["id"]: e["reasons"] for e in data["blocked"]}
    assert blocked == {
        "ENG-2": [{"kind": "open_blocker", "ref": "ENG-1", "held_by": None}],
        "ENG-3": [{"kind": "open_children", "refs": ["ENG-4"]}]}
    assert fake.mutations == 0
    assert set(fake.by_operation) == {"Jr2Setup", "Jr2Issues"}


def test_jr2_work_help_lists_the_linear_options() -> None:
    res = jr2("work", "linear:", "--help")
    assert res.returncode == 0, res.stderr
    for option in ("--label", "--project", "--cycle", "--assignee", "--filter",
                   "--priority-order", "--on-success"):
        assert option in res.stdout
    assert "--gate" not in res.stdout


def test_without_credentials_the_error_is_one_line(fake: FakeLinear) -> None:
    res = jr2("ready", "linear:ENG", env={**_env(fake), "LINEAR_API_KEY": ""})
    assert res.returncode == 2
    assert "LINEAR_API_KEY" in res.stderr and res.stderr.strip().count("\n") == 0


def test_a_wrong_key_is_one_line_and_never_printed(fake: FakeLinear) -> None:
    secret = "lin_api_wrong_secret_value"
    res = jr2("ready", "linear:ENG", env={**_env(fake), "LINEAR_API_KEY": secret})
    assert res.returncode != 0 and "refused the credentials" in res.stderr
    assert secret not in res.stderr + res.stdout and "Traceback" not in res.stderr


def test_jr2_work_runs_each_ready_issue_once_and_completes_it(fake: FakeLinear,
                                                              tmp_path: Path) -> None:
    log = tmp_path / "ran"
    res = jr2("work", "linear:ENG", "--label", "agent", "--cap", "2", "--poll-every", "0.2",
              "--state", str(tmp_path / "state"), "--", "sh", "-c",
              f'echo "$JR2_ITEM_ID" >> {log}', env=_env(fake), timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    ran = log.read_text().split()
    assert sorted(ran) == ["ENG-1", "ENG-2", "ENG-3", "ENG-4", "ENG-6"]
    assert ran.index("ENG-1") < ran.index("ENG-2") and ran.index("ENG-4") < ran.index("ENG-3")
    assert {i: fake.state_type(i) for i in ran} == dict.fromkeys(ran, "completed")
    assert fake.state_type("ENG-5") == "canceled" and fake.state_type("ENG-7") == "unstarted"
    kinds = {a["metadata"]["jr2"] for i in ran for a in fake.markers(i)}
    assert kinds == {"done"}


def test_a_person_canceling_a_held_issue_stops_its_worker(tmp_path: Path) -> None:
    f = FakeLinear().start()
    try:
        ident = f.add_issue("Long job")
        started = tmp_path / "started"
        proc = subprocess.Popen(
            [sys.executable, "-m", "jr2_core", "work", "linear:ENG", "--poll-every", "0.3",
             "--state", str(tmp_path / "state"), "--", "sh", "-c",
             f"touch {started}; sleep 30"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **_env(f)})
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), "the worker never started"
        before = f.mutations
        f.move(ident, "canceled")  # a person cancels it while the worker runs
        _out, err = proc.communicate(timeout=60)
        assert "cancelled" in err, err[-2000:]
        assert f.state_type(ident) == "canceled"  # nothing overwrote the person's state
        assert f.markers(ident) == []  # the claim was released (its marker deleted)
        assert "Jr2IssueMove" not in f.by_operation
        assert f.mutations == before + 1
    finally:
        f.stop()


def test_options_of_capabilities_linear_does_not_declare_are_refused(fake: FakeLinear,
                                                                     tmp_path: Path) -> None:
    res = jr2("work", "linear:ENG", "--gate", "review", "--state", str(tmp_path), "--", "true",
              env=_env(fake))
    assert res.returncode == 2 and "cannot use --gate" in res.stderr
    assert fake.mutations == 0
