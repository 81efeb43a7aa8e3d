"""The dashboard issue on GitLab through the plugin (jr2_gitlab/board.py), end to end against
the fake GitLab: `jr2 dashboard gitlab:...` and `jr2 work --dashboard N` write the issue's
description, keep a person's text, act on a retry tick, refuse an author who may not edit
issues and an issue inside the backlog's filter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_gitlab import TOKEN, FakeGitLab
from gitlab_helpers import make_adapter

from jr2_sources.capabilities.dashboard.body import END, START, split, ticks
from jr2_sources.capabilities.dashboard.command import DashboardLoop
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.readyset import compute_ready_set

P = "g/p"
BOARD = "/api/v4/projects/g%2Fp/issues/4"
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]
DOCS = Path(__file__).resolve().parents[3] / "fixtures" / "gitlab"


def seed(fake: FakeGitLab, author: str = "jr2-bot") -> None:
    """#1 ready, #2 failed, #3 waits on #1 (all labelled agent), #4 the dashboard."""
    fake.add_issue(P, "Ready one", labels=["agent"])
    fake.add_issue(P, "Broke", labels=["agent", "jr2:failed"])
    fake.add_issue(P, "Waits", labels=["agent"])
    fake.block((P, 1), (P, 3))
    fake.add_issue(P, "Dashboard", description="Our board: tick a box to act.\n", author=author)


def jr2(fake: FakeGitLab, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GITLAB_URL=fake.url, GITLAB_TOKEN=TOKEN,
               JR2_STATE_DIR=str(tmp / ".jr2"))
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=90)


