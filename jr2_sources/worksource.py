"""The WorkSource layer: a tracker adapter in, a jr2 `Source` out.

Design notes
------------
A tracker adapter answers a few questions (`TrackerAdapter`): the open items in scope with their
blocker references (`snapshot`), and `claim` / `renew` / `release` / `record` for one item. This
layer does the rest, the same for every tracker:

* `next(active)` reads the Ready-set afresh (the Pool never holds dependencies: the seed) and
  claims the first ready item it can win, in the Ready-set's stable order (priority, then
  oldest, then id); for an adapter that sets `spread_claims` (GitHub, whose claim attempts
  notify people), among items of equal order (same priority and time) each pool starts at its
  own offset (`spread`), so pools polling together do not all race for one. A lost claim moves
  on to the next item. An adapter with the optional `changes()` is read by deltas
  (`deltas.py`): one snapshot, then only what changed.
* With nothing won it answers `Next(item=None, open=n, held=k)`: `held` counts items other pools
  hold now (and ready items we just lost to them), so a pool with no workers waits for them
  instead of ending `deadlocked` or `drained` early.
* Claims are leases. While a worker runs, its lease is renewed every `lease/3`; when renewal is
  refused (another pool took the item) or keeps failing until the lease is about to end, the
  worker is stopped with a Failure before the lease runs out, so two pools never both work.
* `settle` records the outcome (done, or failed with the reason) and drops the claim; a
  cancelled worker's claim is released with nothing recorded, so the item is offered again.
* Bounded retries (`jr2_sources.retries`, `jr2 work --max-attempts`): the attempt number is the
  tracker's record at claim time plus one (the claim is refused if the record changed since the
  snapshot); a transient failure with attempts left is recorded with its `retry_after`, and the
  adapter keeps both in the tracker. An adapter that cannot (no `retries = True`) is refused at
  start. Items waiting for their retry time count as `held`: a pool waits for them (polling)
  instead of ending `deadlocked`.

Blocking tracker I/O runs in a thread (`asyncio.to_thread`), so the run host keeps answering.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import time
import zlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from jr2_core import EventDef, Next, Outcome, RunEvent, Source, source
from jr2_core.errors import UsageError
from jr2_sources.readyset import ReadyEntry, ReadySet, Snapshot, SnapshotItem
from jr2_sources.retries import Attempt, AttemptPolicy

from .deltas import DEFAULT_RESYNC_EVERY, ReadyReader, ReadyView

log = logging.getLogger("jr2.worksource")


@runtime_checkable
class TrackerAdapter(Protocol):
    """What a tracker must answer. Methods block; the WorkSource runs them in a thread."""

    name: str
    """The source as the user named it (`local:backlog.toml`, `github:o/r`)."""

    def snapshot(self) -> Snapshot:
        """The open items in scope, with blockers, children, claims and failure marks."""
        ...

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        """Claim `item` for `holder` for `lease` seconds: True if won. Must be safe against
        every other pool on any machine."""
        ...

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        """Extend `holder`'s lease; False if `holder` no longer holds the item."""
        ...

    def release(self, item_id: str, holder: str) -> None:
        """Drop `holder`'s claim without recording an outcome."""
        ...

    def record(self, item_id: str, holder: str, outcome: Outcome) -> None:
        """Record a `done` or `failed` outcome and drop the claim."""
        ...

    # Optional: `retries = True` and `record(item_id, holder, outcome, attempt)` with an
    # `attempt: jr2_sources.retries.Attempt | None` it keeps in the tracker and reads back as
    # `SnapshotItem.attempts` / `.retry_after`, refusing a claim whose record changed
    # (`jr2 work --max-attempts`; see retries.py).
    # Optional: `changes(*, full=False) -> Snapshot | jr2_sources.incremental.Delta`: what changed
    # since the last call, or a full snapshot (the first call, `full`, any sign of a gap); the
    # WorkSource then keeps an incremental Ready-set instead of recomputing it (see deltas.py).
    # Optional: `webhook(headers, body, secret) -> jr2_sources.Verdict` verifies a delivery
    # (signature, replay) and says whether it can change the Ready-set; `jr2 work` then serves
    # it at POST /webhook (see jr2_sources.kit.webhooks).


