"""The dashboard issue on GitHub, end to end against the fake GitHub: `jr2 dashboard` and
`jr2 work --dashboard N` (jr2_sources/trackers/github/board.py,
jr2_sources/capabilities/dashboard/)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gh_helpers import make_adapter
from gh_openapi import request_problems, response_problems

from jr2_sources.capabilities.dashboard.body import END, START, split, ticks
from jr2_sources.capabilities.dashboard.command import DashboardLoop
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.capabilities.webhooks import Verdict
from jr2_sources.readyset import compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub

JR2 = [sys.executable, "-m", "jr2_core"]
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]
BOARD = "/repos/o/r/issues/4"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    server = FakeGitHub(capture=True).start()
    server.next_number.setdefault("o/r", 1)
    try:
        yield server
    finally:
        server.stop()


def env_for(fake: FakeGitHub, tmp: Path) -> dict[str, str]:
    return dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x",
                JR2_STATE_DIR=str(tmp / ".jr2"))


def jr2(fake: FakeGitHub, tmp: Path, *args: str, timeout: float = 90
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*JR2, *args], cwd=tmp, env=env_for(fake, tmp), capture_output=True,
                          text=True, timeout=timeout)


def seed(fake: FakeGitHub, board_author: str = "octocat") -> None:
    """#1 ready, #2 failed, #3 waits on #1 (all labelled agent), #4 the dashboard."""
    fake.add_issue("o/r", "Ready one", labels=["agent"])
    fake.add_issue("o/r", "Broke", labels=["agent", "jr2:failed"])
    fake.add_issue("o/r", "Waits", labels=["agent"])
    fake.add_dependency("o/r", 3, 1)
    fake.add_issue("o/r", "Dashboard", "Our board: tick a box to act.\n")
    fake.issue("o/r", 4).author = board_author


def patches(fake: FakeGitHub, path: str = BOARD) -> list[dict[str, Any]]:
    return [e for e in fake.requests("PATCH", f"^{path}$")]


def writes_elsewhere(fake: FakeGitHub) -> list[tuple[str, str]]:
    return [(e["method"], e["path"]) for e in fake.log
            if e["method"] != "GET" and e["path"] != BOARD]


def tick(fake: FakeGitHub, item: str) -> None:
    """A person ticks the retry box of `item` in the dashboard's body."""
    issue = fake.issue("o/r", 4)
    key = f"<!-- jr2:retry {item.encode().hex()} -->"
    lines = issue.body.splitlines(keepends=True)
    hit = [i for i, line in enumerate(lines) if line.rstrip().endswith(key)]
    assert hit, issue.body
    lines[hit[0]] = lines[hit[0]].replace("- [ ]", "- [x]", 1)
    with fake.lock:
        issue.body = "".join(lines)
        fake._touch(issue)


