"""Two pools reading the same feedback at the same instant against the fake GitHub: each may
post a `jr2:feedback` rerun marker before seeing the other's, but only the first one's pool
offers the issue again (the other deletes its copy, even when it acts long after the rerun
ran), and a copy left in a thread never hands the same feedback to a later claim."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from jr2_core import Outcome
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.kit.claims import Marker
from jr2_sources.readyset import SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.client import GitHubClient
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.feedback import pending
from jr2_sources.trackers.github.tracker import GitHubTracker


def pool(fake: FakeGitHub, state: Path) -> GitHubTracker:
    config = GitHubConfig(target="o/r", write_spacing=0.001, done_when="merged",
                          on_success="review")
    client = GitHubClient(fake.url, SecretStr("x"), label="github:o/r", write_spacing=0.001)
    adapter = GitHubTracker(config, SourceEnv(state_dir=state), client=client)
    adapter.start_feedback(3, here=False)
    return adapter


def reruns(fake: FakeGitHub) -> list[str]:
    return [c.body for c in fake.comments_of("o/r", 1) if c.body.startswith("<!-- jr2:feedback")
            and '"rerun"' in c.body]


def test_a_slow_pools_copy_of_the_feedback_offers_nothing_after_the_rerun_ran(
        fake: FakeGitHub, tmp_path: Path) -> None:
    worker = pool(fake, tmp_path / "w")
    number = fake.add_issue("o/r", "Change")
    assert worker.claim(SnapshotItem(id="o/r#1", title="x"), "w", 600)
    pr = fake.pulls.open_pr("o/r", "jr2/issue-1")
    worker.finish("o/r#1", "w", Outcome(status="done"), Attempt(1))
    fake.pulls.add_check("o/r", fake.pulls.pull("o/r", pr).head_sha, conclusion="failure")
    fast, slow = pool(fake, tmp_path / "a"), pool(fake, tmp_path / "b")
    slow.reader.snapshot(False)  # the slow pool judged the red check ...
    assert slow.feedback_loop is not None and number in slow.feedback_loop.due
    before = slow.reader.read_comments(number)  # ... and read the thread: no rerun marker yet
    fast.snapshot()  # the fast pool records the feedback and offers the issue again
    assert len(reruns(fake)) == 1 and fake.issue("o/r", 1).labels == []
    item = SnapshotItem(id="o/r#1", title="x")
    assert worker.claim(item, "w", 600) and item.extra["feedback"]["checks"]  # the rerun
    fake.pulls.push("o/r", pr)  # its fix
    worker.finish("o/r#1", "w", Outcome(status="done"), Attempt(2))
    assert fake.issue("o/r", 1).labels == ["jr2:in-review"]
    read = slow.reader.read_comments
    calls = iter([before])
    slow.reader.read_comments = lambda n: next(calls, None) or read(n)  # type: ignore[method-assign]
    slow.feedback_loop.act()  # the slow pool acts on what it read before the rerun
    assert fake.issue("o/r", 1).labels == ["jr2:in-review"]  # not offered again
    assert len(reruns(fake)) == 1  # its copy deleted


def marker(cid: int, kind: str, **fields: object) -> Marker:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Marker(kind, dict(fields), cid, at, at)  # type: ignore[arg-type]


def test_a_copy_of_an_answered_rerun_is_not_pending() -> None:
    first = marker(10, "feedback", rerun="abc:1", head="abc", pr=2, attempt=2)
    copy = marker(12, "feedback", rerun="abc:1", head="abc", pr=2, attempt=2)
    answered = marker(11, "done", attempts=2)  # the rerun's claim, posted before the copy
    assert pending([first, answered, copy]) is None
    assert pending([first, copy]) is first  # both before any claim: one rerun, the first
    later = marker(13, "feedback", rerun="def:1", head="def", pr=2, attempt=3)
    assert pending([first, answered, copy, later]) is later  # new feedback is new
