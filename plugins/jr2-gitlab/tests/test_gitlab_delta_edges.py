"""Deltas at their edges in the GitLab plugin: blockers outside the filter, late direct reads."""

from __future__ import annotations

from typing import Any

from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter
from test_gitlab_deltas import full_shape, hook, reader_of, shape


def test_a_blocker_outside_the_label_filter_moved_to_another_project_still_blocks(
        fake: FakeGitLab) -> None:
    """As `test_a_blocker_moved_to_another_project_still_blocks_its_dependents` (927de98),
    with the blocker outside the pool's `--label` filter: a person's issue that blocks the
    pool's. The delta lists every updated issue (no label filter), sees the original closed
    and, since it is not in `open_iids` (listed issues only), takes it for done: the
    dependent starts while its blocker (moved, open) is still to do; the full reading keeps
    it blocked."""
    fake.project("g/other")
    blocker = fake.add_issue("g/p", "a person's blocker")
    blocked = fake.add_issue("g/p", "blocked", labels=["agent"])
    fake.block(("g/p", blocker), ("g/p", blocked))
    fake.advance(60)
    adapter = make_adapter(fake.url, label=["agent"])
    try:
        reader = reader_of(adapter)
        reader.read().ready.close()
        assert reader.last is not None
        assert shape(reader.last)["blocked"] == [("g/p#2", True)]
        fake.move_issue("g/p", blocker, "g/other")
        reader.read().ready.close()
        want = full_shape(fake.url, label=["agent"])
        assert want["ready"] == [] and want["blocked"] == [("g/p#2", True)]
        assert shape(reader.last) == want
    finally:
        adapter.close()


def test_an_issue_read_directly_late_in_a_delta_does_not_move_the_window_past_the_list(
        fake: FakeGitLab, monkeypatch: Any) -> None:
    """Mutation check of f23f139 on GitLab (`GitLabChanges._take(listed=False)`), which no
    GitLab test covered: the GitHub test's scenario. An issue a webhook named is read directly
    after the list; a slow read (a `Retry-After` wait) sees it updated later than anything the
    list covered, and moving the watermark to it would skip the issue closed meanwhile."""
    quiet = fake.add_issue("g/p", "changes while the delta waits")
    marked = fake.add_issue("g/p", "named by a webhook")
    fake.advance(3600)
    adapter = make_adapter(fake.url)
    try:
        reader = reader_of(adapter)
        reader.read().ready.close()
        assert reader.last is not None
        assert [iid for iid, _ in shape(reader.last)["ready"]] == ["g/p#1", "g/p#2"]
        hook(adapter, marked)
        client = adapter.reader.client
        inner = client.get

        def slow_get(path: str, params: Any = None, **kw: Any) -> Any:
            if path.endswith(f"/issues/{marked}"):  # the list was read; then a long wait
                fake.advance(15)
                fake.close_issue("g/p", quiet)  # updated 15 s after the list was read
                fake.advance(15)
                fake.set_labels("g/p", marked, ["seen"])  # 30 s after
            return inner(path, params, **kw)

        monkeypatch.setattr(client, "get", slow_get)
        reader.read().ready.close()  # the marked issue, read directly
        monkeypatch.setattr(client, "get", inner)
        reader.read().ready.close()  # the next delta must still list the issue closed meanwhile
        want = full_shape(fake.url)
        assert [iid for iid, _ in want["ready"]] == ["g/p#2"]
        assert shape(reader.last) == want
    finally:
        adapter.close()
