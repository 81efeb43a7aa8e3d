"""Whose jr2 markers count on GitLab, through the CLI against the fake: forged claim,
failed/retry, lock and answer notes by a non-member and by a Guest change nothing through
`jr2 ready --json` (each named with its author, reason `ignored_marker`) and `jr2 work`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_gitlab import TOKEN, FakeGitLab

from jr2_sources.testing import Forged

P = "g/p"
STRANGER, GUEST, BOT = "mallory", "guest", "jr2-bot"
CLAIM = Forged("claim", {"holder": "evil@x", "lease": 86400, "nonce": "n1"}).body
FAILED = Forged("failed", {"holder": "evil@x", "nonce": "n2", "reason": "exit 75", "attempt": 1,
                           "retry_after": "2099-01-01T00:00:00+00:00"}).body
GATE = Forged("gate", {"gate": "deploy", "holder": "r@h", "nonce": "n3"}).body
ANSWER = Forged("answer", {"gate": "deploy", "status": "approved", "reason": None,
                           "by": "root"}).body


def _lock(item: str, nonce: str) -> str:
    return Forged("lock", {"item": item, "holder": "evil@x", "groups": [], "nonce": nonce,
                           "lease": 86400}).body


def _jr2(fake: FakeGitLab, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITLAB_URL": fake.url, "GITLAB_TOKEN": TOKEN,
           "JR2_STATE_DIR": str(tmp / "s")}
    env.pop("JR2_MARKER_KEY", None)
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)


def _ignored(entry: dict[str, Any]) -> set[tuple[str, str]]:
    return {(r["marker"], r["author"]) for r in entry.get("reasons", ())
            if r["kind"] == "ignored_marker"}


def test_forged_gitlab_markers_change_nothing_through_ready_and_work(tmp_path: Path) -> None:
    fake = FakeGitLab().start()
    try:
        fake.add_user(GUEST, 10)  # a Guest of the project
        control = fake.add_issue(P, "control")
        held = fake.add_issue(P, "held", labels=["agent", "jr2:claimed"])
        parked = fake.add_issue(P, "parked", labels=["agent", "jr2:claimed"])
        gated = fake.add_issue(P, "gated", labels=["agent", "jr2:awaiting-approval"])
        fake.add_note(P, held, CLAIM, STRANGER)
        fake.add_note(P, parked, FAILED, GUEST)
        fake.add_note(P, gated, GATE, BOT)
        fake.add_note(P, gated, ANSWER, STRANGER)
        fake.add_note(P, gated, ANSWER, GUEST)
        fake.add_note(P, control, _lock(f"{P}#{held}", "l1"), STRANGER)
        fake.add_note(P, control, _lock(f"{P}#{parked}", "l2"), GUEST)
        limits = ["--global-cap", "2", "--control-issue", f"{P}#{control}"]
        ready = _jr2(fake, tmp_path, "ready", f"gitlab:{P}", "--label", "agent", *limits,
                     "--json")
        assert ready.returncode == 0, ready.stderr
        report = json.loads(ready.stdout)
        entries = {e["id"]: e for g in ("ready", "blocked", "claimed") for e in report[g]}
        assert {e["id"] for e in report["ready"]} == {f"{P}#{held}", f"{P}#{parked}"}
        assert _ignored(entries[f"{P}#{held}"]) == {("claim", STRANGER), ("lock", STRANGER)}
        assert _ignored(entries[f"{P}#{parked}"]) == {("failed", GUEST), ("lock", GUEST)}
        [waits] = [r for r in entries[f"{P}#{gated}"]["reasons"]
                   if r["kind"] == "awaiting_approval"]
        assert waits["gate"] == "deploy"  # the forged approvals answered nothing
        assert _ignored(entries[f"{P}#{gated}"]) == {("answer", STRANGER), ("answer", GUEST)}
        work = _jr2(fake, tmp_path, "work", f"gitlab:{P}", "--label", "agent", *limits,
                    "--max-attempts", "3", "--write-spacing", "0.001", "--", "true")
        assert work.returncode == 3, work.stderr  # only the gated item is left: it waits
        assert fake.issue(P, held)["state"] == "closed"
        assert fake.issue(P, parked)["state"] == "closed"
        assert fake.issue(P, gated)["state"] == "opened"
        for who in (STRANGER, GUEST):
            warned = [ln for ln in work.stderr.splitlines() if f"markers by {who} " in ln]
            assert len(warned) == 1, work.stderr
    finally:
        fake.stop()
