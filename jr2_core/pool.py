"""The Pool: one worker per item from a Source, at most `cap` at once (the seed, in Python).

* `next` is called only while a slot is free; when it gives nothing and workers run, the Pool
  waits for a worker to finish, a wake, or `poll_every`. A wake during `next` makes it ask again.
* The run ends when no worker runs and `next` gave nothing: `drained` when `open` is 0, else
  `deadlocked`. `held > 0` makes an idle Pool wait for other pools; `on_drained="wait"` waits for
  new work until interrupted.
* A worker's `Failure` is recorded and its sandbox deleted. A worker its Source stops (a lease
  lost, a person took the item back) ends `cancelled`, which does not fail the run. A Source may
  offer an id again after `cancelled` or `failed`; offering again an id that ended `done` is a
  defect. The output keeps the last outcome per id and an `attempts` count; `settle` may return
  a replacement Outcome.
* Any other exception is a defect: the other workers are cancelled, their items settled
  `cancelled`, and the run ends `error`. So does a worker task that ends without finishing.

Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .errors import PoolDefect, UsageError
from .events import Event, EventDef
from .failure import Failure
from .jsondata import jsonable
from .machine import Context, Machine, as_machine
from .runs import RunEvent
from .timeouts import wait_for

if TYPE_CHECKING:
    from pydantic import BaseModel

DEFAULT_IDLE_POLL = 5.0


@dataclass(slots=True)
class Next:
    """An answer of `next`: an item, or `item=None` with how many items are `open` (exist, not
    ready) and, as extensions, how many other pools `held` now and which ids' failures in this
    run a person has since `cleared` (retried): they leave the output's failures."""

    item: Any = None
    open: int = 0
    held: int = 0
    cleared: tuple[str, ...] = ()


@dataclass(slots=True)
class Outcome:
    """What `settle` is told: `done` (with the output), `failed` (with the Failure) or
    `cancelled` (the run or the Source stopped the worker; release the claim, record nothing;
    `failure` says why when the Source stopped it)."""

    status: Literal["done", "failed", "cancelled"]
    output: Any = None
    failure: Failure | None = None


@dataclass(slots=True)
class FailureInfo:
    """A Failure in a Pool's output."""

    reason: str
    detail: Any = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (`detail`'s dataclasses and pydantic models dumped)."""
        return {"reason": self.reason, "detail": jsonable(self.detail)}


@dataclass(slots=True)
class RunOutput:
    """A Pool's output: how it ended, each finished worker's output, each failure, each worker its
    Source stopped (`cancelled`, with why), and how many times each id was started (`attempts`).
    An id is in at most one of `items`, `failures` and `cancelled`: its last outcome."""

    status: Literal["drained", "deadlocked"]
    items: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, FailureInfo] = field(default_factory=dict)
    cancelled: dict[str, FailureInfo] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data: the fields, with the items' outputs and failures dumped."""
        return {"status": self.status, "items": jsonable(self.items),
                "failures": {k: f.to_json() for k, f in self.failures.items()},
                "cancelled": {k: f.to_json() for k, f in self.cancelled.items()},
                "attempts": dict(self.attempts)}


NextFn = Callable[[list[str]], Any]
SettleFn = Callable[[str, Outcome], Any]
StartedFn = Callable[[str, Callable[[str], None]], Any]


class Source:
    """Where a Pool gets its items (the seed's SourceSpec). Make one with `source()`."""

    def __init__(self, next: NextFn, *, wake: EventDef | None = None,
                 poll_every: float | None = None, idle_poll: float = DEFAULT_IDLE_POLL,
                 settle: SettleFn | None = None, started: StartedFn | None = None) -> None:
        if not callable(next):
            raise UsageError("source(next=...) must be a function")
        if poll_every is not None and not poll_every > 0:
            raise UsageError(f"poll_every must be a positive number of seconds, not {poll_every!r}")
        if not idle_poll > 0:
            raise UsageError(f"idle_poll must be a positive number of seconds, not {idle_poll!r}")
        self.next = next
        self.wake = wake
        self.poll_every = poll_every
        self.idle_poll = idle_poll
        self.settle = settle
        self.started = started
        self._next_async = inspect.iscoroutinefunction(next)
        self._settle_async = settle is not None and inspect.iscoroutinefunction(settle)


