"""Findings of the session-4 review of #18 (review18) in the GitLab plugin."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter
from test_gitlab_deltas import reader_of, shape

from jr2_sources import compute_ready_set


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    f = FakeGitLab().start()
    try:
        yield f
    finally:
        f.stop()


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
        full = make_adapter(fake.url, label=["agent"])
        try:
            want = shape(compute_ready_set(full.snapshot(), now=datetime.now(UTC)))
        finally:
            full.close()
        assert want["ready"] == [] and want["blocked"] == [("g/p#2", True)]
        assert shape(reader.last) == want
    finally:
        adapter.close()
