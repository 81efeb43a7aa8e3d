"""Through the jr2 CLI (a subprocess, `python -m jr2_core`): `jr2 plugins` lists jr2-gitlab
with its version, and `jr2 ready gitlab:group/project --json` against the fake (GITLAB_URL)
prints the right Ready-set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from fake_gitlab import TOKEN, FakeGitLab


def jr2(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    f = FakeGitLab().start()
    one = f.add_issue("group/project", "Set up CI", labels=["agent"])
    two = f.add_issue("group/project", "Build on CI", labels=["agent"])
    f.add_issue("group/project", "Needs a ghost", labels=["agent"], description="Depends on #99")
    f.add_issue("group/project", "Not for agents")
    done = f.add_issue("group/project", "Done already", labels=["agent"])
    four = f.add_issue("group/project", "After done", labels=["agent"])
    f.block(("group/project", one), ("group/project", two))
    f.block(("group/project", done), ("group/project", four))
    f.close_issue("group/project", done)
    yield f
    f.stop()


def _env(fake: FakeGitLab) -> dict[str, str]:
    return {"GITLAB_URL": fake.url, "GITLAB_TOKEN": TOKEN}


def test_jr2_plugins_lists_jr2_gitlab_with_its_version() -> None:
    infos = json.loads(jr2("plugins", "--json").stdout)
    mine = [i for i in infos if i["distribution"] == "jr2-gitlab"]
    assert mine and mine[0]["version"] == "0.1.0" and mine[0]["kinds"] == ["gitlab"]
    assert mine[0]["error"] is None


def test_jr2_ready_prints_the_ready_set(fake: FakeGitLab) -> None:
    res = jr2("ready", "gitlab:group/project", "--label", "agent", "--json", env=_env(fake))
    assert res.returncode == 0, res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    assert sorted(e["id"] for e in data["ready"]) == ["group/project#1", "group/project#6"]
    blocked = {e["id"]: e["reasons"] for e in data["blocked"]}
    assert blocked["group/project#2"] == [{"kind": "open_blocker", "ref": "group/project#1",
                                           "held_by": None}]
    assert blocked["group/project#3"][0]["kind"] == "missing_blocker"
    assert "group/project#4" not in blocked  # not labelled agent
    assert fake.writes() == 0


def test_without_a_token_the_error_is_one_line(fake: FakeGitLab) -> None:
    env = {**_env(fake), "GITLAB_TOKEN": ""}
    res = jr2("ready", "gitlab:group/project", "--json", env=env)
    assert res.returncode != 0
    assert res.stderr.strip().count("\n") == 0 and "GITLAB_TOKEN" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_wrong_token_is_one_line_and_never_printed(fake: FakeGitLab) -> None:
    secret = "glpat-wrong-secret-value"
    res = jr2("ready", "gitlab:group/project", "--json",
              env={**_env(fake), "GITLAB_TOKEN": secret})
    assert res.returncode != 0 and "HTTP 401" in res.stderr
    assert secret not in res.stderr + res.stdout and "Traceback" not in res.stderr


def test_jr2_work_runs_each_ready_item_through_the_plugin(fake: FakeGitLab, tmp_path: Any) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "jr2_core", "work", "gitlab:group/project", "--label", "agent",
         "--write-spacing", "0.01", "--state", str(tmp_path), "--", "true"],
        capture_output=True, text=True, timeout=120, env={**os.environ, **_env(fake)})
    # exit 3 (deadlocked): #3 waits on a blocker that does not exist, everything else ran
    assert res.returncode == 3, (res.returncode, res.stderr)
    closed = {iid for iid, i in fake.projects["group/project"]["issues"].items()
              if i["state"] == "closed"}
    assert {1, 2, 5, 6} <= closed and 3 not in closed and 4 not in closed


RETRY_WORKER = r'''
import os, sys
runs = os.path.join(sys.argv[1], os.environ["JR2_ITEM_ID"].replace("/", "_").replace("#", "_"))
n = len(open(runs).read()) if os.path.exists(runs) else 0
open(runs, "a").write("x")
sys.exit(75 if n < 2 else 0)
'''


def test_jr2_work_retries_a_transient_failure_through_the_plugin(tmp_path: Any) -> None:
    """Exit 75 twice, then 0, with --max-attempts 3: done after three runs; the attempt
    record is in the settled note's marker (`attempts`)."""
    from jr2_sources.kit import claims

    f = FakeGitLab().start()
    try:
        iid = f.add_issue("group/project", "Flaky", labels=["agent"])
        (tmp_path / "w.py").write_text(RETRY_WORKER)
        res = subprocess.run(
            [sys.executable, "-m", "jr2_core", "work", "gitlab:group/project", "--label",
             "agent", "--write-spacing", "0.01", "--poll-every", "0.2", "--state",
             str(tmp_path / "state"), "--max-attempts", "3", "--retry-backoff", "0.3s", "--",
             sys.executable, str(tmp_path / "w.py"), str(tmp_path)],
            capture_output=True, text=True, timeout=120, env={**os.environ, **_env(f)})
        assert res.returncode == 0, res.stderr[-2000:]
        [runs] = [p for p in tmp_path.iterdir() if p.name.startswith("group")]
        assert runs.read_text() == "xxx"
        issue = f.projects["group/project"]["issues"][iid]
        assert issue["state"] == "closed"
        bodies = [n["body"] for n in issue["notes"]]
        found = [claims.parse_marker(claims.Comment(i, b, *(2 * [None])))  # type: ignore[arg-type]
                 for i, b in enumerate(bodies)]
        settled = [mk for mk in found if mk is not None and mk.kind in ("done", "failed")]
        assert [mk.fields.get("attempts") for mk in settled] == [1, 2, 3]
        assert [mk.kind for mk in settled] == ["failed", "failed", "done"]
    finally:
        f.stop()