class WorkItem(BaseModel):
    """What a worker gets for one item: tracker-agnostic fields plus the source's extras."""

    id: str
    title: str
    url: str | None = None
    labels: list[str] = []
    priority: int | None = None
    branch: str | None = None
    source: str
    extra: dict[str, Any] = {}

    @classmethod
    def from_snapshot(cls, item: SnapshotItem, source: str) -> WorkItem:
        return cls(id=item.id, title=item.title, url=item.url, labels=list(item.labels),
                   priority=item.priority, branch=item.branch, source=source,
                   extra=dict(item.extra))


class Tally:
    """Counts what a run's workers did (an observer), for summaries that must be right even
    when the run was interrupted and has no output."""

    def __init__(self) -> None:
        self.done = 0
        self.cancelled = 0
        self.failed: dict[str, str] = {}

    def observe(self, ev: RunEvent) -> None:
        if ev.kind == "worker_finished":
            self.done += 1
        elif ev.kind == "worker_failed":
            self.failed[ev.item_id or "?"] = str(ev.detail)
        elif ev.kind == "worker_cancelled":
            self.cancelled += 1


def spread(ready: list[ReadyEntry], holder: str) -> list[ReadyEntry]:
    """The ready items in run order, except that among items of EQUAL order (same priority and
    creation time, told apart only by id) each pool starts at its own offset (from a hash of
    its holder id), so pools that poll together prefer different items instead of all racing
    for the first. The documented order between unequal items stays."""
    out: list[ReadyEntry] = []
    for _, group in itertools.groupby(ready, key=lambda e: (e.item.priority, e.item.created)):
        tie = list(group)
        k = zlib.crc32(holder.encode()) % len(tie)
        out += tie[k:] + tie[:k]
    return out


def default_holder(run_id: str) -> str:
    """A pool's holder id: its run id and host, so pools sharing one token are told apart."""
    return f"{run_id}@{socket.gethostname()}"


