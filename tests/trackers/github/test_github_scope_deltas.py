"""Scope and deltas against the stateful fake GitHub: jr2's own assignee, claims found
outside the scope, a person's assignee beside jr2's."""

from __future__ import annotations

from datetime import UTC, datetime

from gh_helpers import make_adapter

from jr2_sources.capabilities.deltas.reader import ReadyReader
from jr2_sources.readyset import compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub


def test_a_released_issue_the_pool_assigned_itself_stays_in_an_assignee_none_scope(
        fake: FakeGitHub) -> None:
    """`--assignee none --assign`: jr2's own assignee is not a person's (ISSUE-NOTES 2). jr2
    never removes its assignee, so an issue released (pool stopped, lease lost) or settled as a
    failure to retry keeps `jr2-bot`; before, the full reading (`assignee=none`, server-side)
    listed it only for jr2's marks, out of scope, and a delta's `selects` said the same: never
    offered again. Now the full reading also lists the issues only jr2 is assigned to, and
    `selects` ignores jr2's login."""
    n = fake.add_issue("o/r", "unassigned work")
    adapter = make_adapter(fake.url, assignee="none", assign=True)
    try:
        reader = ReadyReader(adapter.snapshot, adapter.changes, children_block=True,
                             clock=lambda: datetime.now(UTC).timestamp(), resync_every=None)
        reader.read()
        (entry,) = reader.last.ready
        assert adapter.claim(entry.item, "pool-1", 60)
        assert fake.issue("o/r", n).assignees == ["jr2-bot"]
        adapter.release(entry.item.id, "pool-1")
        reader.read()  # a delta: reads the released issue again (this process wrote to it)
        assert [e.item.id for e in reader.last.ready] == [entry.item.id]
        full = compute_ready_set(adapter.snapshot(), now=datetime.now(UTC), children_block=True)
        assert [e.item.id for e in full.ready] == [entry.item.id]
    finally:
        adapter.close()


def test_an_issue_a_claim_found_outside_the_scope_leaves_the_ready_set_at_the_next_delta(
        fake: FakeGitHub) -> None:
    """Mutation check of 7ae8b48 (`still_to_do` calls `wrote` when the scope changed): the
    audit's test checks only that the claim writes nothing. A label renamed or deleted need not
    move `updated_at` (no delta lists the issue), so without `wrote` the issue stays ready and
    every poll spends a claim on it until the resync."""
    hour_ago = fake.now() - 3600
    n = fake.add_issue("o/r", "agent work", labels=["agent"], created=hour_ago)
    adapter = make_adapter(fake.url, label=["agent"])
    try:
        reader = ReadyReader(adapter.snapshot, adapter.changes, children_block=True,
                             clock=lambda: datetime.now(UTC).timestamp(), resync_every=None)
        reader.read()
        (entry,) = reader.last.ready
        with fake.lock:  # the label renamed ("Update a label"): updated_at does not move
            fake.issue("o/r", n).labels = ["renamed"]
        assert adapter.claim(entry.item, "pool-1", 60) is False
        reader.read()
        assert reader.last.ready == []
    finally:
        adapter.close()


def test_an_issue_a_person_assigned_beside_jr2_stays_out_of_an_assignee_none_scope(
        fake: FakeGitHub) -> None:
    """Only jr2's own assignment is ignored: an issue a person also assigned (to themselves,
    beside the bot) is not `--assignee none` work, in a full reading as in a delta."""
    mine = fake.add_issue("o/r", "jr2's own", assignees=["jr2-bot"])
    fake.add_issue("o/r", "a person's too", assignees=["jr2-bot", "alice"])
    adapter = make_adapter(fake.url, assignee="none", assign=True)
    try:
        reader = ReadyReader(adapter.snapshot, adapter.changes, children_block=True,
                             clock=lambda: datetime.now(UTC).timestamp(), resync_every=None)
        reader.read()
        assert [e.item.id for e in reader.last.ready] == [f"o/r#{mine}"]
        with fake.lock:  # a person unassigns themselves: the issue becomes jr2's alone
            fake.issue("o/r", mine + 1).assignees = ["jr2-bot"]
            fake._touch(fake.issue("o/r", mine + 1))  # as "Remove assignees" does
        reader.read()  # a delta
        assert sorted(e.item.id for e in reader.last.ready) == [f"o/r#{mine}", f"o/r#{mine + 1}"]
    finally:
        adapter.close()
