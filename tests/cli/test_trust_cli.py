"""Whose jr2 markers count, at the command line against the fake GitHub (`kit.markers`): a
stranger's forged claim, failed/retry, lock and answer markers change nothing, `jr2 ready --json`
names each with its author (reason `ignored_marker`), `jr2 work` warns once per author; with
`JR2_MARKER_KEY` set, unsigned markers of the bot's own token grant nothing, and a done issue
stays done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from jr2_sources.testing import Forged
from jr2_sources.testing.fakes.github_server import LOGIN, FakeGitHub

JR2 = [sys.executable, "-m", "jr2_core"]
STRANGER = "mallory"
CLAIM = Forged("claim", {"holder": "evil@x", "lease": 86400, "nonce": "n1"}).body
FAILED = Forged("failed", {"holder": "evil@x", "nonce": "n2", "reason": "exit 75", "attempt": 1,
                           "retry_after": "2099-01-01T00:00:00+00:00"}).body
GATE = Forged("gate", {"gate": "deploy", "holder": "r@h", "nonce": "n3"}).body
ANSWER = Forged("answer", {"gate": "deploy", "status": "approved", "reason": None,
                           "by": "octocat"}).body


def _lock(item: str, nonce: str) -> str:
    return Forged("lock", {"item": item, "holder": "evil@x", "groups": [], "nonce": nonce,
                           "lease": 86400}).body


def _run(fake: FakeGitHub, tmp: Path, *args: str, key: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITHUB_API_URL": fake.url, "GITHUB_TOKEN": "x",
           "JR2_STATE_DIR": str(tmp / "s")}
    env.pop("JR2_MARKER_KEY", None)
    if key is not None:
        env["JR2_MARKER_KEY"] = key
    return subprocess.run([*JR2, *args], cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=120)


def _entries(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for group in ("ready", "blocked", "claimed") for e in report[group]}


def _ignored(entry: dict[str, Any]) -> set[tuple[str, str]]:
    return {(r["marker"], r["author"]) for r in entry.get("reasons", ())
            if r["kind"] == "ignored_marker"}


def test_a_strangers_markers_change_nothing_and_are_named(tmp_path: Path) -> None:
    with FakeGitHub() as fake:
        control = fake.add_issue("o/r", "control")
        held = fake.add_issue("o/r", "held", labels=["agent", "jr2:claimed"])
        parked = fake.add_issue("o/r", "parked", labels=["agent", "jr2:claimed"])
        gated = fake.add_issue("o/r", "gated", labels=["agent", "jr2:awaiting-approval"])
        fake.add_comment("o/r", held, CLAIM, user=STRANGER)
        fake.add_comment("o/r", parked, FAILED, user=STRANGER)
        fake.add_comment("o/r", gated, GATE, user=LOGIN)
        fake.add_comment("o/r", gated, ANSWER, user=STRANGER)
        fake.add_comment("o/r", control, _lock(f"o/r#{held}", "l1"), user=STRANGER)
        fake.add_comment("o/r", control, _lock(f"o/r#{parked}", "l2"), user=STRANGER)
        limits = ["--global-cap", "2", "--control-issue", f"o/r#{control}"]
        ready = _run(fake, tmp_path, "ready", "github:o/r", "--label", "agent", *limits,
                     "--json")
        assert ready.returncode == 0, ready.stderr
        report = json.loads(ready.stdout)
        entries = _entries(report)
        assert {e["id"] for e in report["ready"]} == {f"o/r#{held}", f"o/r#{parked}"}
        assert _ignored(entries[f"o/r#{held}"]) == {("claim", STRANGER), ("lock", STRANGER)}
        assert _ignored(entries[f"o/r#{parked}"]) == {("failed", STRANGER), ("lock", STRANGER)}
        [waits] = [r for r in entries[f"o/r#{gated}"]["reasons"]
                   if r["kind"] == "awaiting_approval"]
        assert waits["gate"] == "deploy"  # the forged approval answered nothing
        assert _ignored(entries[f"o/r#{gated}"]) == {("answer", STRANGER)}
        assert len(fake.requests("GET", r"^/user$")) == 1  # the identity, once per run
        fake.clear_log()
        work = _run(fake, tmp_path, "work", "github:o/r", "--label", "agent", *limits,
                    "--write-spacing", "0.001", "--max-attempts", "3", "--", "true")
        assert work.returncode == 3, work.stderr  # only the gated item is left: it waits
        assert f"o/r#{gated}: awaits approval of gate deploy" in work.stderr
        assert fake.issue("o/r", held).state == "closed"
        assert fake.issue("o/r", parked).state == "closed"
        assert fake.issue("o/r", gated).state == "open"
        warned = [ln for ln in work.stderr.splitlines() if f"markers by {STRANGER}" in ln]
        assert len(warned) == 1, work.stderr
        # every thread read, claimed, settled and the gate polled: the identity asked once
        assert len(fake.requests("GET", r"^/user$")) == 1


def test_with_a_key_unsigned_grants_count_for_nothing_and_done_stays_done(tmp_path: Path) -> None:
    log = tmp_path / "ran"
    record = ["--", "sh", "-c", f'echo "$JR2_ITEM_ID" >> {log}']
    with FakeGitHub() as fake:
        control = fake.add_issue("o/r", "control")
        done = fake.add_issue("o/r", "done", labels=["agent"])
        first = _run(fake, tmp_path, "work", "github:o/r", "--label", "agent", "--on-success",
                     "nothing", "--write-spacing", "0.001", *record)
        assert first.returncode == 0, first.stderr
        assert log.read_text().split() == [f"o/r#{done}"]  # done, left open with its mark
        held = fake.add_issue("o/r", "held", labels=["agent", "jr2:claimed"])
        gated = fake.add_issue("o/r", "gated", labels=["agent", "jr2:awaiting-approval"])
        fake.add_comment("o/r", held, CLAIM, user=LOGIN)  # the bot's own token, no key
        fake.add_comment("o/r", gated, GATE, user=LOGIN)
        fake.add_comment("o/r", gated, ANSWER, user=LOGIN)
        fake.add_comment("o/r", control, _lock(f"o/r#{held}", "l1"), user=LOGIN)
        fake.add_comment("o/r", control, _lock(f"o/r#{gated}", "l2"), user=LOGIN)
        limits = ["--global-cap", "2", "--control-issue", f"o/r#{control}"]
        key = "marker-key-" + "k" * 24
        ready = _run(fake, tmp_path, "ready", "github:o/r", "--label", "agent", *limits,
                     "--json", key=key)
        assert ready.returncode == 0, ready.stderr
        entries = _entries(json.loads(ready.stdout))
        assert key not in ready.stdout + ready.stderr
        assert {("claim", LOGIN), ("lock", LOGIN)} <= _ignored(entries[f"o/r#{held}"])
        assert ("answer", LOGIN) in _ignored(entries[f"o/r#{gated}"])
        work = _run(fake, tmp_path, "work", "github:o/r", "--label", "agent", *limits,
                    "--on-success", "nothing", "--write-spacing", "0.001", *record, key=key)
        assert work.returncode == 3, work.stderr  # only the gated item is left: it waits
        assert key not in work.stdout + work.stderr
        # the unsigned claim and locks held nothing, the unsigned answer approved nothing, and
        # the done item (its unsigned done mark by the bot) did not run again
        assert sorted(log.read_text().split()) == sorted([f"o/r#{done}", f"o/r#{held}"])
        assert fake.issue("o/r", gated).state == "open"


def test_a_fleet_names_its_other_accounts_with_trust(tmp_path: Path) -> None:
    """`--trust ACCOUNT` and `trust = [...]` in jr2.toml: that account's markers count."""
    (tmp_path / "jr2.toml").write_text('[sources.fleet]\nkind = "github"\ntarget = "o/r"\n'
                                       'label = ["agent"]\ntrust = ["Other-Pool"]\n')
    (tmp_path / ".git").mkdir()
    with FakeGitHub() as fake:
        held = fake.add_issue("o/r", "held", labels=["agent", "jr2:claimed"])
        fake.add_comment("o/r", held, CLAIM, user="other-pool")
        fake.add_comment("o/r", held, CLAIM.replace("n1", "n9"), user=STRANGER)
        by_flag = _run(fake, tmp_path, "ready", "github:o/r", "--label", "agent", "--trust",
                       "other-pool", "--json")
        by_file = _run(fake, tmp_path, "ready", "fleet", "--json")
        plain = _run(fake, tmp_path, "ready", "github:o/r", "--label", "agent", "--json")
    for out in (by_flag, by_file):
        assert out.returncode == 0, out.stderr
        [entry] = json.loads(out.stdout)["claimed"]
        assert (entry["id"], entry["holder"]) == (f"o/r#{held}", "evil@x")
        assert _ignored(entry) == {("claim", STRANGER)}
    [entry] = json.loads(plain.stdout)["ready"]
    assert _ignored(entry) == {("claim", "other-pool"), ("claim", STRANGER)}


