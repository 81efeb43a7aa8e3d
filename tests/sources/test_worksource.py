"""The WorkSource layer over a scripted adapter: claim order, lost claims, held, leases."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from jr2_core import Next, Outcome
from jr2_core.errors import UsageError
from jr2_sources import Claim, Snapshot, SnapshotItem, Tracker
from jr2_sources.worksource import WorkItem, WorkSource


class Scripted(Tracker):
    """An adapter whose claims and renewals follow a script."""

    name = "scripted:x"

    def __init__(self, items: list[SnapshotItem], lose: set[str] | None = None) -> None:
        self.items = items
        self.lose = lose or set()
        self.claims: list[str] = []
        self.renewals = 0
        self.renew_ok = True
        self.fail_snapshot = False
        self.released: list[str] = []
        self.recorded: list[tuple[str, str]] = []

    def snapshot(self) -> Snapshot:
        if self.fail_snapshot:
            raise UsageError("backlog.toml:3:1: half-way through an edit")
        return Snapshot("scripted:x", list(self.items))

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        self.claims.append(item.id)
        return item.id not in self.lose

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        self.renewals += 1
        return self.renew_ok

    def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
        if outcome.status == "cancelled":
            self.released.append(item_id)
        else:
            self.recorded.append((item_id, outcome.status))


async def test_a_lost_claim_moves_on_to_the_next_ready_item() -> None:
    ad = Scripted([SnapshotItem("A", priority=1), SnapshotItem("B", priority=2)], lose={"A"})
    nxt = await WorkSource(ad, holder="me@h").next([])
    assert isinstance(nxt.item, WorkItem) and nxt.item.id == "B"
    assert ad.claims == ["A", "B"]
    assert nxt.held == 1  # A went to another pool


async def test_items_other_pools_hold_are_counted_as_held() -> None:
    from datetime import UTC, datetime, timedelta

    later = datetime.now(UTC) + timedelta(minutes=5)
    ad = Scripted([SnapshotItem("A", claim=Claim("other@h", datetime.now(UTC), later))])
    nxt = await WorkSource(ad, holder="me@h").next([])
    assert nxt == Next(item=None, open=1, held=1)


async def test_a_broken_snapshot_mid_run_keeps_the_pool_waiting() -> None:
    ad = Scripted([SnapshotItem("A")], lose={"A"})
    ws = WorkSource(ad, holder="me@h")
    await ws.next([])
    ad.fail_snapshot = True
    nxt = await ws.next([])
    assert nxt.item is None and nxt.held == 1


async def test_a_broken_snapshot_at_the_start_is_an_error() -> None:
    ad = Scripted([])
    ad.fail_snapshot = True
    with pytest.raises(UsageError):
        await WorkSource(ad, holder="me@h").next([])


async def test_a_lost_lease_stops_the_worker_before_the_lease_ends() -> None:
    ad = Scripted([SnapshotItem("A")])
    ad.renew_ok = False
    ws = WorkSource(ad, holder="me@h", lease=0.3)
    stopped: list[str] = []
    t0 = time.monotonic()
    ws.started("A", stopped.append)
    while not stopped and time.monotonic() - t0 < 2:
        await asyncio.sleep(0.01)
    assert stopped and "lost to another pool" in stopped[0]
    assert time.monotonic() - t0 < 0.3


async def test_failing_renewals_stop_the_worker_before_the_lease_ends() -> None:
    ad = Scripted([SnapshotItem("A")])

    def broken(*a: Any) -> bool:
        raise ConnectionError("tracker unreachable")

    ad.renew = broken  # type: ignore[method-assign]
    ws = WorkSource(ad, holder="me@h", lease=0.6)
    stopped: list[str] = []
    t0 = time.monotonic()
    ws.started("A", stopped.append)
    while not stopped and time.monotonic() - t0 < 3:
        await asyncio.sleep(0.01)
    assert stopped and "could not be renewed" in stopped[0]
    assert time.monotonic() - t0 < 0.6


async def test_settle_records_done_and_failed_and_releases_cancelled() -> None:
    from datetime import UTC, datetime

    ad = Scripted([SnapshotItem("A", claim=Claim("me@h", datetime.now(UTC)))])
    ws = WorkSource(ad, holder="me@h", lease=60)
    ws.started("A", lambda r: None)
    await ws.settle("A", Outcome("done"))
    await ws.settle("B", Outcome("cancelled"))
    assert ad.recorded == [("A", "done")] and ad.released == ["B"]


def test_pools_spread_over_items_of_equal_order_and_keep_the_order_between_unequal_ones() -> None:
    from datetime import UTC, datetime

    from jr2_sources.readyset import compute_ready_set
    from jr2_sources.worksource import spread

    t0, t1 = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 2, tzinfo=UTC)
    items = [SnapshotItem(id="urgent", priority=1, created=t1)]
    items += [SnapshotItem(id=f"tie-{i}", created=t0) for i in range(8)]
    items += [SnapshotItem(id="late", created=t1)]
    rs = compute_ready_set(Snapshot(source="s", items=items), now=t1)
    firsts = set()
    for holder in (f"run-{i}@host" for i in range(16)):
        order = [e.item.id for e in spread(rs.ready, holder)]
        assert order[0] == "urgent" and order[-1] == "late"
        assert sorted(order[1:-1]) == [f"tie-{i}" for i in range(8)]
        firsts.add(order[1])
    assert len(firsts) >= 4  # different pools prefer different tied items


async def test_a_settle_in_the_same_turn_as_a_renewal_answers_ends_and_renews_no_more() -> None:
    """The hang CI met (a 4-pool `local:` run that never ended): a worker finished just as its
    lease renewal answered, the settle's cancellation of the renewer was swallowed (Python
    3.11's `asyncio.wait_for`), the renewer went on renewing the settled claim, and the settle
    waited for it forever."""
    from memorytracker import MemoryItem, MemoryTracker

    class Inline(MemoryTracker):
        inline = True  # renewals answer on the loop, as `local:`'s do

    tracker = Inline([MemoryItem("A")])
    worker_done = asyncio.Event()
    renew = tracker.renew
    renewals: list[float] = []

    def renewing(item_id: str, holder: str, lease: float) -> bool:
        renewals.append(time.monotonic())
        worker_done.set()  # the worker ends in the same turn of the loop as this answer
        return renew(item_id, holder, lease)

    tracker.renew = renewing  # type: ignore[method-assign]
    ws = WorkSource(tracker, holder="me@h", lease=0.3)
    assert (await ws.next([])).item.id == "A"
    ws.started("A", lambda why: None)
    await worker_done.wait()
    settling = asyncio.create_task(ws.settle("A", Outcome("done")))
    await asyncio.wait([settling], timeout=3)  # not a cancelling timeout: it would end the wait
    assert settling.done(), "the settle waits for a renewer that goes on renewing"
    after = len(renewals)
    await asyncio.sleep(0.35)  # more than three renewal periods
    assert len(renewals) == after and tracker.settled == [("A", "me@h", "done")]


def test_an_item_parked_and_then_failed_is_only_failed_in_the_tally() -> None:
    from jr2_core import RunEvent
    from jr2_sources.worksource import Tally

    tally = Tally()
    tally.parked["A"] = "deploy"
    tally.refiled("A", retry=False)
    tally.observe(RunEvent("worker_cancelled", "r", item_id="A"))  # the park
    tally.observe(RunEvent("worker_failed", "r", item_id="A", detail="exit code 1"))
    assert tally.failed == {"A": "exit code 1"} and tally.parked == {}
    assert tally.cancelled == 0
    tally.observe(RunEvent("worker_cancelled", "r", item_id="B"))  # a lost lease
    assert tally.cancelled == 1
