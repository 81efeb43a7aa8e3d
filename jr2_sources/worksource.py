"""The WorkSource layer: a `Tracker` in, a jr2 `Source` out, with the rules every tracker shares
enforced once, here.

* `next(active)` reads the Ready-set (by deltas where the tracker `ReadsDeltas`) and claims the
  first ready item it can win, in the Ready-set's order (a `spread_claims` tracker starts each
  pool at its own offset among equals); a lost claim moves on. With nothing won it answers
  `Next(item=None, open=n, held=k)`, `held` counting what other pools hold or keep waiting.
* Scope: an item with `in_scope=False` is never offered, claimed or settled.
* One item's refusal (`ItemError`) skips that item for the run with one warning; the run goes on.
* Claims are leases, renewed every `lease/3`; a worker whose renewal is refused or keeps failing
  is stopped before the lease ends and ends `cancelled`.
* People win: held items are watched (`Tracker.watch`) every `poll_every`, after a webhook and
  before a settle; an item a person took back has its worker stopped and its claim released with
  nothing recorded.
* Bounded retries (`--max-attempts`), global caps and conflict groups, and approval gates are
  enforced here through their capabilities, and refused at start on a tracker without them.
* Fencing (`kit/fence.py`): each lease's deadline goes to the pool's command supervisor, which
  ends a command whose lease ran out unrenewed (the pool was stopped or killed). A pool that
  wakes past a lease stops that worker first of all, saying so in one line (`LAPSED`), and never
  settles what it finished after it: the item is released, not done or failed.
* A second death of an item's holder (a lapsed, unsettled claim) fails the item for good.
* A full state disk fails the item and ends the run (`StateFull`).
* Blocking tracker calls run in a thread; an `inline` tracker (`local:`) is called on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import socket
import time
import zlib
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from jr2_core import EventDef, Failure, Next, Outcome, RunEvent, Source, source
from jr2_core.errors import ItemError, StateFull, UsageError
from jr2_core.jsondata import jsonable
from jr2_core.timeouts import wait_for
from jr2_sources.capabilities.approvals import KeepsApprovals
from jr2_sources.capabilities.approvals.policy import EX_AWAIT_APPROVAL, ApprovalRequest
from jr2_sources.capabilities.attempts import Attempt, AttemptPolicy, KeepsAttempts
from jr2_sources.capabilities.deltas import ReadsDeltas
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.deltas.reader import DEFAULT_RESYNC_EVERY, ReadyReader, ReadyView
from jr2_sources.capabilities.limits import KeepsLimits
from jr2_sources.capabilities.limits.comment_locks import LockedClaims
from jr2_sources.capabilities.limits.policy import Limits

from .kit.bounds import Bounds
from .kit.fence import Fence
from .readyset import ReadyEntry, ReadySet, Snapshot, SnapshotItem
from .tracker import CLAIM_REMOVED, Tracker, as_tracker

log = logging.getLogger("jr2.worksource")
_T = TypeVar("_T")

DEFAULT_WATCH_EVERY = 5.0
"""How often held items are watched when the tracker sets no `poll_every`."""
DEATHS_FAIL = 2
"""The pool deaths during one item that fail it (the first is forgiven)."""
LAPSED = "the lease lapsed while this pool was stopped"


@dataclass(slots=True, kw_only=True)
class WorkItem:
    """What a worker gets for one item: tracker-agnostic fields plus the source's extras (a
    slotted dataclass: one is made per claim, and `jr2 work local:` imports no pydantic), its
    fields in the documented order of the item JSON."""

    id: str
    title: str
    url: str | None = None
    labels: list[str] = field(default_factory=list)
    priority: int | None = None
    branch: str | None = None
    source: str
    extra: dict[str, Any] = field(default_factory=dict)
    gates: dict[str, dict[str, str | None]] = field(default_factory=dict)
    """The item's answered gates (`--gate`): name -> status (approved | rejected), reason, by."""

    @classmethod
    def from_snapshot(cls, item: SnapshotItem, source: str) -> WorkItem:
        gates = {g.name: {"status": g.status, "reason": g.reason, "by": g.by}
                 for g in item.gates if g.status != "awaiting"}
        return cls(id=item.id, title=item.title, url=item.url, labels=list(item.labels),
                   priority=item.priority, branch=item.branch, source=source,
                   extra=dict(item.extra), gates=gates)


