"""What a running pool reads before each claim: the Ready-set, kept current by deltas when it can.

A tracker with only `snapshot()` is read in full each time. One that inherits `ReadsDeltas` is
read once in full, then by deltas applied to an `IncrementalReadySet`, in full again
`resync_every` seconds after the last full reading (or when it answers a `Snapshot` itself on a
sign of a gap). `prime` takes `first_reading`, the full reading `jr2 work` checks the source
with, as the first reading. `ReadyView` is what a claim needs (a `ReadySet` is built only on
request); items with `in_scope=False` count neither as blocked nor as held.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from jr2_sources.readyset import ReadySet, Snapshot, SnapshotItem, compute_ready_set

from .mixin import ReadsDeltas

if TYPE_CHECKING:
    from jr2_sources.tracker import Tracker

from .incremental import Delta, IncrementalReadySet

__all__ = ["DEFAULT_RESYNC_EVERY", "ChangesFn", "ReadyReader", "ReadyView", "first_reading"]

DEFAULT_RESYNC_EVERY = 300.0


class ChangesFn(Protocol):
    def __call__(self, *, full: bool = False) -> Snapshot | Delta: ...


@dataclass(slots=True)
class ReadyView:
    """What claiming needs from a Ready-set: the ready items in run order (an iterator to close
    when done; it may hold items outside the scope, which the WorkSource passes over), how many
    are ready, how many in scope are blocked, who holds the claimed ones in scope, and whether an
    item carries a failure mark now."""

    ready: Generator[SnapshotItem, None, None]
    n_ready: int
    n_blocked: int
    holders: dict[str, str]
    failed: Callable[[str], bool]
    waiting: int = 0
    """Blocked items in scope waiting for their retry time to come (`retry_after`)."""
    limited: int = 0
    """Items in scope waiting for a conflict group another item holds or for the global cap
    (`jr2_sources.capabilities.limits.policy`): held elsewhere, so a pool waits for them."""


class ReadyReader:
    """Reads a source's Ready-set for a pool: in full each time, or by deltas (module notes)."""

    def __init__(self, snapshot: Callable[[], Snapshot], changes: ChangesFn | None, *,
                 children_block: bool, clock: Callable[[], float],
                 resync_every: float | None = DEFAULT_RESYNC_EVERY,
                 global_cap: int | None = None, limits: bool = False) -> None:
        self._snapshot = snapshot
        self.global_cap = global_cap
        self.limits = limits or global_cap is not None  # count the items the limits keep
        self._changes = changes
        self.children_block = children_block
        self.clock = clock
        self.resync_every = resync_every
        self._inc: IncrementalReadySet | None = None
        self._synced = 0.0
        self._last: ReadySet | None = None
        self._outside: set[str] = set()  # ids of the items with in_scope=False (deltas only)
        self._primed: tuple[Snapshot, float] | None = None  # a full reading taken before `read`
        # `read` runs in a worker thread while the live view or the summary may ask for `last`
        self._lock = threading.Lock()

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def prime(self, snapshot: Snapshot) -> None:
        """Take `snapshot`, a full reading made just now (`first_reading` of the same tracker),
        as the first reading of the next `read()` instead of reading the source again."""
        with self._lock:
            self._primed = (snapshot, self.clock())

    def _take_primed(self) -> tuple[Snapshot, float] | None:
        got, self._primed = self._primed, None
        return got

    def ready_set(self) -> ReadySet:
        """A fresh, complete Ready-set (blocking): always a full reading."""
        return compute_ready_set(self._snapshot(), now=self._now(),
                                 children_block=self.children_block, global_cap=self.global_cap)

    @property
    def last(self) -> ReadySet | None:
        """The complete Ready-set of the last `read()` (built on first use), None before one."""
        with self._lock:
            if self._last is None and self._inc is not None:
                self._last = self._inc.ready_set()
            return self._last

    def read(self) -> ReadyView:
        """The Ready-set now (blocking), as a `ReadyView`."""
        if self._changes is None:
            with self._lock:
                primed = self._take_primed()
            rs = self._last = (self.ready_set() if primed is None else compute_ready_set(
                primed[0], now=self._now(), children_block=self.children_block,
                global_cap=self.global_cap))
            failed_ids = {e.item.id for e in rs.blocked if e.item.failed is not None}
            now = rs.generated_at
            waiting = sum(1 for e in rs.blocked if e.item.in_scope
                          and e.item.retry_after is not None and e.item.retry_after > now)
            return ReadyView((e.item for e in rs.ready), len(rs.ready),
                             sum(1 for e in rs.blocked if e.item.in_scope),
                             {e.item.id: e.claim.holder for e in rs.claimed if e.item.in_scope},
                             failed_ids.__contains__, waiting,
                             _limited(rs) if self.limits else 0)
        with self._lock:
            inc = self._refresh(self._changes)
            self._last = None
            counts = inc.counts
            outside = self._outside
            n_blocked = counts["blocked"] - sum(1 for i in outside
                                                if i in inc and inc.status(i) == "blocked")
            holders = {iid: c.holder for iid, c in inc.claims().items() if iid not in outside}
            waiting = inc.waiting_for_retry(outside)
            limited = inc.waiting_for_limits(outside)

        def failed(item_id: str) -> bool:
            return item_id in inc and inc.item(item_id).failed is not None

        return ReadyView(inc.ready_items(), counts["ready"], n_blocked, holders, failed, waiting,
                         limited)

    def _refresh(self, changes: ChangesFn) -> IncrementalReadySet:
        primed = self._take_primed()
        got: Snapshot | Delta
        if primed is not None:
            got, t = primed
        else:
            t = self.clock()
            due = self.resync_every is not None and t - self._synced >= self.resync_every
            got = changes(full=self._inc is None or due)
        now = self._now()
        if isinstance(got, Snapshot):
            if self._inc is None:
                self._inc = IncrementalReadySet(got, now=now, children_block=self.children_block,
                                                global_cap=self.global_cap)
            else:
                self._inc.reset(got, now=now)
            self._outside = {it.id for it in got.items if not it.in_scope}
            self._synced = t
        elif self._inc is None:
            raise RuntimeError("a source's first reading must be a full snapshot")
        else:
            self._inc.apply(got, now=now)
            for it in got.items:
                if it.in_scope:
                    self._outside.discard(it.id)
                else:
                    self._outside.add(it.id)
            self._outside.difference_update(got.left)
        return self._inc


def first_reading(tracker: Tracker) -> Snapshot:
    """One full reading of `tracker`, fit to `ReadyReader.prime`: `changes(full=True)` where it
    reads by deltas (`ReadsDeltas`; a full reading must answer a `Snapshot`), else
    `snapshot()`."""
    if not isinstance(tracker, ReadsDeltas):
        return tracker.snapshot()
    got = tracker.changes(full=True)
    if not isinstance(got, Snapshot):
        raise RuntimeError(f"{tracker.name}: changes(full=True) must answer a full Snapshot")
    return got


_LIMIT_KINDS = frozenset({"group_busy", "global_cap"})


def _limited(rs: ReadySet) -> int:
    """Blocked items in scope that wait for a conflict group or the global cap."""
    if not rs.claimed:
        return 0  # nothing is held: no group is busy and no cap is reached
    return sum(1 for e in rs.blocked if e.item.in_scope
               and any(r.kind in _LIMIT_KINDS for r in e.reasons))
