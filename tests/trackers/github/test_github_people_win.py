"""People win, through `jr2 work` against the fake GitHub: a person who closes an issue as not
planned while its worker runs stops that worker within `poll_every`, and the issue stays closed
as not planned (jr2 does not close it again as completed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from jr2_sources.testing.fakes.github_server import FakeGitHub

JR2 = [sys.executable, "-m", "jr2_core"]
POLL = 1.0


def test_a_person_closing_an_issue_as_not_planned_mid_run_wins(fake: FakeGitHub,
                                                               tmp_path: Path) -> None:
    fake.add_issue("o/r", "Long one")
    fake.add_issue("o/r", "Quick one")
    script = (f'if [ "$JR2_ITEM_ID" = "o/r#1" ]; then touch {tmp_path}/started; '
              f'trap "date +%s.%N > {tmp_path}/stopped; exit 143" TERM; '
              'sleep 60 & wait $!; fi')
    env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x",
               JR2_STATE_DIR=str(tmp_path / ".jr2"))
    proc = subprocess.Popen([*JR2, "work", "github:o/r", "--cap", "2", "--write-spacing",
                             "0.001", "--poll-every", str(POLL), "--", "sh", "-c", script],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert time.monotonic() < end and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        fake.close_issue("o/r", 1, "not_planned")
        closed_at = time.time()
        fake.clear_log()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    stopped_at = float((tmp_path / "stopped").read_text())
    print(f"closed as not planned; worker stopped {stopped_at - closed_at:.2f} s later "
          f"(poll_every {POLL} s)")
    assert stopped_at - closed_at < POLL + 0.5, (stopped_at - closed_at, err)
    issue = fake.issue("o/r", 1)
    assert issue.state == "closed" and issue.state_reason == "not_planned"
    patched = [r for r in fake.requests("PATCH") if r["path"].endswith("/issues/1")]
    assert patched == [], patched  # never closed again, never reopened
    assert "jr2:failed" not in issue.labels and "jr2:claimed" not in issue.labels
    assert "stopped o/r#1: a person took it back" in err
    assert fake.issue("o/r", 2).state == "closed"  # the other item went on


def test_marked_issues_outside_the_filter_are_listed_out_of_scope(fake: FakeGitHub) -> None:
    from gh_helpers import make_adapter

    fake.add_issue("o/r", "Ours", labels=["agent"])
    fake.add_issue("o/r", "Another scope's failure", labels=["ops", "jr2:failed"])
    fake.add_issue("o/r", "Excluded, with an old claim", labels=["agent", "wip", "jr2:claimed"])
    fake.add_issue("o/r", "Not marked, not ours", labels=["ops"])
    snap = make_adapter(fake.url, label=["agent"], exclude_label=["wip"]).snapshot()
    assert {it.id: it.in_scope for it in snap.items} == {
        "o/r#1": True, "o/r#2": False, "o/r#3": False}