class WorkSource:
    """Turns a `TrackerAdapter` into a `Source` with claims, leases and settle."""

    def __init__(
        self,
        adapter: TrackerAdapter,
        *,
        holder: str,
        lease: float = 600.0,
        children_block: bool = True,
        poll_every: float | None = None,
        idle_poll: float = 5.0,
        wake: EventDef | None = None,
        clock: Callable[[], float] = time.time,
        resync_every: float | None = DEFAULT_RESYNC_EVERY,
        attempts: AttemptPolicy | None = None,
    ) -> None:
        if lease <= 0:
            raise ValueError("lease must be positive")
        self.policy = attempts or AttemptPolicy()
        if self.policy.max_attempts > 1 and not getattr(adapter, "retries", False):
            raise UsageError(f"{adapter.name}: this source keeps no attempt record, so it cannot "
                             "retry (use --max-attempts 1)")
        self.adapter = adapter
        self.holder = holder
        self.lease = lease
        self.children_block = children_block
        self.poll_every = poll_every
        self.idle_poll = idle_poll
        self.wake = wake
        self.clock = clock
        changes = getattr(adapter, "changes", None)
        self._reader = ReadyReader(adapter.snapshot, changes if callable(changes) else None,
                                   children_block=children_block, clock=clock,
                                   resync_every=resync_every)
        self._seen: ReadyView | None = None
        self.tally = Tally()
        self._renewers: dict[str, asyncio.Task[None]] = {}
        self._claimed_at: dict[str, float] = {}
        self._attempt: dict[str, int] = {}  # item -> the number of the attempt running now

    # -- reading ----------------------------------------------------------------------------

    def ready_set(self) -> ReadySet:
        """A fresh, complete Ready-set (blocking)."""
        return self._reader.ready_set()

    @property
    def last(self) -> ReadySet | None:
        """The Ready-set `next` last read (complete, built on first use), None before."""
        return self._reader.last

    # -- the Source ---------------------------------------------------------------------------

    def as_source(self) -> Source:
        """The jr2 `Source` a Pool runs over."""
        return source(self.next, wake=self.wake, poll_every=self.poll_every,
                      idle_poll=self.idle_poll, settle=self.settle, started=self.started,
                      reoffer=self.policy.max_attempts > 1)

    async def next(self, active: list[str]) -> Next:
        try:
            return await asyncio.to_thread(self._claim_next, set(active))
        except UsageError as exc:
            if self._seen is None:
                raise
            # a person is half-way through an edit: keep working, look again on the next poll
            log.warning("%s: %s; keeping the last good state and looking again", self.adapter.name,
                        exc)
            return Next(item=None, open=self._seen.n_blocked + 1, held=1)

    def _claim_next(self, mine: set[str]) -> Next:
        """Read the Ready-set and claim the first ready item we win (blocking: one thread hop
        for the whole of `next`, which is most of a cheap source's cost per item)."""
        view = self._reader.read()
        self._seen = view
        held = sum(1 for iid, h in view.holders.items() if iid not in mine and h != self.holder)
        held += view.waiting
        lost = 0
        order: Iterable[SnapshotItem] = view.ready
        if getattr(self.adapter, "spread_claims", False):
            order = [e.item for e in spread([ReadyEntry(it) for it in view.ready], self.holder)]
        try:
            for i, item in enumerate(order):
                if item.id in mine:
                    continue
                asked = self.clock()  # the lease runs from before the claim reached the tracker
                if self.adapter.claim(item, self.holder, self.lease):
                    self._claimed_at[item.id] = asked
                    self._attempt[item.id] = item.attempts + 1
                    rest = view.n_ready - i - 1
                    return Next(item=WorkItem.from_snapshot(item, self.adapter.name),
                                open=rest + lost + view.n_blocked + held, held=held + lost)
                lost += 1
        finally:
            view.ready.close()
        return Next(item=None, open=view.n_blocked + held + lost, held=held + lost)

    def started(self, item_id: str, stop: Callable[[str], None]) -> None:
        self._renewers[item_id] = asyncio.get_running_loop().create_task(
            self._keep_lease(item_id, stop), name=f"lease:{item_id}")

    def lease_margin(self) -> float:
        """How long before its lease ends a worker whose renewals fail is stopped: a fifth of
        the lease, at least 1 s (a tracker that keeps whole-second timestamps can see a lease
        end up to a second early), but never more than a third of the lease, nor 60 s."""
        return min(max(1.0, self.lease / 5), self.lease / 3, 60.0)

    async def _keep_lease(self, item_id: str, stop: Callable[[str], None]) -> None:
        """Renew every lease/3; stop the worker before the lease ends if renewal fails.

        The lease is counted from before each request left (so from before the tracker
        stamped it), and a renewal that has not answered by the stop deadline is not waited
        for: the tracker client may still be retrying, but the worker stops in time.
        """
        every = self.lease / 3
        margin = self.lease_margin()
        expires = self._claimed_at.pop(item_id, self.clock()) + self.lease
        while True:
            await asyncio.sleep(max(0.0, min(every, expires - margin - self.clock())))
            deadline = expires - margin - self.clock()
            if deadline <= 0:
                stop(f"lease of {item_id} could not be renewed in time")
                return
            asked = self.clock()
            try:
                ok = await asyncio.wait_for(asyncio.to_thread(
                    self.adapter.renew, item_id, self.holder, self.lease), deadline)
            except TimeoutError:
                stop(f"lease of {item_id} could not be renewed: the tracker did not answer "
                     "in time")
                return
            except Exception as exc:
                log.warning("renewing the lease of %s failed: %s", item_id, exc)
                continue
            if not ok:
                stop(f"lease of {item_id} was lost to another pool")
                return
            expires = asked + self.lease

    async def settle(self, item_id: str, outcome: Outcome) -> Outcome | None:
        """Record `outcome` in the tracker. A transient failure to retry is logged (reason,
        attempt, retry time) and returned as a `cancelled` Outcome: it is not the run's
        failure, the item is offered again (by this pool or another)."""
        task = self._renewers.pop(item_id, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        number = self._attempt.pop(item_id, 1)
        if outcome.status == "cancelled":
            await asyncio.to_thread(self.adapter.release, item_id, self.holder)
        elif self.policy.max_attempts > 1:
            retry_after = None
            if number < self.policy.max_attempts and self.policy.is_transient(outcome):
                retry_after = datetime.fromtimestamp(self.clock() + self.policy.delay(number), UTC)
            record: Any = self.adapter.record  # takes an Attempt: `retries` was checked at start
            await asyncio.to_thread(record, item_id, self.holder, outcome,
                                    Attempt(number, retry_after))
            if retry_after is not None and outcome.failure is not None:
                log.warning("%s: %s: attempt %d of %d, offered again after %s", item_id,
                            outcome.failure.reason, number, self.policy.max_attempts,
                            retry_after.strftime("%Y-%m-%dT%H:%M:%SZ"))
                return Outcome("cancelled")
        else:
            await asyncio.to_thread(self.adapter.record, item_id, self.holder, outcome)
        return None
