"""The conformance kit: the promises every Work Source keeps, as tests a plugin runs on itself.

A source plugin subclasses `SourceConformance` in its own tests (the subclass name starts with
`Test` so pytest collects it) and implements `make_target`: seed its tracker (or a fake of it)
with the reference backlog and return a `Target` (the adapter, the tracker ids of the reference
keys, and a counter of writes). The kit then checks, against the adapter alone:

* the Ready-set of the reference backlog: ready items, open and missing blockers, a cycle, open
  children, and a failed item that does not unblock its dependents;
* claims are exclusive, for sequential and for concurrent claimers (threads);
* a read-only (dry-run) adapter writes nothing;
* `record` makes an item done (unblocking dependents) or failed;
* a lease that is not renewed expires and is taken over; a renewal after takeover fails.

Leases are short real ones (`lease` seconds, default 1.0): the kit sleeps past them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jr2_core import Failure, Outcome
from jr2_sources.readyset import ReadySet, compute_ready_set

from .worksource import TrackerAdapter


@dataclass(frozen=True)
class RefItem:
    """An item of the reference backlog, by tracker-neutral key."""

    key: str
    title: str
    needs: tuple[str, ...] = ()
    parent: str | None = None
    done: bool = False


REFERENCE: tuple[RefItem, ...] = (
    RefItem("A", "Ready, nothing blocks it."),
    RefItem("B", "Ready too."),
    RefItem("C", "Needs A and B.", needs=("A", "B")),
    RefItem("D", "Needs a blocker that does not exist.", needs=("MISSING",)),
    RefItem("E", "Needs F (done), so ready.", needs=("F",)),
    RefItem("F", "Already done.", done=True),
    RefItem("P", "A parent with an open child."),
    RefItem("K", "The open child of P.", parent="P"),
    RefItem("X", "In a cycle with Y.", needs=("Y",)),
    RefItem("Y", "In a cycle with X.", needs=("X",)),
)
"""The reference backlog. `MISSING` is never seeded: map it to an id that does not exist."""


@dataclass
class Target:
    """What a plugin hands the kit: `adapter`; `ids` maps each reference key (and `MISSING`) to
    the tracker's id; `writes()` counts write requests made to the tracker so far."""

    adapter: TrackerAdapter
    ids: dict[str, str]
    writes: Callable[[], int]
    close: Callable[[], None] = field(default=lambda: None)


def _ready_set(adapter: TrackerAdapter) -> ReadySet:
    return compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))


