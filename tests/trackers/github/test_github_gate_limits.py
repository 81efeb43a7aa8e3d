"""`--gate` with `--global-cap` / `--exclusive-by` on a comment tracker: the run's locked claims
(`capabilities.limits.comment_locks.LockedClaims`) park through the tracker and free the item's
group and slot, so a parked item holds no place while it waits (against the fake GitHub)."""

from __future__ import annotations

from gh_helpers import make_adapter

from jr2_core import Outcome
from jr2_sources.capabilities.approvals import KeepsApprovals
from jr2_sources.capabilities.approvals.policy import ApprovalRequest
from jr2_sources.capabilities.limits.comment_locks import LockedClaims
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub


def test_parking_releases_the_items_group_and_slot_and_its_answer_lets_it_claim_again(
        fake: FakeGitHub) -> None:
    control = fake.add_issue("o/r", "jr2 coordination")
    a = fake.add_issue("o/r", "migrate", labels=["agent", "area/db"])
    b = fake.add_issue("o/r", "reindex", labels=["agent", "area/db"])
    tracker = make_adapter(fake.url, label=["agent"])
    pool = LockedClaims(tracker, f"o/r#{control}")
    pool.global_cap = 1
    assert isinstance(tracker, KeepsApprovals)
    item_a = SnapshotItem(id=f"o/r#{a}", groups=("area/db",))
    item_b = SnapshotItem(id=f"o/r#{b}", groups=("area/db",))
    assert pool.claim(item_a, "pool-1", 60)
    assert not pool.claim(item_b, "pool-2", 60)  # the group (and the one slot) is taken
    pool.park(f"o/r#{a}", "pool-1", ApprovalRequest("deploy", "ship it?"))
    assert "jr2:awaiting-approval" in fake.issue("o/r", a).labels
    assert fake.comments_of("o/r", control) == []  # the lock went with the claim
    assert pool.claim(item_b, "pool-2", 60)  # the parked item holds no place while it waits
    pool.settle(f"o/r#{b}", "pool-2", Outcome(status="done"))
    fake.permissions["alice"] = "write"
    fake.add_comment("o/r", a, "/jr2 approve deploy", "alice")
    pool.fresh()  # a new reading, as the run's reader makes
    [again] = [it for it in tracker.snapshot().items if it.id == f"o/r#{a}"]
    assert [(g.status, g.by) for g in again.gates] == [("approved", "alice")]
    assert pool.claim(SnapshotItem(id=again.id, groups=("area/db",), gates=again.gates),
                      "pool-1", 60)
