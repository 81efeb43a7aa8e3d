"""The rules the WorkSource enforces once for every tracker, over `MemoryTracker` and a real Pool:
scope, one-item failures, re-offers and people win."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from memorytracker import MemoryItem, MemoryTracker

from jr2_core import Context, Failure, Outcome, pool, start
from jr2_sources import ReadOnly, ReadOnlyError, SnapshotItem, Tracker
from jr2_sources.kit.fence import Fence
from jr2_sources.worksource import WorkSource


def ws_of(tracker: Any, **kw: Any) -> WorkSource:
    kw.setdefault("lease", 30.0)
    kw.setdefault("poll_every", 0.05)
    return WorkSource(tracker, holder="me@h", idle_poll=0.05, **kw)


async def run_pool(ws: WorkSource, worker: Any, cap: int = 2) -> Any:
    machine = pool(worker, id="p", source=ws.as_source(), item_id=lambda w: w.id, cap=cap,
                   failures="report")
    return await asyncio.wait_for(start(machine, observers=[ws.tally.observe]).result(), 10)


async def quick(item: Any, ctx: Context) -> str:
    return str(item.id)


async def test_an_item_outside_the_scope_is_never_offered_claimed_or_settled() -> None:
    mt = MemoryTracker([MemoryItem("A", labels=["a"]), MemoryItem("B", labels=["b"])],
                       label=["a"])
    # B carries an expired claim of a dead pool: listed (to show the mark), out of scope
    mt.claim(SnapshotItem("B"), "dead@h", 0.01)
    await asyncio.sleep(0.05)
    assert {it.id: it.in_scope for it in mt.snapshot().items} == {"A": True, "B": False}
    ws = ws_of(mt)
    res = await run_pool(ws, quick)
    assert res.state == "done" and res.output.status == "drained"
    assert res.output.items == {"A": "A"}
    assert mt.claims["B"].holder == "dead@h"  # never claimed by this pool
    assert [s[0] for s in mt.settled] == ["A"]


async def test_a_claim_refused_for_one_item_skips_it_and_the_run_goes_on() -> None:
    mt = MemoryTracker([MemoryItem("A"), MemoryItem("B"), MemoryItem("C")])
    mt.refuse_claim["B"] = "HTTP 403: issue is locked"
    ws = ws_of(mt)
    res = await run_pool(ws, quick)
    assert res.output.items == {"A": "A", "C": "C"}
    assert ws.tally.skipped == {"B": "memory:test: B: HTTP 403: issue is locked"}
    assert "B" not in mt.claims and mt.items["B"].failed is None  # no mark left on it
    assert res.output.status == "drained"  # B is named as skipped, not open work


async def test_a_settle_refused_for_one_item_is_reported_and_the_run_goes_on() -> None:
    mt = MemoryTracker([MemoryItem("A"), MemoryItem("B")])
    mt.refuse_settle["A"] = "HTTP 410: issue deleted"
    ws = ws_of(mt)
    res = await run_pool(ws, quick, cap=1)
    assert res.state == "done" and set(res.output.items) == {"A", "B"}
    assert ws.tally.unsettled == {"A": "memory:test: A: HTTP 410: issue deleted"}


async def test_a_person_closing_a_held_item_stops_its_worker_and_nothing_is_recorded() -> None:
    mt = MemoryTracker([MemoryItem("A"), MemoryItem("B")])
    ws = ws_of(mt)
    started = asyncio.Event()

    async def slow(item: Any, ctx: Context) -> str:
        if item.id == "A":
            started.set()
            await asyncio.sleep(30)
        return str(item.id)

    task = asyncio.ensure_future(run_pool(ws, slow))
    await started.wait()
    mt.person_closes("A")
    res = await asyncio.wait_for(task, 5)
    assert res.state == "done" and res.exit_code == 0
    assert res.output.items == {"B": "B"} and "A" in res.output.cancelled
    assert "person" in res.output.cancelled["A"].reason
    assert ("A", "me@h", "cancelled") in mt.settled and ("A", "me@h", "done") not in mt.settled
    assert ws.tally.stopped["A"]


async def test_a_person_removing_the_claim_mark_stops_the_worker_and_it_is_not_offered_again(
) -> None:
    mt = MemoryTracker([MemoryItem("A")])
    ws = ws_of(mt)
    started = asyncio.Event()

    async def slow(item: Any, ctx: Context) -> str:
        started.set()
        await asyncio.sleep(30)
        return "x"

    task = asyncio.ensure_future(run_pool(ws, slow))
    await started.wait()
    mt.person_removes_claim("A")
    res = await asyncio.wait_for(task, 5)
    assert res.output.attempts == {"A": 1} and "A" in res.output.cancelled
    assert mt.items["A"].open and mt.items["A"].failed is None


async def test_a_settle_never_overwrites_a_person_who_acted_since_the_last_watch() -> None:
    mt = MemoryTracker([MemoryItem("A")])
    ws = WorkSource(mt, holder="me@h", lease=30.0, watch_every=60.0)

    async def closes_it(item: Any, ctx: Context) -> str:
        mt.person_relabels("A", ["moved"])
        mt.label = ["mine"]  # A is out of scope now
        return "x"

    res = await run_pool(ws, closes_it)
    assert res.output.items == {"A": "x"}
    assert [s[2] for s in mt.settled] == ["cancelled"]
    assert "scope" in ws.tally.stopped["A"]


async def test_a_lost_lease_releases_the_item_and_it_is_offered_again_in_the_same_run() -> None:
    mt = MemoryTracker([MemoryItem("A")])
    ws = ws_of(mt, lease=0.6)
    tries: list[int] = []

    async def first_stalls(item: Any, ctx: Context) -> str:
        tries.append(1)
        if len(tries) == 1:
            mt.claims["A"].holder = "other@h"  # the store gave A away
            mt.claims["A"].expires = 0  # and that holder died at once
            await asyncio.sleep(30)
        return "ok"

    res = await run_pool(ws, first_stalls)
    assert res.state == "done" and res.output.items == {"A": "ok"}
    assert res.output.attempts == {"A": 2} and res.output.cancelled == {}


class FiredOnce(Fence):
    """A fence whose supervisor ended the first command of each item past its deadline."""

    def __init__(self) -> None:
        super().__init__()
        self.fired: set[str] = set()

    def lapsed(self, key: str) -> bool:
        first = key not in self.fired
        self.fired.add(key)
        return first


async def test_a_failure_after_the_fence_fired_is_released_and_offered_again() -> None:
    """The supervisor ended the command (its exit -15 is a failure to the runner) though a
    late renewal then kept the lease: the item is released as lapsed, not marked failed."""
    mt = MemoryTracker([MemoryItem("A")])
    ws = ws_of(mt, fence=FiredOnce())
    tries: list[int] = []

    async def killed_once(item: Any, ctx: Context) -> str:
        tries.append(1)
        if len(tries) == 1:
            raise Failure("exit -15")
        return "ok"

    res = await run_pool(ws, killed_once)
    assert res.state == "done" and res.output.items == {"A": "ok"}
    assert res.output.attempts == {"A": 2} and res.output.failures == {}


def test_a_dry_run_wrapper_refuses_writes_with_one_error_type() -> None:
    mt = MemoryTracker([MemoryItem("A")])
    ro = ReadOnly(mt)
    assert [it.id for it in ro.snapshot().items] == ["A"]
    for call in (lambda: ro.claim(SnapshotItem("A"), "p@h", 1.0),
                 lambda: ro.renew("A", "p@h", 1.0),
                 lambda: ro.settle("A", "p@h", Outcome("done"))):
        with pytest.raises(ReadOnlyError):
            call()
    assert mt.writes == 0


def test_a_tracker_missing_a_required_method_cannot_be_made() -> None:
    class NoRenew(Tracker):
        def snapshot(self) -> Any: ...
        def claim(self, item: Any, holder: str, lease: float) -> bool: ...
        def settle(self, item_id: str, holder: str, outcome: Outcome) -> None: ...

    with pytest.raises(TypeError, match="renew"):
        NoRenew()  # type: ignore[abstract]


def test_the_layer_reads_its_options_from_any_config_model() -> None:
    from pydantic import BaseModel

    from jr2_sources.registry import layer_options
    from jr2_sources.tracker import TrackerOptions

    class Legacy(BaseModel):  # a config written before the seam, whose target may be empty
        target: str = ""
        poll_every: float = 2.0
        children_block: bool = False

    opts = layer_options(Legacy())
    assert (opts.poll_every, opts.children_block) == (2.0, False)
    mine = TrackerOptions(target="x", poll_every="2m")  # type: ignore[arg-type]
    assert layer_options(mine) is mine and mine.poll_every == 120.0