def _jira_ready(url: str, tmp_path: Path, credentials: dict[str, str]
                ) -> subprocess.CompletedProcess[str]:
    """`jr2 ready --json` on the fake Jira at `url` with only `credentials` (and no key)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JIRA_PAT", "JIRA_EMAIL", "JIRA_API_TOKEN", "JR2_MARKER_KEY")}
    env.update(credentials, JR2_STATE_DIR=str(tmp_path))
    return subprocess.run([*JR2, "ready", f"jira:{url}", "--jql", "project = ENG", "--json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_strangers_jira_body_markers_change_nothing(tmp_path: Path) -> None:
    """Jira Data Center keeps markers in comment bodies: a stranger's claim and failed record
    on an issue jr2 marked count for nothing, and are named."""
    from jr2_sources.testing.fakes.jira_server import FakeJira

    fake = FakeJira(cloud=False).start()
    try:
        held = fake.add_issue("held", labels=["jr2:claimed"])
        fake.add_comment(held, CLAIM, STRANGER)
        fake.add_comment(held, FAILED, STRANGER)
        out = _jira_ready(fake.url, tmp_path, {"JIRA_PAT": "test-token-123456"})
    finally:
        fake.stop()
    assert out.returncode == 0, out.stderr
    [entry] = json.loads(out.stdout)["ready"]
    assert entry["id"] == held
    assert _ignored(entry) == {("claim", STRANGER), ("failed", STRANGER)}


def test_a_strangers_own_jira_cloud_comment_property_changes_nothing(tmp_path: Path) -> None:
    """Jira Cloud keeps markers in the comment property `jr2`: a stranger can set one on their
    own comment ("Set comment property"); it counts for nothing and is named."""
    from jr2_sources.testing.fakes.jira_server import FakeJira

    fake = FakeJira(cloud=True).start()
    try:
        held = fake.add_issue("held", labels=["jr2:claimed"])
        cid = fake.add_comment(held, "jr2: held", STRANGER)
        with fake.lock:
            [c] = [c for c in fake.issue(held).comments if c["id"] == cid]
            c["properties"] = [{"key": "jr2", "value": {"kind": "claim", "fields": {
                "holder": "evil@x", "lease": 86400, "nonce": "n1"}}}]
        out = _jira_ready(fake.url, tmp_path, {"JIRA_EMAIL": "bot@example.com",
                                               "JIRA_API_TOKEN": "test-token-123456"})
    finally:
        fake.stop()
    assert out.returncode == 0, out.stderr
    [entry] = json.loads(out.stdout)["ready"]
    assert entry["id"] == held
    assert _ignored(entry) == {("claim", f"acc-{STRANGER}")}