def source(next: NextFn, *, wake: EventDef | None = None, poll_every: float | None = None,
           idle_poll: float = DEFAULT_IDLE_POLL, settle: SettleFn | None = None,
           started: StartedFn | None = None) -> Source:
    """Declare a Source. `next(active)` (sync or async) returns an item, `None`, or `Next`;
    `wake` is the event that makes a waiting Pool ask again; `poll_every` (seconds) asks again
    while it waits. Extensions: `settle(item_id, outcome)` is called when a worker ends (it may
    return another `Outcome` that the run records instead: a failure the Source will offer
    again, a retry, is returned as `cancelled`, so it does not fail the run);
    `started(item_id, stop)` gets a function that stops that worker (it ends `cancelled` with
    the reason, not `failed`; the Source releases the item and may offer it again as a new
    attempt); `idle_poll` is the wait while other pools hold items.
    """
    return Source(next, wake=wake, poll_every=poll_every, idle_poll=idle_poll, settle=settle,
                  started=started)


_GAVE_ITEM = Next()  # what `_loop` remembers of an answer that was a bare item


def _as_next(res: Any) -> Next:
    """A `next` answer as a `Next`: None, `Next`, the seed's `{item, open}` dict, or an item."""
    if res is None:
        return Next()
    if isinstance(res, Next):
        return res
    if isinstance(res, dict) and set(res) <= {"item", "open", "held"} and "item" in res:
        return Next(item=res["item"], open=int(res.get("open", 0)), held=int(res.get("held", 0)))
    return Next(item=res)


def _check_cap(cap: Any) -> int:
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise PoolDefect(f"cap must be a positive int, not {cap!r}")
    return cap


class Pool(Machine):
    """A Machine that runs one worker Machine per item of a Source."""

    def __init__(self, worker: Machine | Callable[..., Any], *, id: str, source: Source,
                 item_id: Callable[[Any], str], cap: int | Callable[[Any], int] = 1,
                 item_input: Callable[[Any, Any], Any] | None = None,
                 input: type[BaseModel] | None = None,
                 failures: Literal["fail", "report"] = "fail",
                 on_drained: Literal["final", "wait"] = "final") -> None:
        if not isinstance(source, Source):
            raise UsageError("pool(source=...) must be made with source()")
        if not callable(cap):
            try:
                _check_cap(cap)
            except PoolDefect as exc:
                raise UsageError(str(exc)) from None
        if failures not in ("fail", "report"):
            raise UsageError(f"failures must be 'fail' or 'report', not {failures!r}")
        if on_drained not in ("final", "wait"):
            raise UsageError(f"on_drained must be 'final' or 'wait', not {on_drained!r}")
        self.worker = as_machine(worker)
        self.id = id
        self.source = source
        self.item_id = item_id
        self.cap = cap
        self.item_input = item_input
        self.input_model = input
        self.failures = failures
        self.on_drained = on_drained

    @property
    def vocabulary(self) -> dict[str, EventDef]:
        """Only the Source's wake event (the seed): each worker keeps its own."""
        wake = self.source.wake
        return {wake.name: wake} if wake is not None else {}

    async def execute(self, input: Any, ctx: Context) -> RunOutput:
        if self.input_model is not None and not isinstance(input, self.input_model):
            input = self.input_model.model_validate({} if input is None else input)
        output = await _PoolRun(self, input, ctx).execute()
        if output.failures and self.failures == "fail":
            n, m = len(output.failures), len(output.items) + len(output.failures)
            raise Failure(f"{n} of {m} items failed", detail=output)
        return output


def pool(worker: Machine | Callable[..., Any], *, id: str, source: Source,
         item_id: Callable[[Any], str], cap: int | Callable[[Any], int] = 1,
         item_input: Callable[[Any, Any], Any] | None = None,
         input: type[BaseModel] | None = None, failures: Literal["fail", "report"] = "fail",
         on_drained: Literal["final", "wait"] = "final") -> Pool:
    """Make a Pool: one `worker` per item that `source` gives, at most `cap` at once."""
    return Pool(worker, id=id, source=source, item_id=item_id, cap=cap, item_input=item_input,
                input=input, failures=failures, on_drained=on_drained)