def dashboard_cmd(fake: FakeGitHub, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return jr2(fake, tmp, "dashboard", "github:o/r", "--label", "agent", "--issue", "4",
               *FAST, *extra)


def test_jr2_dashboard_writes_once_and_not_again_while_nothing_changed(
        gh: FakeGitHub, tmp_path: Path) -> None:
    seed(gh)
    first = dashboard_cmd(gh, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "written" in first.stderr
    body = gh.issue("o/r", 4).body
    section = split(body).section or ""
    assert "### Failed (1)" in section and "### Ready (1)" in section and "`o/r#4`" not in section
    for _ in range(2):
        again = dashboard_cmd(gh, tmp_path)
        assert again.returncode == 0 and "unchanged" in again.stderr, again.stderr
    assert len(patches(gh)) == 1 and gh.issue("o/r", 4).body == body
    assert writes_elsewhere(gh) == []  # read-only on the backlog's items


def test_text_a_person_wrote_outside_the_section_survives(gh: FakeGitHub,
                                                           tmp_path: Path) -> None:
    seed(gh)
    assert dashboard_cmd(gh, tmp_path).returncode == 0
    issue = gh.issue("o/r", 4)
    section = split(issue.body).section
    before, after = "## Team notes\r\n\n- [ ] a person's own task\n", "\nSigned, a person 🙂\n"
    issue.body = before + START + (section or "") + END + after
    gh.add_issue("o/r", "New work", labels=["agent"])  # the state changes: a rewrite is due
    res = dashboard_cmd(gh, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "written" in res.stderr, res.stderr
    assert issue.body.startswith(before + START) and issue.body.endswith(END + after)
    assert "New work" in (split(issue.body).section or "")


def test_a_person_edit_between_jr2s_read_and_write_is_not_lost(gh: FakeGitHub,
                                                                tmp_path: Path) -> None:
    seed(gh)
    gets = []

    def person(method: str, path: str) -> None:
        if method == "GET" and path == BOARD:
            gets.append(path)
            if len(gets) == 3:  # check(), read(), then the re-read just before the PATCH
                issue = gh.issue("o/r", 4)
                issue.body += "\nAdded by a person while jr2 was rendering.\n"
                gh._touch(issue)

    gh.hooks.append(person)
    res = dashboard_cmd(gh, tmp_path)
    assert res.returncode == 0, res.stderr
    body = gh.issue("o/r", 4).body
    assert body.startswith("Our board: tick a box to act.\n\nAdded by a person while jr2 was "
                           "rendering.\n") and START in body
    assert len(patches(gh)) == 1 and len(gets) == 4


def test_a_retry_tick_clears_the_failed_mark_and_the_next_jr2_work_runs_the_item(
        gh: FakeGitHub, tmp_path: Path) -> None:
    seed(gh)
    assert dashboard_cmd(gh, tmp_path).returncode == 0
    tick(gh, "o/r#2")
    res = dashboard_cmd(gh, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "retried o/r#2" in res.stderr, res.stderr
    assert "jr2:failed" not in gh.issue("o/r", 4 - 2).labels
    drawn = ticks(split(gh.issue("o/r", 4).body).section)
    assert not any(t.ticked for t in drawn) and "o/r#2" not in {t.item_id for t in drawn}
    # once: a second update with the tick consumed acts on nothing
    again = dashboard_cmd(gh, tmp_path, "--write-interval", "10s")
    assert "retried" not in again.stderr
    assert len(gh.requests("DELETE", r"/labels/")) == 1
    work = jr2(gh, tmp_path, "work", "github:o/r", "--label", "agent", *FAST, "--", "true")
    assert work.returncode == 0, work.stderr
    assert gh.issue("o/r", 2).state == "closed" and gh.issue("o/r", 4).state == "open"
    assert gh.comments_of("o/r", 4) == []  # the dashboard issue was never claimed


@pytest.mark.parametrize("author,role", [("stranger", None), ("triager", "triage"),
                                         ("reader", "read")])
def test_an_issue_whose_author_lacks_write_access_is_refused(
        gh: FakeGitHub, tmp_path: Path, author: str, role: str | None) -> None:
    """Who ticks cannot be known through REST, but who can edit the body can: its author and
    the repository's writers and triagers. An author without write access is refused."""
    seed(gh, board_author=author)
    if role is not None:
        gh.permissions[author] = role
    res = dashboard_cmd(gh, tmp_path)
    assert res.returncode == 2 and "no write access" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert patches(gh) == [] and writes_elsewhere(gh) == []


def test_an_issue_by_a_maintainer_or_an_app_is_accepted(gh: FakeGitHub, tmp_path: Path) -> None:
    seed(gh, board_author="maint")
    gh.permissions["maint"] = "maintain"
    assert dashboard_cmd(gh, tmp_path).returncode == 0
    gh.add_issue("o/r", "App's board")
    gh.issue("o/r", 5).author, gh.issue("o/r", 5).author_type = "jr2-app[bot]", "Bot"
    res = jr2(gh, tmp_path, "dashboard", "github:o/r", "--label", "agent", "--issue", "5")
    assert res.returncode == 0, res.stderr


def test_the_dashboard_issue_cannot_be_one_of_the_backlogs_items(gh: FakeGitHub,
                                                                  tmp_path: Path) -> None:
    seed(gh)
    for cmd in (["dashboard", "github:o/r", "--label", "agent", "--issue", "1"],
                ["work", "github:o/r", "--label", "agent", "--dashboard", "1", "--", "true"]):
        res = jr2(gh, tmp_path, *cmd)
        assert res.returncode == 2 and "one of the backlog's own items" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    assert [e for e in gh.log if e["method"] != "GET"] == []  # nothing claimed or written


def test_jr2_work_dashboard_updates_while_the_pool_runs_and_at_the_end(
        gh: FakeGitHub, tmp_path: Path) -> None:
    """Writes spaced by --dashboard-interval, the first while items are in progress, the last
    after the run; and the dashboard issue is never offered, even once a person gives it the
    backlog's label mid-run."""
    for n in range(3):
        gh.add_issue("o/r", f"Work {n + 1}", labels=["agent"])
    gh.add_issue("o/r", "Dashboard")

    def person(method: str, path: str) -> None:
        if method == "PATCH" and path == BOARD and "agent" not in gh.issue("o/r", 4).labels:
            gh.issue("o/r", 4).labels.append("agent")  # after jr2's first write

    gh.hooks.append(person)
    res = jr2(gh, tmp_path, "work", "github:o/r", "--label", "agent", *FAST, "--cap", "2",
              "--dashboard", "4", "--dashboard-interval", "10s", "--", "sleep", "3")
    assert res.returncode == 0, res.stderr
    writes = patches(gh)
    assert len(writes) >= 2, [e["body"] for e in writes]
    times = [e["t"] for e in writes]
    assert min(b - a for a, b in itertools.pairwise(times)) >= 9.9, times
    first, last = writes[0]["body"]["body"], writes[-1]["body"]["body"]
    assert "### In progress (1)" in first or "### In progress (2)" in first, first
    assert "**0 ready, 0 in progress, 0 failed" in last, last
    assert all(gh.issue("o/r", n).state == "closed" for n in (1, 2, 3))
    assert gh.issue("o/r", 4).state == "open" and gh.comments_of("o/r", 4) == []


def test_its_own_edits_never_wake_the_pool_and_a_persons_edit_looks_at_once(
        gh: FakeGitHub) -> None:
    seed(gh)
    adapter = make_adapter(gh.url, label=["agent"])
    board = adapter.dashboard(4)
    dash = Dashboard(board)
    assert dash.update(lambda: compute_ready_set(adapter.snapshot(), now=_now())).wrote
    loop = DashboardLoop(dash, lambda: None, lambda: None)
    receive = loop.receiver(lambda h, b, s: Verdict(200, True, "issues for o/r"))

    def delivery(number: int, body: str) -> tuple[dict[str, str], bytes]:
        payload = {"action": "edited", "issue": {"number": number, "body": body},
                   "repository": {"full_name": "o/r"}}
        return {"X-GitHub-Event": "issues"}, json.dumps(payload).encode()

    own = receive(*delivery(4, gh.issue("o/r", 4).body), None)
    assert (own.wake, loop._poked.is_set()) == (False, False)
    person = receive(*delivery(4, "ticked by a person"), None)
    assert (person.wake, loop._poked.is_set()) == (False, True)
    other = receive(*delivery(1, "an item"), None)
    assert other.wake


def test_what_the_dashboard_sends_and_gets_is_described_by_githubs_openapi(
        gh: FakeGitHub, tmp_path: Path) -> None:
    seed(gh)
    assert dashboard_cmd(gh, tmp_path).returncode == 0
    tick(gh, "o/r#2")
    assert dashboard_cmd(gh, tmp_path, "--write-interval", "10s").returncode == 0
    sent = [e for e in gh.log if e["path"].startswith(BOARD) or "/collaborators/" in e["path"]
            or "/labels/" in e["path"]]
    assert {e["method"] for e in sent} == {"GET", "PATCH", "DELETE"}
    problems = [p for e in sent
                for p in [*request_problems("api.github.com", e["method"], e["path"],
                                            e["query"], e["body"]),
                          *([] if e["status"] == 304 else response_problems(
                              "api.github.com", e["method"], e["path"], e["status"],
                              e["data"]))]]
    assert problems == []


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def test_ctrl_c_ends_jr2_work_dashboard_at_once_without_waiting_for_the_interval(
        gh: FakeGitHub, tmp_path: Path) -> None:
    import signal
    import time

    gh.add_issue("o/r", "Work", labels=["agent"])
    gh.add_issue("o/r", "Dashboard")
    proc = subprocess.Popen([*JR2, "work", "github:o/r", "--label", "agent", *FAST, "--wait",
                             "--dashboard", "2", "--dashboard-interval", "1m", "--", "true"],
                            cwd=tmp_path, env=env_for(gh, tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 30
        while not (gh.issue("o/r", 1).state == "closed" and patches(gh, "/repos/o/r/issues/2")):
            assert time.monotonic() < end and proc.poll() is None
            time.sleep(0.1)
        asked = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, err
        assert time.monotonic() - asked < 10 and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


GATED_WORKER = r'''
import os, sys
with open(sys.argv[1], "a") as out:
    out.write(f"{os.environ['JR2_ITEM_ID']} {os.environ.get('JR2_GATE_DEPLOY', '-')}\n")
if os.environ["JR2_ITEM_ID"] == "o/r#1" and "JR2_GATE_DEPLOY" not in os.environ:
    print("jr2: await-approval deploy ship it?")
    sys.exit(79)
'''


def test_an_approve_tick_answers_the_gate_and_the_next_jr2_work_runs_the_item_approved(
        gh: FakeGitHub, tmp_path: Path) -> None:
    """`jr2 work --gate deploy` parks #1; `jr2 dashboard` draws its approve box; a person ticks
    it; the next update answers the gate (a `jr2:answer` comment naming the dashboard); the next
    `jr2 work` runs #1 with `JR2_GATE_DEPLOY=approved`, then #3 that waited on it."""
    seed(gh)
    (tmp_path / "worker.py").write_text(GATED_WORKER)
    runs = tmp_path / "runs"
    work = ["work", "github:o/r", "--label", "agent", "--gate", "deploy", *FAST, "--",
            sys.executable, str(tmp_path / "worker.py"), str(runs)]
    jr2(gh, tmp_path, *work)
    assert runs.read_text().splitlines() == ["o/r#1 -"]
    assert "jr2:awaiting-approval" in gh.issue("o/r", 1).labels
    first = dashboard_cmd(gh, tmp_path)
    assert first.returncode == 0, first.stderr
    boxes = [t for t in ticks(split(gh.issue("o/r", 4).body).section) if t.kind == "approve"]
    assert [(t.item_id, t.gate, t.ticked) for t in boxes] == [("o/r#1", "deploy", False)]
    issue = gh.issue("o/r", 4)
    key = f"<!-- jr2:approve {b'o/r#1'.hex()} {b'deploy'.hex()} -->"
    with gh.lock:  # a person ticks the approve box
        issue.body = "".join(line.replace("- [ ]", "- [x]", 1) if key in line else line
                             for line in issue.body.splitlines(keepends=True))
        gh._touch(issue)
    res = dashboard_cmd(gh, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "approved deploy for o/r#1" in res.stderr, res.stderr
    answers = [c for c in gh.comments_of("o/r", 1) if "jr2:answer" in c.body]
    assert len(answers) == 1 and "a tick on" in answers[0].body
    assert not any(t.kind == "approve" for t in ticks(split(gh.issue("o/r", 4).body).section))
    again = dashboard_cmd(gh, tmp_path, "--write-interval", "10s")  # the tick is consumed
    assert "approved" not in again.stderr
    done = jr2(gh, tmp_path, *work)
    assert done.returncode == 3 and "2 done" in done.stderr, done.stderr  # #2 stays failed
    assert runs.read_text().splitlines() == ["o/r#1 -", "o/r#1 approved", "o/r#3 -"]
    assert gh.issue("o/r", 1).state == "closed"
    assert "jr2:awaiting-approval" not in gh.issue("o/r", 1).labels
    assert gh.comments_of("o/r", 4) == []  # the dashboard issue was never claimed
