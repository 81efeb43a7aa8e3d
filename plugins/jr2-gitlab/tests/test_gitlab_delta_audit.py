"""Adversarial checks of GitLab deltas (`jr2_gitlab/delta.py`) against what GitLab itself does,
each compared with a full reading: a delta must neither miss nor invent work."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter

from jr2_sources import compute_ready_set
from jr2_sources.deltas import ReadyReader
from jr2_sources.readyset import ReadySet


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    f = FakeGitLab().start()
    try:
        yield f
    finally:
        f.stop()


def _shape(rs: ReadySet) -> dict[str, list[str]]:
    return {"ready": sorted(e.item.id for e in rs.ready),
            "blocked": sorted(e.item.id for e in rs.blocked)}


def test_a_blocker_moved_to_another_project_still_blocks_its_dependents(
        fake: FakeGitLab) -> None:
    """Moving an issue closes the original (`moved_to_id` names the new one) and its links
    follow the new, open issue without touching the issue it blocks. The delta sees only the
    original closing: taking that for "done" would start the dependent while its blocker is
    still open, where a full reading (the dependent's links) keeps it blocked."""
    fake.project("g/other")
    blocker = fake.add_issue("g/p", "blocker")
    blocked = fake.add_issue("g/p", "blocked")
    fake.block(("g/p", blocker), ("g/p", blocked))
    fake.advance(60)  # the links' notes are old news by the first reading
    adapter = make_adapter(fake.url)
    try:
        reader = ReadyReader(adapter.snapshot, adapter.changes, children_block=True,
                             clock=time.time, resync_every=None)
        reader.read().ready.close()
        assert reader.last is not None and _shape(reader.last)["blocked"] == ["g/p#2"]
        fake.move_issue("g/p", blocker, "g/other")
        reader.read().ready.close()
        full = make_adapter(fake.url)
        try:
            want = _shape(compute_ready_set(full.snapshot(), now=datetime.now(UTC)))
        finally:
            full.close()
        assert want == {"ready": [], "blocked": ["g/p#2"]}
        assert _shape(reader.last) == want
    finally:
        adapter.close()


def test_a_claim_rechecks_the_scope_and_keeps_nothing_on_an_issue_outside_it(
        fake: FakeGitLab) -> None:
    """The claim reads the issue once it has won (`still_to_do`); that read judges the
    scope too, so an issue the label filter stopped selecting since the reading the pool
    chose it from (a change a delta may not see: a label renamed or deleted) is lost: no
    claim label, and the claim note is deleted again."""
    n = fake.add_issue("g/p", "agent work", labels=["agent"])
    adapter = make_adapter(fake.url, label=["agent"])
    try:
        (item,) = adapter.snapshot().items
        fake.set_labels("g/p", n, ["other"])
        assert adapter.claim(item, "pool-1", 60) is False
        issue = fake.issue("g/p", n)
        assert issue["labels"] == ["other"]
        assert [x for x in issue["notes"] if not x["system"]] == []
    finally:
        adapter.close()
