"""Adversarial checks of GitHub deltas (`trackers/github/delta.py`) against what GitHub itself
does, each compared with a full reading: a delta must neither miss nor invent work."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gh_helpers import make_adapter

from jr2_sources.capabilities.deltas.reader import ReadyReader
from jr2_sources.readyset import ReadySet, compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.tracker import GitHubTracker


def _reader(a: GitHubTracker) -> ReadyReader:
    return ReadyReader(a.snapshot, a.changes, children_block=True,
                       clock=lambda: datetime.now(UTC).timestamp(), resync_every=None)


def _shape(rs: ReadySet) -> dict[str, Any]:
    return {"ready": sorted(e.item.id for e in rs.ready),
            "blocked": sorted(e.item.id for e in rs.blocked)}


def _full(fake: FakeGitHub) -> dict[str, Any]:
    fresh = make_adapter(fake.url)
    try:
        return _shape(compute_ready_set(fresh.snapshot(), now=datetime.now(UTC),
                                        children_block=True))
    finally:
        fresh.close()


def test_after_a_repository_rename_a_blocker_closing_releases_its_dependents_and_parent(
        fake: FakeGitHub) -> None:
    """GitHub answers a renamed repository's old name with a 301 and names the new one in
    every object it returns (`repository_url`, `parent_issue_url`: the OpenAPI description's
    issue schema). The delta that sees a blocker close reads what it blocks and its parent:
    those objects name the new repository, and are this repository's issues all the same."""
    hour_ago = fake.now() - 3600  # last updated an hour ago: outside any delta's overlap
    blocker = fake.add_issue("o/r", "blocker", created=hour_ago)
    blocked = fake.add_issue("o/r", "blocked", created=hour_ago)
    parent = fake.add_issue("o/r", "parent", created=hour_ago)
    fake.add_dependency("o/r", blocked, blocker)
    fake.add_sub_issue("o/r", parent, blocker)
    fake.rename_repo("o/r", "o/renamed")
    adapter = make_adapter(fake.url)
    try:
        reader = _reader(adapter)
        reader.read()
        assert _shape(reader.last) == {"ready": ["o/r#1"], "blocked": ["o/r#2", "o/r#3"]}
        fake.close_issue("o/renamed", blocker)
        reader.read()
        assert adapter.reader.changes is not None and adapter.reader.changes.window.last_gap is None
        assert _shape(reader.last) == _full(fake) == {"ready": ["o/r#2", "o/r#3"],
                                                      "blocked": []}
    finally:
        adapter.close()


def test_a_claim_rechecks_the_scope_on_the_issue_it_reads_and_writes_nothing_outside_it(
        fake: FakeGitHub) -> None:
    """A delta cannot see every change of scope: renaming or deleting a label ("Update a
    label", "Delete a label") changes the issues that carry it, and GitHub does not document
    that it moves their `updated_at`, so until the resync a delta may still call an issue in
    scope that the `labels` filter no longer selects. The claim reads the issue itself before
    its first write (`still_to_do`): it must judge the scope there, as the watch does."""
    n = fake.add_issue("o/r", "agent work", labels=["agent"], created=fake.now() - 3600)
    adapter = make_adapter(fake.url, label=["agent"])
    try:
        (item,) = adapter.snapshot().items
        fake.set_labels("o/r", n, ["other"])  # out of the pool's scope since that reading
        fake.clear_log()
        assert adapter.claim(item, "pool-1", 60) is False
        # the issue, read before any write; its thread is empty (`comments: 0`): not listed
        assert [(e["method"], e["path"]) for e in fake.requests()] == [
            ("GET", "/repos/o/r/issues/1")]
        assert fake.comments_of("o/r", n) == [] and fake.issue("o/r", n).labels == ["other"]
    finally:
        adapter.close()


def test_an_issue_read_directly_late_in_a_delta_does_not_move_the_window_past_the_list(
        fake: FakeGitHub, monkeypatch: Any) -> None:
    """The since-window may only move as far as the issues list has been read: an issue read
    directly (a webhook mark, a dependent, a parent) can carry a later `updated_at` than the
    list covered when the delta is slow (a `Retry-After` wait, GitHub's secondary limits ask
    for 60 s), and moving the watermark to it skips what changed meanwhile unlisted."""
    hour_ago = fake.now() - 3600
    quiet = fake.add_issue("o/r", "changes while the delta waits", created=hour_ago)
    marked = fake.add_issue("o/r", "named by a webhook", created=hour_ago)
    adapter = make_adapter(fake.url)
    try:
        reader = _reader(adapter)
        reader.read()
        assert _shape(reader.last)["ready"] == ["o/r#1", "o/r#2"]
        assert adapter.reader.changes is not None
        adapter.reader.changes.window.mark([marked])
        inner = adapter.client.get

        def slow_get(path: str, params: Any = None, **kw: Any) -> Any:
            if path.endswith(f"/issues/{marked}"):  # the list was read; then a long wait
                fake.advance(15)
                fake.close_issue("o/r", quiet)  # updated 15 s after the list was read
                fake.advance(15)
                fake.set_labels("o/r", marked, ["seen"])  # 30 s after
            return inner(path, params, **kw)

        monkeypatch.setattr(adapter.client, "get", slow_get)
        reader.read()  # the marked issue, read directly
        monkeypatch.setattr(adapter.client, "get", inner)
        reader.read()  # the next delta must still list the issue closed meanwhile
        assert _shape(reader.last) == _full(fake) == {"ready": ["o/r#2"], "blocked": []}
    finally:
        adapter.close()


def test_the_pools_own_assignment_never_moves_an_issue_out_of_an_assignee_filter(
        fake: FakeGitHub) -> None:
    """`--assignee none --assign` (take unassigned issues, assign the token's user while
    working): scope is judged ignoring jr2's own marks, its assignee included (ISSUE-NOTES 2),
    so the watch must not stop the pool's own worker because the pool assigned itself; a
    person assigning someone else does take the issue back."""
    n = fake.add_issue("o/r", "unassigned work")
    adapter = make_adapter(fake.url, assignee="none", assign=True)
    try:
        (item,) = adapter.snapshot().items
        assert adapter.claim(item, "pool-1", 60)
        assert fake.issue("o/r", n).assignees == ["jr2-bot"]
        assert adapter.watch([item.id], "pool-1") == {}
        with fake.lock:  # a person adds alice ("Add assignees to an issue")
            fake.issue("o/r", n).assignees.append("alice")
        fake.set_labels("o/r", n, fake.issue("o/r", n).labels)  # and the edit moves updated_at
        assert adapter.watch([item.id], "pool-1") == {
            item.id: "it was moved out of this pool's scope"}
    finally:
        adapter.close()