def _json_default(value: Any) -> Any:
    out = jsonable(value)
    return str(value) if out is value else out


_dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
"""Compact JSON by the C encoder (`indent=` would make `json` fall back to pure Python)."""


def item_json(item: WorkItem) -> str:
    """The item file's text (`JR2_ITEM_JSON`): one top-level key a line, UTF-8 as it is."""
    lines = [f"  {_dumps(f.name)}: {_dumps(getattr(item, f.name))}" for f in fields(item)]
    return "{\n" + ",\n".join(lines) + "\n}"


class Tally:
    """What a run's workers did (an observer, fed by the Pool's events) and what the WorkSource
    decided per item, for summaries that must be right even when the run was interrupted and
    has no output. Each id keeps its last outcome."""

    def __init__(self) -> None:
        self.done_ids: set[str] = set()
        self.cancelled = 0
        self.failed: dict[str, str] = {}
        self.stopped: dict[str, str] = {}
        """Workers stopped (or settles withheld) because a person took the item back: why."""
        self.skipped: dict[str, str] = {}
        """Items the tracker refused to claim (`ItemError`): skipped for this run, with why."""
        self.unsettled: dict[str, str] = {}
        """Items whose settle the tracker refused (`ItemError`), with why."""
        self.retried: set[str] = set()
        """Items this pool failed whose failure a person cleared during the run."""
        self.parked: dict[str, str] = {}
        """Items parked awaiting approval (`--gate`) in this run, and the gate (the last one)."""
        self.retries = 0
        """Transient failures offered again (`--max-attempts`): not cancellations."""
        self._refiled: set[str] = set()  # settled as cancelled for a retry or a park, not told

    @property
    def done(self) -> int:
        return len(self.done_ids)

    def observe(self, ev: RunEvent) -> None:
        iid = ev.item_id or "?"
        if ev.kind == "worker_finished":
            self.done_ids.add(iid)
            self.parked.pop(iid, None)
            self.failed.pop(iid, None)
        elif ev.kind == "worker_failed":
            self.failed[iid] = str(ev.detail)
            self.done_ids.discard(iid)
            self.parked.pop(iid, None)  # its last outcome is the failure
        elif ev.kind == "worker_cancelled":
            if iid in self._refiled:
                self._refiled.discard(iid)
            else:
                self.cancelled += 1

    def refiled(self, item_id: str, *, retry: bool) -> None:
        """The Source settled `item_id` as cancelled to offer it again (a retry) or to park it:
        its cancellation event is neither counted nor said as one."""
        self._refiled.add(item_id)
        self.retries += retry


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
    """Turns a `Tracker` into a `Source` with claims, leases, settle and the shared rules."""

    def __init__(self, tracker: Any, *, holder: str, lease: float = 600.0,
                 children_block: bool = True, poll_every: float | None = None,
                 idle_poll: float = 5.0, wake: EventDef | None = None,
                 clock: Callable[[], float] = time.time, watch_every: float | None = None,
                 resync_every: float | None = DEFAULT_RESYNC_EVERY,
                 attempts: AttemptPolicy | None = None, limits: Limits | None = None,
                 gates: Iterable[str] = (), locks: LockedClaims | None = None,
                 fence: Fence | None = None) -> None:
        if lease <= 0:
            raise ValueError("lease must be positive")
        self.tracker: Tracker = as_tracker(tracker)
        self.policy = attempts or AttemptPolicy()
        if self.policy.max_attempts > 1 and not isinstance(self.tracker, KeepsAttempts):
            raise UsageError(f"{self.tracker.name}: this source keeps no attempt record, so it "
                             "cannot retry (use --max-attempts 1)")
        self.limits = limits or Limits()
        self._locks = locks
        self._claims: Tracker | LockedClaims = locks or self.tracker
        """Where claims, renewals, settles and parks go: the tracker, or its `LockedClaims`."""
        if self.limits.active:
            if isinstance(self.tracker, KeepsLimits):
                self.tracker.global_cap = self.limits.global_cap
            elif locks is not None:
                locks.global_cap = self.limits.global_cap
            else:
                raise UsageError(f"{self.tracker.name}: this source cannot share a global cap or "
                                 "conflict groups between pools yet (drop --global-cap and "
                                 "--exclusive-by)")
        self.gates = frozenset(gates)
        if self.gates and not isinstance(self.tracker, KeepsApprovals):
            raise UsageError(f"{self.tracker.name}: this source cannot park an item awaiting "
                             "approval, so it cannot use --gate")
        self.holder = holder
        self.lease = lease
        self.tracker.bound(Bounds(lease=lease, retry=self.policy.backoff_max,
                                  attempts=self.policy.max_attempts))
        self.children_block = children_block
        self.poll_every = poll_every
        self.idle_poll = idle_poll
        self.watch_every = watch_every or poll_every or DEFAULT_WATCH_EVERY
        self.wake = wake
        self.clock = clock
        # read through the tracker at each reading: a slice may wrap its readings later (the
        # dashboard hides its own issue once the first reading has been checked)
        changes = self._changes if isinstance(self.tracker, ReadsDeltas) else None
        snapshot: Callable[[], Snapshot] = self._snapshot
        if locks is not None:  # a new reading: the next look lists the coordination issue again
            snapshot, changes = locks.reading(snapshot, changes)
        if self.limits.rules:  # every item read carries its conflict groups
            snapshot, changes = self.limits.tagging(snapshot, changes)
        self._reader = ReadyReader(snapshot, changes,
                                   children_block=children_block, clock=clock,
                                   resync_every=resync_every,
                                   global_cap=self.limits.global_cap,
                                   limits=self.limits.active)
        self._seen: ReadyView | None = None
        self.tally = Tally()
        self._renewers: dict[str, asyncio.Task[None]] = {}
        self._expires: dict[str, float] = {}  # held item -> when its lease ends (`clock`)
        self.fence = fence
        self._claimed_at: dict[str, float] = {}
        self._attempt: dict[str, int] = {}  # item -> the number of the attempt running now
        self._doomed: dict[str, str] = {}  # item -> why it fails without running (`guard`)
        self._held: dict[str, Callable[[str], None]] = {}
        self._no_reoffer: set[str] = set()
        self._failed_here: set[str] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._poked: asyncio.Event | None = None

    # -- reading ----------------------------------------------------------------------------

    def ready_set(self) -> ReadySet:
        """A fresh, complete Ready-set (blocking)."""
        return self._reader.ready_set()

    @property
    def last(self) -> ReadySet | None:
        """The Ready-set `next` last read (complete, built on first use), None before."""
        return self._reader.last

    def _snapshot(self) -> Snapshot:
        return self.tracker.snapshot()

    def _changes(self, *, full: bool = False) -> Snapshot | Delta:
        return cast(ReadsDeltas, self.tracker).changes(full=full)

    def prime(self, snapshot: Snapshot) -> None:
        """Start from `snapshot`, a full reading of this tracker made just before the run
        (`deltas.first_reading`, `jr2 work`'s check of the source), instead of reading the
        whole backlog again at the first `next`."""
        self.limits.tag(snapshot)
        self._reader.prime(snapshot)

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Call the tracker: in a worker thread, or on the loop when the tracker says its calls
        are brief and local (`Tracker.inline`, `local:`)."""
        if self.tracker.inline:
            return fn(*args)
        return await asyncio.to_thread(fn, *args)

    # -- the Source ---------------------------------------------------------------------------

    def as_source(self) -> Source:
        """The jr2 `Source` a Pool runs over."""
        return source(self.next, wake=self.wake, poll_every=self.poll_every,
                      idle_poll=self.idle_poll, settle=self.settle, started=self.started)

    def _offerable(self, item: SnapshotItem, mine: set[str]) -> bool:
        return (item.in_scope and item.id not in mine and item.id not in self.tally.skipped
                and item.id not in self._no_reoffer)

    async def next(self, active: list[str]) -> Next:
        self._stop_lapsed()
        try:
            return await self._call(self._claim_next, set(active))
        except UsageError as exc:
            if self._seen is None:
                raise
            # a person is half-way through an edit: keep working, look again on the next poll
            log.warning("%s: %s; keeping the last good state and looking again",
                        self.tracker.name, exc)
            return Next(item=None, open=self._seen.n_blocked + 1, held=1)

    def _claim_next(self, mine: set[str]) -> Next:
        """Read the Ready-set and claim the first ready item in scope we win (blocking: one
        thread hop for the whole of `next`, which is most of a cheap source's cost per item)."""
        view = self._reader.read()
        self._seen = view
        cleared = self._cleared(view)
        held = sum(1 for iid, h in view.holders.items() if iid not in mine and h != self.holder)
        held += view.waiting + view.limited
        blocked = view.n_blocked
        lost = 0
        passed = 0  # ready items in scope this pool will not take now (taken back)
        order: Iterable[SnapshotItem] = view.ready
        if self.tracker.spread_claims:
            order = [e.item for e in spread([ReadyEntry(it) for it in view.ready], self.holder)]
        try:
            for i, item in enumerate(order):
                if not self._offerable(item, mine):
                    # a skipped item is no open work: the run may end drained (it is named)
                    passed += (item.in_scope and item.id not in mine
                               and item.id not in self.tally.skipped)
                    continue
                asked = self.clock()  # the lease runs from before the claim reached the tracker
                try:
                    won = self._claims.claim(item, self.holder, self.lease)
                except ItemError as exc:
                    self._skip(item.id, str(exc))
                    continue
                if won:
                    self._claimed_at[item.id] = asked
                    self._attempt[item.id] = item.attempts + 1
                    self._count_deaths(item)
                    rest = view.n_ready - i - 1
                    return Next(item=WorkItem.from_snapshot(item, self.tracker.name),
                                open=rest + lost + passed + blocked + held, held=held + lost,
                                cleared=cleared)
                lost += 1
        finally:
            view.ready.close()
        return Next(item=None, open=blocked + held + lost + passed, held=held + lost,
                    cleared=cleared)

    def _count_deaths(self, item: SnapshotItem) -> None:
        """A claim just won from another holder whose lease lapsed: that pool died while the
        item ran. The second such death fails the item instead of running it again."""
        prior = item.claim
        if prior is None or prior.holder == self.holder:
            return
        deaths = prior.lapsed + 1
        if deaths >= DEATHS_FAIL:
            why = (f"its pool died {deaths} times while it ran (the lease lapsed unsettled): "
                   "the command may end its own pool, so it is not run again")
            self._doomed[item.id] = why
            log.warning("%s: %s: %s", self.tracker.name, item.id, why)

    def guard(self, worker: Callable[[WorkItem, Any], Awaitable[_T]]
              ) -> Callable[[WorkItem, Any], Coroutine[Any, Any, _T]]:
        """`worker`, except that an item whose pool died twice while it ran (see the module
        note) fails at once with why, without running: a final failure, so it is marked failed
        and waits for a person."""
        doomed = self._doomed

        async def guarded(item: WorkItem, ctx: Any) -> _T:
            why = doomed.pop(item.id, None)
            if why is not None:
                raise Failure(why)
            return await worker(item, ctx)

        return guarded

    def _cleared(self, view: ReadyView) -> tuple[str, ...]:
        """Items this pool failed whose failure mark is gone now (a person retried them, or they
        were done since): their failures leave this run's output."""
        if not self._failed_here:
            return ()
        gone = tuple(sorted(i for i in self._failed_here if not view.failed(i)))
        for iid in gone:
            self._failed_here.discard(iid)
            if self.tally.failed.pop(iid, None) is not None:
                self.tally.retried.add(iid)
        return gone

    def _skip(self, item_id: str, reason: str) -> None:
        """A claim the tracker refused for this one item: skip it for this run."""
        self.tally.skipped[item_id] = reason
        log.warning("%s: skipping %s for this run: %s", self.tracker.name, item_id, reason)

    def started(self, item_id: str, stop: Callable[[str], None]) -> None:
        loop = asyncio.get_running_loop()
        self._held[item_id] = stop
        self._leased(item_id, self._claimed_at.pop(item_id, self.clock()) + self.lease)
        self._renewers[item_id] = loop.create_task(self._keep_lease(item_id, stop),
                                                   name=f"lease:{item_id}")
        if self._watcher is None or self._watcher.done():
            self._poked = asyncio.Event()
            self._watcher = loop.create_task(self._watch_held(), name="watch-held")

    def lease_margin(self) -> float:
        """How long before its lease ends a worker whose renewals fail is stopped: a fifth of
        the lease, at least 1 s (a tracker that keeps whole-second timestamps can see a lease
        end up to a second early), but never more than a third of the lease, nor 60 s."""
        return min(max(1.0, self.lease / 5), self.lease / 3, 60.0)

    def _fenced_at(self, item_id: str) -> float:
        """When the supervisor ends `item_id`'s command: half a margin after this pool would
        have stopped it itself (so a running pool always stops it first), SIGKILL at the
        lease's end."""
        return self._expires.get(item_id, float("inf")) - self.lease_margin() / 2

    def _leased(self, item_id: str, expires: float) -> None:
        """`item_id`'s lease ends at `expires` now: tell the fence."""
        self._expires[item_id] = expires
        if self.fence is not None:
            self.fence.lease(item_id, self._fenced_at(item_id) - self.clock(),
                             self.lease_margin() / 2)

    def _stop_lapsed(self) -> bool:
        """Stop the workers whose lease ran out unrenewed (the pool was stopped past it), in
        one line for them all: the first thing a pool does on waking. True when any had."""
        now = self.clock()
        lapsed = [i for i in self._held if self._fenced_at(i) <= now]
        if lapsed:
            log.warning("%s: stopping %s: %s (another pool may hold %s now)", self.tracker.name,
                        ", ".join(lapsed), LAPSED, "them" if len(lapsed) > 1 else "it")
            for iid in lapsed:
                self._held.pop(iid)(LAPSED)
        return bool(lapsed)

    async def _keep_lease(self, item_id: str, stop: Callable[[str], None]) -> None:
        """Renew every lease/3; stop the worker before the lease ends if renewal fails.

        The lease is counted from before each request left (so from before the tracker
        stamped it), and a renewal that has not answered by the stop deadline is not waited
        for: the tracker client may still be retrying, but the worker stops in time.
        """
        every = self.lease / 3
        margin = self.lease_margin()
        while True:
            expires = self._expires[item_id]
            await asyncio.sleep(max(0.0, min(every, expires - margin - self.clock())))
            self._stop_lapsed()
            if item_id not in self._held:  # stopped: its settle ends this renewer
                return
            deadline = expires - margin - self.clock()
            if deadline <= 0:
                stop(f"lease of {item_id} could not be renewed in time")
                return
            asked = self.clock()
            try:
                ok = await wait_for(self._call(
                    self._claims.renew, item_id, self.holder, self.lease), deadline)
            except TimeoutError:
                stop(f"lease of {item_id} could not be renewed: the tracker did not answer "
                     "in time")
                return
            except ItemError as exc:
                stop(f"lease of {item_id} could not be renewed: {exc}")
                return
            except Exception as exc:
                log.warning("renewing the lease of %s failed: %s", item_id, exc)
                continue
            if not ok:
                stop(f"lease of {item_id} was lost to another pool")
                return
            self._leased(item_id, asked + self.lease)

    # -- people win ---------------------------------------------------------------------------

    def poke(self) -> None:
        """Watch the held items now (a webhook said the tracker changed). Call from the loop."""
        if self._poked is not None:
            self._poked.set()

    async def _watch_held(self) -> None:
        """Every `watch_every` (or at once when poked) while this pool holds items: stop the
        workers of items a person took back."""
        assert self._poked is not None
        while self._held:
            with contextlib.suppress(TimeoutError):
                await wait_for(self._poked.wait(), self.watch_every)
            self._poked.clear()
            self._stop_lapsed()
            if self._held:
                await self._taken_back(list(self._held), stop=True)

    async def _taken_back(self, ids: list[str], *, stop: bool) -> dict[str, str]:
        """Ask the tracker which of `ids` a person took back; with `stop`, stop their workers.
        A tracker that cannot tell now stops nothing (a worker is never stopped on a guess)."""
        try:
            taken = await self._call(self.tracker.watch, ids, self.holder)
        except Exception as exc:
            log.info("%s: could not watch the held items now: %s", self.tracker.name, exc)
            return {}
        out: dict[str, str] = {}
        for iid, why in taken.items():
            if iid not in ids:
                continue
            out[iid] = why
            self.tally.stopped[iid] = why
            if why == CLAIM_REMOVED:
                self._no_reoffer.add(iid)
            halt = self._held.pop(iid, None) if stop else None
            if halt is not None:
                log.warning("%s: stopping %s: a person took it back (%s)", self.tracker.name,
                            iid, why)
                halt(f"a person took {iid} back: {why}")
        return out

    # -- settle -------------------------------------------------------------------------------

    async def settle(self, item_id: str, outcome: Outcome) -> Outcome | None:
        """End the claim in the tracker (`_settle`). A worker that failed because the state
        directory's disk is full (`detail["state_full"]`) then ends the run (`StateFull`): the
        Pool stops the other workers and their claims are released. What a worker finished
        after its lease lapsed, or after its command ran past the fence's deadline (a renewal
        that came too late), is released instead (`LAPSED`)."""
        stale = None
        if outcome.status != "cancelled" and (self._fenced_at(item_id) <= self.clock() or (
                self.fence is not None and self.fence.lapsed(item_id))):
            self._stop_lapsed()
            outcome = stale = Outcome("cancelled", failure=Failure(LAPSED))
        told = await self._settle(item_id, outcome)
        if stale is not None:
            return told or stale
        failure = outcome.failure
        detail = failure.detail if failure is not None else None
        if (outcome.status == "failed" and failure is not None and isinstance(detail, dict)
                and detail.get("state_full")):
            raise StateFull(f"{failure.reason}; {item_id} failed and the run stops (claims "
                            "released)")
        return told

    async def _settle(self, item_id: str, outcome: Outcome) -> Outcome | None:
        """End the claim in the tracker. A transient failure to retry (`--max-attempts`) is
        recorded with its attempt, logged (reason, attempt, retry time) and returned as a
        `cancelled` Outcome: it is not the run's failure, the item is offered again (by this pool
        or another, through the Pool's re-offer extension)."""
        self._held.pop(item_id, None)
        self._expires.pop(item_id, None)
        if self.fence is not None:
            self.fence.drop(item_id)
        task = self._renewers.pop(item_id, None)
        if task is not None:
            task.cancel()
            await asyncio.wait([task])  # its end, without taking its cancellation for ours
        number = self._attempt.pop(item_id, 1)
        # a person may have taken it back since the last watch: never overwrite them
        if (outcome.status != "cancelled" and item_id not in self.tally.stopped
                and await self._taken_back([item_id], stop=False)):
            outcome = Outcome("cancelled")
        told = outcome
        request, outcome = self._gate_asked(item_id, outcome)
        if request is not None:
            return await self._park(item_id, request)
        retry_after: datetime | None = None
        try:
            if outcome.status != "cancelled" and self.policy.max_attempts > 1:
                if number < self.policy.max_attempts and self.policy.is_transient(outcome):
                    retry_after = datetime.fromtimestamp(
                        self.clock() + self.policy.delay(number), UTC)
                settle: Any = self._claims.settle  # takes an Attempt: KeepsAttempts, checked
                await self._call(settle, item_id, self.holder, outcome,
                                 Attempt(number, retry_after))
            else:
                await self._call(self._claims.settle, item_id, self.holder, outcome)
            if outcome.status == "failed" and retry_after is None:
                self._failed_here.add(item_id)
        except ItemError as exc:
            self.tally.unsettled[item_id] = str(exc)
            log.warning("%s: could not settle %s (%s): %s", self.tracker.name, item_id,
                        outcome.status, exc)
            return None
        if retry_after is not None and outcome.failure is not None:
            log.warning("%s: %s: attempt %d of %d, offered again after %s", item_id,
                        outcome.failure.reason, number, self.policy.max_attempts,
                        retry_after.strftime("%Y-%m-%dT%H:%M:%SZ"))
            self.tally.refiled(item_id, retry=True)
            return Outcome("cancelled")
        return outcome if outcome is not told else None  # a gate this run lacks: re-filed

    # -- approval gates -----------------------------------------------------------------------

    def _gate_asked(self, item_id: str, outcome: Outcome) -> tuple[ApprovalRequest | None, Outcome]:
        """The gate a failed worker asked for (exit `EX_AWAIT_APPROVAL`), when it is one of the
        run's `--gate`s; an ask this run cannot honour becomes a failure saying why."""
        failure = outcome.failure
        detail = failure.detail if failure is not None else None
        if (outcome.status != "failed" or not isinstance(detail, dict)
                or detail.get("exit_code") != EX_AWAIT_APPROVAL):
            return None, outcome
        asked = detail.get("await_approval")
        if isinstance(asked, dict) and isinstance(asked.get("gate"), str):
            reason = asked.get("reason")
            request: ApprovalRequest | None = ApprovalRequest(
                asked["gate"], reason if isinstance(reason, str) else None)
        elif len(self.gates) == 1:
            request = ApprovalRequest(next(iter(self.gates)))
        else:
            request = None
        if request is not None and request.name in self.gates:
            return request, outcome
        given = ", ".join(sorted(self.gates)) or "none"
        what = (f"gate {request.name!r}" if request is not None
                else "a gate it did not name (print `jr2: await-approval NAME`)")
        why = f"asked for approval of {what}, which this run does not have (--gate: {given})"
        return None, Outcome("failed", failure=Failure(why, detail=detail))

    async def _park(self, item_id: str, request: ApprovalRequest) -> Outcome | None:
        """Park the item awaiting approval of `request` (the tracker releases the claim)."""
        parker = self._locks or self.tracker
        if not isinstance(parker, LockedClaims | KeepsApprovals):  # refused at start: --gate
            raise UsageError(f"{self.tracker.name}: this source cannot park an item")
        try:
            await self._call(parker.park, item_id, self.holder, request)
        except ItemError as exc:
            self.tally.unsettled[item_id] = str(exc)
            log.warning("%s: could not park %s awaiting approval: %s", self.tracker.name,
                        item_id, exc)
            return None
        self.tally.parked[item_id] = request.name
        self.tally.refiled(item_id, retry=False)
        why = f": {request.reason}" if request.reason else ""
        log.warning("%s: %s awaits approval of gate %s%s", self.tracker.name, item_id,
                    request.name, why)
        return Outcome("cancelled")