class _PoolRun:
    """The state of one execution of a Pool."""

    def __init__(self, pool: Pool, input: Any, ctx: Context) -> None:
        self.pool = pool
        self.src = pool.source
        self.input = input
        self.ctx = ctx
        self.run = ctx.run
        self.active: dict[str, asyncio.Task[None]] = {}
        self.active_ids: list[str] = []  # `active`'s keys: what `next` gets a copy of
        self.items: dict[str, Any] = {}
        self.failures: dict[str, FailureInfo] = {}
        self.cancelled: dict[str, FailureInfo] = {}
        self.attempts: dict[str, int] = {}
        self.stops: dict[str, str] = {}
        self.settling: set[str] = set()  # ids whose worker has ended, being settled
        self.defect: BaseException | None = None
        self._ending = False  # `_cancel_all` runs: the workers' tasks are cancelled on purpose
        self._signal = asyncio.Event()
        self._wake_seq = 0  # bumped by a wake and a finished worker: `next` is asked again
        self._loop_ = asyncio.get_running_loop()
        self.execute_worker = pool.worker.execute

    # -- the loop ----------------------------------------------------------------------------

    async def execute(self) -> RunOutput:
        cap = _check_cap(self.pool.cap(self.input) if callable(self.pool.cap) else self.pool.cap)
        gate_id = f"{self.ctx.path}source"
        wake = self.src.wake
        if wake is not None:
            self.run._open_gate(gate_id, [wake], {"pool": self.pool.id}, self._on_wake,
                                persistent=True)
        try:
            status = await self._loop(cap)
        except BaseException:
            await self._cancel_all()
            raise
        finally:
            if wake is not None:
                self.run._close_gate(gate_id)
        return RunOutput(status=status, items=self.items, failures=self.failures,
                         cancelled=self.cancelled, attempts=self.attempts)

    async def _loop(self, cap: int) -> Literal["drained", "deadlocked"]:
        last = Next()
        waiting = self.pool.on_drained == "wait"
        while True:
            while self.defect is None and len(self.active) < cap:
                seq = self._wake_seq
                # a sync `next` is called without a coroutine of our own, and copying a list is
                # a third of the cost of listing a dict's keys: per item, these and the fast
                # path of `_as_next` are most of what the Pool adds to a bare loop
                src = self.src
                res = (await src.next(self.active_ids.copy()) if src._next_async
                       else src.next(self.active_ids.copy()))
                if type(res) is Next or res is None or isinstance(res, (Next, dict)):
                    last = _as_next(res)
                    item = last.item
                    for iid in last.cleared:
                        self.failures.pop(iid, None)
                else:  # a bare item: no `Next` to build (open and held are 0)
                    last, item = _GAVE_ITEM, res
                if item is not None:
                    self._start(item)
                elif self._wake_seq == seq:
                    break
            if self.defect is not None:
                raise self.defect
            if not self.active:
                if last.held > 0 or waiting:
                    await self._wait(self.src.poll_every or self.src.idle_poll)
                    continue
                return "drained" if last.open == 0 else "deadlocked"
            free = len(self.active) < cap
            await self._wait(self.src.poll_every if free else None)

    async def _wait(self, timeout: float | None) -> None:
        self._signal.clear()
        if timeout is None:
            await self._signal.wait()
            return
        with contextlib.suppress(TimeoutError):
            await wait_for(self._signal.wait(), timeout)

    def _on_wake(self, event: Event) -> None:
        self._wake_seq += 1
        self._signal.set()

    def _start(self, item: Any) -> None:
        try:
            iid = self.pool.item_id(item)
        except Exception as exc:
            raise PoolDefect(f"pool {self.pool.id!r}: item_id raised {exc!r}") from exc
        if not isinstance(iid, str) or not iid:
            raise PoolDefect(f"pool {self.pool.id!r}: item_id must return a non-empty str, "
                             f"not {iid!r}")
        active = self.active
        if iid in active:
            raise PoolDefect(f"pool {self.pool.id!r}: next gave item {iid!r}, which a worker "
                             "has now")
        if iid in self.items and self.pool.on_drained != "wait":
            raise PoolDefect(f"pool {self.pool.id!r}: next gave item {iid!r} again after its "
                             "worker finished it")
        self.attempts[iid] = self.attempts.get(iid, 0) + 1
        wi = self.pool.item_input
        winput = wi(item, self.input) if wi is not None else item
        ctx = self.ctx.child(iid)
        active[iid] = self._loop_.create_task(self._work(iid, winput, ctx))
        self.active_ids.append(iid)
        run = self.run
        if run.observers:
            run._emit(RunEvent("worker_started", run.id, item_id=ctx.path.removesuffix(".")))
        started = self.src.started
        if started is not None:
            started(iid, functools.partial(self._stop, iid))

    def _stop(self, iid: str, reason: str) -> None:
        """Stop `iid`'s worker. Once it has ended, a stop is too late and does nothing: a
        cancellation would land in the settle, and the item would never be finished."""
        task = self.active.get(iid)
        if task is not None and iid not in self.settling:
            self.stops[iid] = reason
            task.cancel()
            # a task cancelled before its first step never runs `_work`
            task.add_done_callback(functools.partial(self._ended, iid))

    async def _work(self, iid: str, winput: Any, ctx: Context) -> None:
        """Run `iid`'s worker, settle its outcome and finish it. Its task ending any other way (a
        cancellation nobody asked for, an error past this handling) is `_ended_unfinished`."""
        outcome: Outcome
        try:
            try:
                outcome = Outcome("done", await self.execute_worker(winput, ctx))
            except Failure as f:
                outcome = Outcome("failed", failure=f)
            except asyncio.CancelledError:
                reason = self.stops.pop(iid, None)
                if reason is None:
                    raise
                # stopped by its Source (its lease was lost, a person took the item back): the
                # item did not fail, so the Source is told `cancelled`, releases it, and may
                # offer it again
                outcome = Outcome("cancelled", failure=Failure(reason))
            except Exception as exc:
                self.defect = exc
                outcome = Outcome("cancelled")
            self.stops.pop(iid, None)  # a stop the worker outlived (it caught the cancellation)
            if outcome.failure is not None:
                ctx._delete_sandbox()
            if self.src.settle is not None:  # no coroutine per item when there is nothing to call
                self.settling.add(iid)
                try:
                    told = await self._settle(iid, outcome)
                    if isinstance(told, Outcome):  # the Source re-filed it (a retry: `cancelled`)
                        outcome = told
                except Exception as exc:
                    self.defect = self.defect or exc
                self.settling.discard(iid)
            self._finish(iid, outcome, ctx)
        except BaseException:
            self._ended_unfinished(iid)
            raise

    async def _settle(self, iid: str, outcome: Outcome) -> Any:
        settle = self.src.settle
        if settle is None:
            return None
        if self.src._settle_async:
            return await settle(iid, outcome)
        return settle(iid, outcome)

    def _finish(self, iid: str, outcome: Outcome, ctx: Context) -> None:
        """Record `iid`'s last outcome and free its slot (an id in `items` ended `done`)."""
        del self.active[iid]
        self.active_ids.remove(iid)
        if self.attempts[iid] > 1:  # the last outcome per id: a re-offered id keeps its latest
            self.items.pop(iid, None)
            self.failures.pop(iid, None)
            self.cancelled.pop(iid, None)
        failure = outcome.failure
        if outcome.status == "done":
            self.items[iid] = outcome.output
        elif failure is not None:
            info = FailureInfo(reason=failure.reason, detail=failure.detail)
            (self.failures if outcome.status == "failed" else self.cancelled)[iid] = info
        self._wake_seq += 1
        self._signal.set()
        if self.run.observers:
            kind = ("worker_finished" if outcome.status == "done" else
                    "worker_failed" if outcome.status == "failed" else "worker_cancelled")
            detail = outcome.failure.reason if outcome.failure is not None else None
            path = ctx.path.removesuffix(".")
            self.run._emit(RunEvent(kind, self.run.id, item_id=path, detail=detail))

    def _ended(self, iid: str, task: asyncio.Task[None]) -> None:
        """The end of a stopped worker's task: one cancelled before it ran is unfinished."""
        if task.cancelled() or task.exception() is not None:
            self._ended_unfinished(iid)

    def _ended_unfinished(self, iid: str) -> None:
        """A worker's task that ended without finishing its item (cancelled by someone else, or
        an error past `_work`'s handling) is a defect: the run ends `error`, its claims
        released, instead of waiting for that item for good."""
        if self._ending:
            return
        self.defect = self.defect or PoolDefect(
            f"pool {self.pool.id!r}: the worker of {iid!r} ended without finishing its item")
        self._signal.set()

    async def _cancel_all(self) -> None:
        """Cancel every running worker and settle each as `cancelled` (claims released), and
        each item whose worker's task ended without finishing it (`_ended`)."""
        self._ending = True
        tasks = {iid: t for iid, t in self.active.items() if not t.done()}
        for t in tasks.values():
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks.values(), return_exceptions=True)
        for iid in list(self.active):
            # the run is already ending: a settle that fails leaves a lease that will expire
            with contextlib.suppress(Exception):
                await asyncio.shield(self._settle(iid, Outcome("cancelled")))
            if self.run.observers:
                self.run._emit(RunEvent("worker_cancelled", self.run.id,
                                        item_id=f"{self.ctx.path}{iid}"))
        self.active.clear()
        self.active_ids.clear()
