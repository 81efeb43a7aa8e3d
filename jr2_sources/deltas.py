"""What a running pool reads before each claim: the Ready-set, kept current by deltas when it can.

Design notes
------------
The Pool never holds dependencies (the seed): each `next` asks the source again. An adapter that
only has `snapshot()` is read in full each time and the Ready-set recomputed (`compute_ready_set`,
linear in the backlog). An adapter that also has `changes(full=False) -> Snapshot | Delta`
(the local source; see `TrackerAdapter`) is read once in full, then in deltas applied to an
`IncrementalReadySet`, so a claim costs what changed, not the backlog's size.

A missed delta must never hide work for long: `resync_every` seconds after the last full
reading the next one is full again (`changes(full=True)`), and an adapter answers with a full
`Snapshot` itself whenever it sees a sign of a gap. Before a claim, the one item about to be
claimed is re-checked by the claim protocol itself (a stale "ready" costs one lost claim, and the
adapter re-reads that item in the next delta).

`ReadyView` is the part of a Ready-set a claim needs: the ready items in run order (lazily), the
counts, and the live holders; `ReadySet` (for reports) is built only when someone asks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from jr2_sources.incremental import Delta, IncrementalReadySet
from jr2_sources.readyset import ReadySet, Snapshot, SnapshotItem, compute_ready_set

__all__ = ["DEFAULT_RESYNC_EVERY", "ChangesFn", "ReadyReader", "ReadyView"]

DEFAULT_RESYNC_EVERY = 300.0


class ChangesFn(Protocol):
    def __call__(self, *, full: bool = False) -> Snapshot | Delta: ...


@dataclass(slots=True)
class ReadyView:
    """What claiming needs from a Ready-set: the ready items in run order (an iterator to close
    when done), how many are ready and blocked, and who holds the claimed ones."""

    ready: Generator[SnapshotItem, None, None]
    n_ready: int
    n_blocked: int
    holders: dict[str, str]
    waiting: int = 0
    """Blocked items waiting only for their retry time to come (`retry_after`)."""


class ReadyReader:
    """Reads a source's Ready-set for a pool: in full each time, or by deltas (module notes)."""

    def __init__(self, snapshot: Callable[[], Snapshot], changes: ChangesFn | None, *,
                 children_block: bool, clock: Callable[[], float],
                 resync_every: float | None = DEFAULT_RESYNC_EVERY) -> None:
        self._snapshot = snapshot
        self._changes = changes
        self.children_block = children_block
        self.clock = clock
        self.resync_every = resync_every
        self._inc: IncrementalReadySet | None = None
        self._synced = 0.0
        self._last: ReadySet | None = None
        # `read` runs in a worker thread while the live view or the summary may ask for `last`
        self._lock = threading.Lock()

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def ready_set(self) -> ReadySet:
        """A fresh, complete Ready-set (blocking): always a full reading."""
        return compute_ready_set(self._snapshot(), now=self._now(),
                                 children_block=self.children_block)

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
            rs = self._last = self.ready_set()
            now = rs.generated_at
            waiting = sum(1 for e in rs.blocked if e.item.retry_after is not None
                          and e.item.retry_after > now)
            return ReadyView((e.item for e in rs.ready), len(rs.ready), len(rs.blocked),
                             {e.item.id: e.claim.holder for e in rs.claimed}, waiting)
        with self._lock:
            inc = self._refresh(self._changes)
            self._last = None
            counts = inc.counts
            holders = {iid: c.holder for iid, c in inc.claims().items()}
            waiting = inc.waiting_for_retry()
        return ReadyView(inc.ready_items(), counts["ready"], counts["blocked"], holders, waiting)

    def _refresh(self, changes: ChangesFn) -> IncrementalReadySet:
        t = self.clock()
        due = self.resync_every is not None and t - self._synced >= self.resync_every
        got = changes(full=self._inc is None or due)
        now = self._now()
        if isinstance(got, Snapshot):
            if self._inc is None:
                self._inc = IncrementalReadySet(got, now=now, children_block=self.children_block)
            else:
                self._inc.reset(got, now=now)
            self._synced = t
        elif self._inc is None:
            raise RuntimeError("a source's first reading must be a full snapshot")
        else:
            self._inc.apply(got, now=now)
        return self._inc