GATE_WORKER = r'''
import os, sys
log = os.path.join(sys.argv[1], "runs")
open(log, "a").write(os.environ.get("JR2_GATE_DEPLOY", "-") + "\n")
if "JR2_GATE_DEPLOY" not in os.environ:
    print("jr2: await-approval deploy ship it?")
    sys.exit(79)
'''


def test_jr2_work_parks_a_gated_item_until_a_developer_approves(tmp_path: Any) -> None:
    """`--gate deploy`: the worker asks (exit 79), the issue is parked (`jr2:awaiting-approval`,
    the claim label gone) and the run ends deadlocked; `/jr2 approve deploy` by a Reporter is
    ignored, by a Developer it counts: the next `jr2 work` runs it with
    JR2_GATE_DEPLOY=approved, closes it and takes the awaiting label off."""
    f = FakeGitLab().start()
    try:
        f.add_user("dev", 30)
        f.add_user("rep", 20)
        iid = f.add_issue("group/project", "Ship", labels=["agent"])
        (tmp_path / "w.py").write_text(GATE_WORKER)
        argv = [sys.executable, "-m", "jr2_core", "work", "gitlab:group/project", "--label",
                "agent", "--write-spacing", "0.01", "--poll-every", "0.2", "--state",
                str(tmp_path / "state"), "--gate", "deploy", "--", sys.executable,
                str(tmp_path / "w.py"), str(tmp_path)]
        env = {**os.environ, **_env(f)}

        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)

        res = run()
        assert res.returncode == 3, res.stderr[-2000:]
        issue = f.projects["group/project"]["issues"][iid]
        assert "jr2:awaiting-approval" in issue["labels"]
        assert "jr2:claimed" not in issue["labels"]
        f.add_note("group/project", iid, "/jr2 approve deploy", "rep")
        f.add_note("group/project", iid, "/jr2 approve deploy", "jr2-bot")  # jr2's own token
        report = jr2("ready", "gitlab:group/project", "--label", "agent", "--json", env=_env(f))
        [entry] = json.loads(report.stdout)["blocked"]
        [reason] = entry["reasons"]
        assert reason["kind"] == "awaiting_approval" and reason["ignored_answers_by"] == ["rep"]
        f.add_note("group/project", iid, "/jr2 approve deploy", "dev")
        res = run()
        assert res.returncode == 0, res.stderr[-2000:]
        assert (tmp_path / "runs").read_text() == "-\napproved\n"
        assert issue["state"] == "closed"
        assert "jr2:awaiting-approval" not in issue["labels"]
    finally:
        f.stop()