def dashboard(fake: FakeGitLab, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return jr2(fake, tmp, "dashboard", f"gitlab:{P}", "--label", "agent", "--issue", "4",
               *FAST, *extra)


def puts(fake: FakeGitLab, path: str = BOARD) -> int:
    return sum(1 for m, p, _ in fake.requests if m == "PUT" and p == path)


def writes_elsewhere(fake: FakeGitLab) -> list[tuple[str, str]]:
    return [(m, p) for m, p, _ in fake.requests
            if m != "GET" and p != BOARD and p != "/api/graphql"]


def description(fake: FakeGitLab) -> str:
    return str(fake.issue(P, 4)["description"])


def tick(fake: FakeGitLab, item: str) -> None:
    """A person ticks the retry box of `item` in the dashboard's description."""
    issue = fake.issue(P, 4)
    key = f"<!-- jr2:retry {item.encode().hex()} -->"
    lines = str(issue["description"]).splitlines(keepends=True)
    hit = [i for i, line in enumerate(lines) if line.rstrip().endswith(key)]
    assert hit, issue["description"]
    lines[hit[0]] = lines[hit[0]].replace("- [ ]", "- [x]", 1)
    with fake.lock:
        issue["description"] = "".join(lines)
        issue["updated"] = fake.now()


def test_written_once_and_not_rewritten_while_nothing_changed(fake: FakeGitLab,
                                                              tmp_path: Path) -> None:
    seed(fake)
    first = dashboard(fake, tmp_path)
    assert first.returncode == 0 and "written" in first.stderr, first.stderr
    body = description(fake)
    section = split(body).section or ""
    assert "### Failed (1)" in section and "### Ready (1)" in section, section
    assert "`g/p#4`" not in section and body.startswith("Our board: tick a box to act.\n")
    for _ in range(2):
        again = dashboard(fake, tmp_path)
        assert again.returncode == 0 and "unchanged" in again.stderr, again.stderr
    assert puts(fake) == 1 and description(fake) == body
    assert writes_elsewhere(fake) == []  # read-only on the backlog's items


def test_text_a_person_wrote_outside_the_markers_is_kept(fake: FakeGitLab,
                                                         tmp_path: Path) -> None:
    seed(fake)
    assert dashboard(fake, tmp_path).returncode == 0
    issue = fake.issue(P, 4)
    before, after = "## Team notes\r\n\n- [ ] a person's own task\n", "\nSigned, a person 🙂\n"
    issue["description"] = before + START + (split(description(fake)).section or "") + END + after
    fake.add_issue(P, "New work", labels=["agent"])  # the Ready-set changes: a rewrite is due
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "written" in res.stderr, res.stderr
    assert description(fake).startswith(before + START)
    assert description(fake).endswith(END + after)
    assert "New work" in (split(description(fake)).section or "") and puts(fake) == 2


def test_a_retry_tick_clears_the_failed_label_and_the_item_runs_again(
        fake: FakeGitLab, tmp_path: Path) -> None:
    seed(fake)
    assert dashboard(fake, tmp_path).returncode == 0
    tick(fake, "g/p#2")
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "retried g/p#2" in res.stderr, res.stderr
    assert "jr2:failed" not in fake.issue(P, 2)["labels"]
    drawn = ticks(split(description(fake)).section)
    assert not any(t.ticked for t in drawn) and "g/p#2" not in {t.item_id for t in drawn}
    again = dashboard(fake, tmp_path, "--write-interval", "10s")  # the tick is consumed once
    assert again.returncode == 0 and "retried" not in again.stderr, again.stderr
    assert puts(fake, "/api/v4/projects/g%2Fp/issues/2") == 1  # the one remove_labels
    work = jr2(fake, tmp_path, "work", f"gitlab:{P}", "--label", "agent", *FAST, "--", "true")
    assert work.returncode == 0, work.stderr
    assert fake.issue(P, 2)["state"] == "closed" and fake.issue(P, 4)["state"] == "opened"
    assert fake.issue(P, 4)["notes"] == []  # the dashboard issue was never claimed


@pytest.mark.parametrize("level", [None, 5, 10], ids=["not-a-member", "minimal", "guest"])
def test_an_author_who_may_not_edit_issues_is_refused_in_one_line(
        fake: FakeGitLab, tmp_path: Path, level: int | None) -> None:
    """GitLab lets an issue's author edit its description whatever their role; anyone else
    needs Planner or more. An author below Planner is refused."""
    fake.add_user("visitor", level)
    seed(fake, author="visitor")
    res = dashboard(fake, tmp_path)
    assert res.returncode == 2 and "may not edit g/p's issues" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert puts(fake) == 0 and writes_elsewhere(fake) == []
    members = [p for m, p, _ in fake.requests if "/members/all/" in p]
    assert members == [f"/api/v4/projects/g%2Fp/members/all/{fake.users['visitor']['id']}"]


@pytest.mark.parametrize("level", [15, 20, 30])
def test_an_author_who_may_edit_issues_is_accepted(fake: FakeGitLab, tmp_path: Path,
                                                   level: int) -> None:
    fake.add_user("planner", level)
    seed(fake, author="planner")
    res = dashboard(fake, tmp_path)
    assert res.returncode == 0 and puts(fake) == 1, res.stderr


def test_the_dashboard_issue_inside_the_filter_is_refused(fake: FakeGitLab,
                                                          tmp_path: Path) -> None:
    seed(fake)
    for cmd in (["dashboard", f"gitlab:{P}", "--label", "agent", "--issue", "1"],
                ["work", f"gitlab:{P}", "--label", "agent", "--dashboard", "1", "--", "true"]):
        res = jr2(fake, tmp_path, *cmd)
        assert res.returncode == 2 and "one of the backlog's own items" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    assert writes_elsewhere(fake) == [] and puts(fake) == 0  # nothing claimed or written


def test_jr2_work_dashboard_writes_the_description_and_never_offers_it(
        fake: FakeGitLab, tmp_path: Path) -> None:
    fake.add_issue(P, "Work", labels=["agent"])
    fake.add_issue(P, "Dashboard")
    res = jr2(fake, tmp_path, "work", f"gitlab:{P}", "--label", "agent", *FAST,
              "--dashboard", "2", "--dashboard-interval", "10s", "--", "true")
    assert res.returncode == 0, res.stderr
    assert fake.issue(P, 1)["state"] == "closed" and fake.issue(P, 2)["state"] == "opened"
    last = split(str(fake.issue(P, 2)["description"])).section or ""
    assert "**0 ready, 0 in progress, 0 failed" in last, last
    assert fake.issue(P, 2)["notes"] == []


def test_own_edits_and_a_persons_edits_are_told_apart(fake: FakeGitLab) -> None:
    """An Issue Hook (GitLab's documented payload) about the dashboard issue: jr2's own last
    write is `own`, any other description `person`; another issue or project is not about it."""
    seed(fake)
    adapter = make_adapter(fake.url, project=P, label=["agent"])
    board = adapter.dashboard(4)
    board.check()
    dash = Dashboard(board)
    assert dash.update(lambda: compute_ready_set(adapter.snapshot(), now=_now())).wrote
    hook = json.loads((DOCS / "webhooks" / "issue.json").read_text())

    def delivery(iid: int, text: str, project: str = P) -> bytes:
        payload: dict[str, Any] = json.loads(json.dumps(hook))
        payload["project"]["path_with_namespace"] = project
        payload["object_attributes"].update(iid=iid, description=text)
        return json.dumps(payload).encode()

    headers = {"X-Gitlab-Event": "Issue Hook"}
    assert board.about(headers, delivery(4, description(fake))) == "own"
    assert board.about(headers, delivery(4, "ticked by a person")) == "person"
    assert board.about(headers, delivery(1, description(fake))) is None
    assert board.about(headers, delivery(4, description(fake), "other/p")) is None
    assert board.about(headers, b"not json") is None
    # through `jr2 work --dashboard`'s receiver: its own edit neither wakes the pool nor the
    # dashboard; a person's edit makes the dashboard look at once, without waking the pool
    loop = DashboardLoop(dash, lambda: None, lambda: None)
    receive = loop.receiver(adapter.webhook)
    own = receive(headers, delivery(4, description(fake)), None)
    assert (own.wake, loop._poked.is_set()) == (False, False)
    person = receive({**headers, "Idempotency-Key": "2"}, delivery(4, "a person's tick"), None)
    assert (person.wake, loop._poked.is_set()) == (False, True)
    assert receive({**headers, "Idempotency-Key": "3"}, delivery(1, "an item"), None).wake


def test_the_description_is_built_to_gitlabs_limit_not_githubs(fake: FakeGitLab) -> None:
    """GitLab documents `description` as "Limited to 1,048,576 characters": a dashboard of
    1,200 ready items (about 100,000 characters) is written whole, where GitHub's 65,536 would
    cut the list short."""
    seed(fake)
    for n in range(1_200):
        fake.add_issue(P, f"Ready item number {n:04d} with a title of some length",
                       labels=["agent"])
    adapter = make_adapter(fake.url, project=P, label=["agent"])
    board = adapter.dashboard(4)
    board.check()
    dash = Dashboard(board)
    assert dash.limit == 1_048_576
    assert dash.update(lambda: compute_ready_set(adapter.snapshot(), now=_now())).wrote
    text = description(fake)
    assert 65_536 < len(text) <= 1_048_576
    section = split(text).section or ""
    assert "### Ready (1,201)" in section and "more |" not in section and "… and" not in section
    assert "Ready item number 1199" in section


def test_a_description_over_gitlabs_limit_is_never_sent(fake: FakeGitLab) -> None:
    """With a person's text leaving no room under GitLab's limit, nothing is sent and the
    update says so with GitLab's limit; the fake refuses a longer description as GitLab does."""
    seed(fake)
    fake.issue(P, 4)["description"] = "x" * (1_048_576 - 40)
    adapter = make_adapter(fake.url, project=P, label=["agent"])
    board = adapter.dashboard(4)
    step = Dashboard(board).update(lambda: compute_ready_set(adapter.snapshot(), now=_now()))
    assert not step.wrote and step.why.startswith("full")
    assert "GitLab's limit on an issue description: 1,048,576 characters" in step.why
    assert puts(fake) == 0
    with pytest.raises(Exception, match="400"):
        adapter.client.write("PUT", BOARD.removeprefix("/api/v4"),
                             {"description": "y" * 1_048_577}, need="edit")


def test_the_write_interval_floor_cites_gitlab_not_github(fake: FakeGitLab,
                                                          tmp_path: Path) -> None:
    seed(fake)
    for args in (["dashboard", f"gitlab:{P}", "--label", "agent", "--issue", "4",
                  "--write-interval", "5s", *FAST],
                 ["work", f"gitlab:{P}", "--label", "agent", "--dashboard", "4",
                  "--dashboard-interval", "5s", *FAST, "--", "true"]):
        res = jr2(fake, tmp_path, *args)
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "at least 10s" in lines[0] and "GitLab" in lines[0], lines
        assert "GitHub" not in res.stderr
    assert puts(fake) == 0 and writes_elsewhere(fake) == []


def test_the_fakes_member_answer_holds_only_documented_fields(fake: FakeGitLab) -> None:
    documented = json.loads((DOCS / "api" / "member_all.json").read_text())
    user = fake.add_user("dev", 30)
    adapter = make_adapter(fake.url, project=P)
    fake.project(P)
    got = adapter.client.get(f"/projects/g%2Fp/members/all/{user['id']}", need="read").data
    assert set(got) <= set(documented) and got["access_level"] == 30
    assert isinstance(documented["access_level"], int) and "id" in documented


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)