class SourceConformance:
    """Subclass as `TestMySourceConformance` and implement `make_target`."""

    lease: float = 1.0
    supports_cycles: bool = True
    supports_children: bool = True

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        """Seed the tracker with `items` and return a Target. With `read_only`, return an
        adapter over the SAME tracker state (`state` is the `Target` your first call returned),
        built the way a dry-run report builds it."""
        raise NotImplementedError

    def _items(self) -> tuple[RefItem, ...]:
        return tuple(
            i for i in REFERENCE
            if (self.supports_cycles or i.key not in ("X", "Y"))
            and (self.supports_children or i.key not in ("P", "K"))
        )

    # -- the promises -----------------------------------------------------------------------

    def test_conformance_ready_set_of_the_reference_backlog(self) -> None:
        t = self.make_target(self._items())
        ids = t.ids
        rs = _ready_set(t.adapter)
        ready = {e.item.id for e in rs.ready}
        expect_ready = {ids["A"], ids["B"], ids["E"]} | (
            {ids["K"]} if self.supports_children else set())
        assert ready == expect_ready, f"ready: {sorted(ready)} != {sorted(expect_ready)}"
        blocked = {e.item.id: {(r.kind, r.ref) for r in e.reasons} for e in rs.blocked}
        assert ("open_blocker", ids["A"]) in blocked[ids["C"]]
        assert ("open_blocker", ids["B"]) in blocked[ids["C"]]
        assert any(k == "missing_blocker" for k, _ in blocked[ids["D"]])
        if self.supports_children:
            assert any(k == "open_children" for k, _ in blocked[ids["P"]])
        if self.supports_cycles:
            assert rs.cycles == [sorted([ids["X"], ids["Y"]])] or len(rs.cycles) == 1
            assert any(k == "cycle" for k, _ in blocked[ids["X"]])
        assert ids["F"] not in ready | set(blocked)
        t.close()

    def test_conformance_claims_are_exclusive_for_sequential_claimers(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.adapter).ready if e.item.id == t.ids["A"])
        assert t.adapter.claim(item, "pool-1@h", self.lease * 30) is True
        assert t.adapter.claim(item, "pool-2@h", self.lease * 30) is False
        rs = _ready_set(t.adapter)
        claimed = {e.item.id: e.claim.holder for e in rs.claimed}
        assert t.ids["A"] in claimed
        t.close()

    def test_conformance_claims_are_exclusive_for_concurrent_claimers(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.adapter).ready if e.item.id == t.ids["B"])
        wins: list[str] = []
        barrier = threading.Barrier(6)

        def contend(n: int) -> None:
            barrier.wait()
            if t.adapter.claim(item, f"pool-{n}@h", self.lease * 30):
                wins.append(f"pool-{n}@h")

        threads = [threading.Thread(target=contend, args=(n,)) for n in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(wins) == 1, f"winners: {wins}"
        t.close()

    def test_conformance_a_dry_run_writes_nothing(self) -> None:
        t = self.make_target(self._items())
        before = t.writes()
        ro = self.make_target(self._items(), read_only=True, state=t)
        rs = _ready_set(ro.adapter)
        assert rs.ready
        assert t.writes() == before, "a read-only snapshot wrote to the tracker"
        ro.close()
        t.close()

    def test_conformance_record_done_unblocks_and_failed_marks(self) -> None:
        t = self.make_target(self._items())
        ids = t.ids
        rs = _ready_set(t.adapter)
        a = next(e.item for e in rs.ready if e.item.id == ids["A"])
        b = next(e.item for e in rs.ready if e.item.id == ids["B"])
        assert t.adapter.claim(a, "p@h", self.lease * 30)
        t.adapter.record(ids["A"], "p@h", Outcome("done", output="ok"))
        assert t.adapter.claim(b, "p@h", self.lease * 30)
        t.adapter.record(ids["B"], "p@h", Outcome("failed", failure=Failure("it broke")))
        rs = _ready_set(t.adapter)
        listed = ({e.item.id for e in rs.ready} | {e.item.id for e in rs.blocked}
                  | {e.item.id for e in rs.claimed})
        assert ids["A"] not in listed, "a done item is still listed"
        blocked = {e.item.id: e.reasons for e in rs.blocked}
        assert any(r.kind == "failed" for r in blocked[ids["B"]]), "B is not marked failed"
        c = blocked[ids["C"]]
        assert {r.ref for r in c if r.kind == "open_blocker"} == {ids["B"]}
        t.close()

    def test_conformance_a_lease_expires_and_is_taken_over(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.adapter).ready if e.item.id == t.ids["E"])
        assert t.adapter.claim(item, "dead@h", self.lease)
        assert t.adapter.claim(item, "alive@h", self.lease) is False
        time.sleep(self.lease * 1.5 + 0.2)
        rs = _ready_set(t.adapter)
        assert t.ids["E"] in {e.item.id for e in rs.ready}, "an expired claim still holds"
        assert t.adapter.claim(item, "alive@h", self.lease * 30) is True
        assert t.adapter.renew(t.ids["E"], "dead@h", self.lease) is False
        t.close()

    def test_conformance_release_makes_an_item_ready_again(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.adapter).ready if e.item.id == t.ids["A"])
        assert t.adapter.claim(item, "p@h", self.lease * 30)
        t.adapter.release(t.ids["A"], "p@h")
        assert t.ids["A"] in {e.item.id for e in _ready_set(t.adapter).ready}
        t.close()
