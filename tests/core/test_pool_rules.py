"""One test per rule of the seed (shared/seeds/pools-and-sources.md), named after the rule."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from jr2_core import (
    Context,
    Failure,
    Next,
    Outcome,
    PoolDefect,
    RunOutput,
    UsageError,
    define_event,
    pool,
    source,
    start,
)
from jr2_core import run as run_machine

wake_ev = define_event(name="changed", description="look again")
go = define_event(name="go")


class Queue:
    """An in-memory Source that records every call of next."""

    def __init__(self, items: list[str], open_after: int = 0) -> None:
        self.items = list(items)
        self.calls: list[list[str]] = []
        self.open_after = open_after

    def next(self, active: list[str]) -> Any:
        self.calls.append(list(active))
        if self.items:
            return self.items.pop(0)
        return Next(item=None, open=self.open_after)


async def settle_loop(n: int = 20) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def noop(item: Any, ctx: Context) -> Any:
    return item


def gated(name: str = "review") -> Any:
    async def worker(item: Any, ctx: Context) -> Any:
        await ctx.gate(name, accepts=[go])
        return item

    return worker


# -- How a Pool behaves ------------------------------------------------------------------------


async def test_next_is_called_when_the_run_starts_with_the_active_ids() -> None:
    q = Queue(["a"])
    r = start(pool(gated(), id="p", source=source(q.next), item_id=str, cap=2))
    await settle_loop()
    assert q.calls[:2] == [[], ["a"]]
    r.send("a.review", "go")
    await r.result()


async def test_when_next_gives_an_item_the_pool_starts_a_worker_and_calls_next_again() -> None:
    q = Queue(["a", "b"])
    r = start(pool(gated(), id="p", source=source(q.next), item_id=str, cap=5))
    await settle_loop()
    assert sorted(g.id for g in r.gates()) == ["a.review", "b.review"]
    assert q.calls == [[], ["a"], ["a", "b"]]
    r.send("a.review", "go")
    r.send("b.review", "go")
    await r.result()


async def test_when_cap_workers_run_the_pool_does_not_call_next() -> None:
    q = Queue(["a", "b", "c"])
    r = start(pool(gated(), id="p", source=source(q.next), item_id=str, cap=2))
    await settle_loop()
    assert len(q.calls) == 2  # a, b started; no third call while at cap
    r.send("a.review", "go")
    await settle_loop()
    assert q.calls[2] == ["b"]  # a finished worker freed a slot: next is called again
    r.send("b.review", "go")
    r.send("c.review", "go")
    await r.result()


async def test_when_no_item_is_ready_and_workers_run_the_pool_waits_for_a_worker() -> None:
    q = Queue(["a"], open_after=1)
    r = start(pool(gated(), id="p", source=source(q.next), item_id=str, cap=2))
    await settle_loop()
    assert len(q.calls) == 2
    await asyncio.sleep(0.05)
    assert len(q.calls) == 2  # no busy loop while waiting
    assert not r.done
    r.send("a.review", "go")
    await r.result()
    assert len(q.calls) == 3


async def test_when_no_item_is_ready_and_workers_run_the_wake_event_calls_next_again() -> None:
    q = Queue(["a"])
    r = start(pool(gated(), id="p", source=source(q.next, wake=wake_ev), item_id=str, cap=2))
    await settle_loop()
    assert len(q.calls) == 2
    q.items.append("b")
    r.send("source", "changed")
    await settle_loop()
    assert len(q.calls) == 3 and "b.review" in {g.id for g in r.gates()}
    r.send("a.review", "go")
    r.send("b.review", "go")
    assert (await r.result()).output.status == "drained"


async def test_when_no_item_is_ready_and_workers_run_poll_every_calls_next_again() -> None:
    q = Queue(["a"])
    r = start(pool(gated(), id="p", source=source(q.next, poll_every=0.02), item_id=str, cap=2))
    await asyncio.sleep(0.15)
    assert len(q.calls) >= 5
    r.send("a.review", "go")
    await r.result()


async def test_when_no_worker_runs_and_next_gives_no_item_the_run_ends() -> None:
    q = Queue([])
    res = await run_machine(pool(noop, id="p", source=source(q.next), item_id=str))
    assert res.state == "done" and q.calls == [[]]


# -- How the run ends --------------------------------------------------------------------------


async def test_the_output_holds_items_and_failures_by_item_id() -> None:
    async def worker(item: str, ctx: Context) -> str:
        if item == "bad":
            raise Failure("no good", detail={"x": 1})
        return item.upper()

    q = Queue(["a", "bad"])
    res = await run_machine(
        pool(worker, id="p", source=source(q.next), item_id=str, failures="report")
    )
    assert res.output.items == {"a": "A"}
    assert res.output.failures["bad"].reason == "no good"
    assert res.output.failures["bad"].detail == {"x": 1}


async def test_a_worker_failure_is_caught_its_sandbox_deleted_and_others_go_on() -> None:
    seen: dict[str, Any] = {}

    async def worker(item: str, ctx: Context) -> str:
        (ctx.sandbox / "f.txt").write_text("x")
        seen[item] = ctx.sandbox
        if item == "bad":
            raise Failure("broke")
        return item

    q = Queue(["bad", "ok"])
    res = await run_machine(
        pool(worker, id="p", source=source(q.next), item_id=str, failures="report")
    )
    assert not seen["bad"].exists()
    assert seen["ok"].exists()
    assert res.output.items == {"ok": "ok"}


async def test_a_defect_in_a_worker_is_not_caught_and_ends_the_run_error() -> None:
    settled: list[tuple[str, str]] = []
    cancelled = asyncio.Event()

    async def worker(item: str, ctx: Context) -> str:
        if item == "boom":
            await asyncio.sleep(0.01)
            raise KeyError("oops")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return item

    q = Queue(["slow", "boom"])
    src = source(q.next, settle=lambda i, o: settled.append((i, o.status)))
    res = await run_machine(pool(worker, id="p", source=src, item_id=str, cap=2))
    assert res.state == "error"
    assert "KeyError" in (res.error or "") and "oops" in (res.traceback or "")
    assert cancelled.is_set()
    assert sorted(settled) == [("boom", "cancelled"), ("slow", "cancelled")]
    assert res.exit_code == 4


async def test_failures_end_the_run_failed_by_default_with_n_of_m_items_failed() -> None:
    async def worker(item: str, ctx: Context) -> str:
        if item != "a":
            raise Failure(f"{item} failed")
        return item

    q = Queue(["a", "b", "c"], open_after=2)
    res = await run_machine(pool(worker, id="p", source=source(q.next), item_id=str))
    assert res.state == "failed"
    assert res.failure is not None and res.failure["reason"] == "2 of 3 items failed"
    detail = res.failure["detail"]
    assert detail["status"] == "deadlocked" and set(detail["failures"]) == {"b", "c"}
    assert res.exit_code == 1


async def test_failures_report_ends_done_with_the_failures_in_the_output() -> None:
    async def worker(item: str, ctx: Context) -> str:
        raise Failure("no")

    q = Queue(["a"])
    res = await run_machine(
        pool(worker, id="p", source=source(q.next), item_id=str, failures="report")
    )
    assert res.state == "done" and list(res.output.failures) == ["a"]
    assert res.exit_code == 0


@pytest.mark.parametrize(
    ("last", "status", "code"),
    [(None, "drained", 0), (Next(item=None, open=0), "drained", 0),
     (Next(item=None, open=3), "deadlocked", 3), ({"item": None, "open": 2}, "deadlocked", 3)],
)
async def test_status_comes_from_the_last_answer_of_next(last: Any, status: str,
                                                         code: int) -> None:
    answers = ["a", last]
    res = await run_machine(pool(noop, id="p", source=source(lambda active: answers.pop(0)),
                                 item_id=str))
    assert isinstance(res.output, RunOutput) and res.output.status == status
    assert res.exit_code == code


async def test_while_workers_wait_at_gates_the_run_does_not_end() -> None:
    q = Queue(["a"])
    r = start(pool(gated(), id="p", source=source(q.next), item_id=str))
    await asyncio.sleep(0.05)
    assert not r.done and [g.id for g in r.gates()] == ["a.review"]
    r.send("a.review", "go")
    await r.result()


# -- Inputs, Gates and the wake event ------------------------------------------------------------


class RunIn(BaseModel):
    prefix: str
    width: int = 2


async def test_a_worker_gets_its_item_or_what_item_input_makes_of_it() -> None:
    got: list[Any] = []

    async def worker(x: Any, ctx: Context) -> Any:
        got.append(x)
        return x

    q = Queue(["a"])
    await run_machine(pool(worker, id="p", source=source(q.next), item_id=str))
    q2 = Queue(["b"])
    await run_machine(
        pool(worker, id="p", source=source(q2.next), item_id=str, input=RunIn,
             item_input=lambda item, inp: f"{inp.prefix}{item}"),
        {"prefix": "br-"},
    )
    assert got == ["a", "br-b"]


async def test_the_pool_does_not_give_the_run_input_to_a_worker() -> None:
    got: list[Any] = []

    async def worker(x: Any, ctx: Context) -> Any:
        got.append(x)

    await run_machine(pool(worker, id="p", source=source(Queue(["a"]).next), item_id=str,
                           input=RunIn), {"prefix": "zz"})
    assert got == ["a"]


async def test_the_run_input_is_the_pools_own_schema_and_cap_reads_it() -> None:
    q = Queue(["a", "b", "c"])
    p = pool(gated(), id="p", source=source(q.next), item_id=str, input=RunIn,
             cap=lambda inp: inp.width)
    r = start(p, {"prefix": "x", "width": 3})
    await settle_loop()
    assert len(r.gates()) == 3
    for g in ("a", "b", "c"):
        r.send(f"{g}.review", "go")
    await r.result()
    with pytest.raises(Exception, match="prefix"):
        start(p, {"width": 1})


async def test_the_gates_of_a_worker_start_with_the_id_of_its_item() -> None:
    r = start(pool(gated("review"), id="p", source=source(Queue(["T-1"]).next), item_id=str))
    await settle_loop()
    assert [g.id for g in r.gates()] == ["T-1.review"]
    r.send("T-1.review", "go")
    await r.result()


async def test_the_pool_takes_the_wake_event_at_a_gate_named_source() -> None:
    r = start(pool(gated(), id="p", source=source(Queue(["a"]).next, wake=wake_ev),
                   item_id=str))
    await settle_loop()
    src = [g for g in r.gates() if g.id == "source"]
    assert src and src[0].accepts == ["changed"]
    r.send("a.review", "go")
    await r.result()


async def test_inside_another_machine_the_wake_gate_is_path_dot_source() -> None:
    inner = pool(gated(), id="inner", source=source(Queue(["x"]).next, wake=wake_ev),
                 item_id=str)
    outer = pool(inner, id="outer", source=source(Queue(["A"]).next), item_id=str,
                 item_input=lambda item, inp: None)
    r = start(outer)
    await settle_loop(40)
    assert sorted(g.id for g in r.gates()) == ["A.source", "A.x.review"]
    r.send("A.x.review", "go")
    res = await r.result()
    assert res.output.items["A"].items == {"x": "x"}


async def test_the_vocabulary_of_a_pool_is_only_its_wake_event() -> None:
    p = pool(gated(), id="p", source=source(Queue([]).next, wake=wake_ev), item_id=str)
    assert dict(p.vocabulary) == {"changed": wake_ev}
    assert dict(pool(noop, id="q", source=source(Queue([]).next), item_id=str).vocabulary) == {}


# -- Rules ---------------------------------------------------------------------------------------


async def test_item_id_is_the_worker_id_and_the_key_in_items() -> None:
    q = Queue(["a"])
    res = await run_machine(pool(noop, id="p", source=source(lambda act: q.next(act)),
                                 item_id=lambda s: f"id-{s}"))
    assert list(res.output.items) == ["id-a"]


async def test_next_must_not_give_an_item_that_a_worker_has_now() -> None:
    answers: list[Any] = ["a", "a"]
    res = await run_machine(pool(gated(), id="p", source=source(lambda act: answers.pop(0)),
                                 item_id=str, cap=2))
    assert res.state == "error" and "'a'" in (res.error or "") and "has now" in (res.error or "")


async def test_next_must_not_give_an_item_that_a_worker_finished() -> None:
    answers: list[Any] = ["a", "a"]
    res = await run_machine(pool(noop, id="p", source=source(lambda act: answers.pop(0)),
                                 item_id=str))
    assert res.state == "error" and "again after its worker finished" in (res.error or "")


async def test_cap_is_a_number_or_a_function_and_defaults_to_one() -> None:
    q = Queue(["a", "b"])
    r = start(pool(gated(), id="p", source=source(q.next), item_id=str))
    await settle_loop()
    assert len(r.gates()) == 1
    r.send("a.review", "go")
    await settle_loop()
    r.send("b.review", "go")
    await r.result()


@pytest.mark.parametrize("cap", [0, -1, 1.5, "2", True])
def test_a_cap_that_is_not_a_positive_int_is_refused(cap: Any) -> None:
    with pytest.raises(UsageError, match="cap must be a positive int"):
        pool(noop, id="p", source=source(Queue([]).next), item_id=str, cap=cap)


async def test_a_cap_function_that_returns_a_bad_cap_ends_the_run_error() -> None:
    res = await run_machine(pool(noop, id="p", source=source(Queue([]).next), item_id=str,
                                 cap=lambda inp: 0))
    assert res.state == "error" and "cap must be a positive int" in (res.error or "")


def test_on_drained_takes_final_or_wait() -> None:
    with pytest.raises(UsageError, match="on_drained"):
        pool(noop, id="p", source=source(Queue([]).next), item_id=str,
             on_drained="later")  # type: ignore[arg-type]


async def test_next_is_called_on_wake_or_poll_only_while_the_pool_waits() -> None:
    q = Queue(["a", "b"])
    r = start(pool(gated(), id="p", source=source(q.next, wake=wake_ev, poll_every=0.01),
                   item_id=str, cap=2))
    await settle_loop()
    calls = len(q.calls)
    r.send("source", "changed")
    await asyncio.sleep(0.05)
    assert len(q.calls) == calls  # at cap: neither wake nor poll calls next
    r.send("a.review", "go")
    r.send("b.review", "go")
    await r.result()


async def test_item_id_raising_ends_the_run_error_with_the_cause() -> None:
    def bad(item: Any) -> str:
        raise ValueError("no id here")

    res = await run_machine(pool(noop, id="p", source=source(Queue(["a"]).next), item_id=bad))
    assert res.state == "error" and "no id here" in (res.error or "")


async def test_next_raising_ends_the_run_error_with_the_cause_kept() -> None:
    def broken(active: list[str]) -> Any:
        raise RuntimeError("tracker on fire")

    res = await run_machine(pool(noop, id="p", source=source(broken), item_id=str))
    assert res.state == "error" and "tracker on fire" in (res.traceback or "")


async def test_a_sync_worker_runs_in_a_thread() -> None:
    import threading

    def worker(item: str, ctx: Context) -> str:
        return threading.current_thread().name

    res = await run_machine(pool(worker, id="p", source=source(Queue(["a"]).next), item_id=str))
    assert res.output.items["a"] != threading.current_thread().name


# -- Extensions (DESIGN.md §3) ---------------------------------------------------------------


async def test_extension_a_wake_while_next_is_in_flight_is_not_lost() -> None:
    handle: list[Any] = []
    calls: list[int] = []
    new_work = ["late"]

    async def nxt(active: list[str]) -> Any:
        calls.append(1)
        if len(calls) == 1:
            return "a"
        if len(calls) == 2:
            handle[0].send("source", "changed")  # arrives while this next is in flight
            return None
        return new_work.pop() if new_work else None

    r = start(pool(gated(), id="p", source=source(nxt, wake=wake_ev), item_id=str, cap=3))
    handle.append(r)
    await settle_loop()
    assert "late.review" in {g.id for g in r.gates()}
    r.send("a.review", "go")
    r.send("late.review", "go")
    await r.result()


async def test_extension_held_items_keep_an_idle_pool_waiting() -> None:
    state = {"held": 1}

    def nxt(active: list[str]) -> Any:
        if state["held"]:
            return Next(item=None, open=1, held=1)
        return Next(item=None, open=0)

    r = start(pool(noop, id="p", source=source(nxt, idle_poll=0.01), item_id=str))
    await asyncio.sleep(0.05)
    assert not r.done
    state["held"] = 0
    res = await r.result()
    assert res.output.status == "drained"


async def test_extension_on_drained_wait_keeps_waiting_and_interrupt_ends_cleanly() -> None:
    q = Queue(["a"])
    settled: list[tuple[str, str]] = []
    r = start(pool(gated(), id="p", source=source(q.next, wake=wake_ev,
                                                  settle=lambda i, o: settled.append(
                                                      (i, o.status))),
                   item_id=str, on_drained="wait"))
    await settle_loop()
    r.send("a.review", "go")
    await asyncio.sleep(0.02)
    assert not r.done
    q.items.append("b")
    r.send("source", "changed")
    await settle_loop()
    assert "b.review" in {g.id for g in r.gates()}
    r.interrupt()
    res = await r.result()
    assert res.state == "interrupted" and res.exit_code == 130
    assert settled == [("a", "done"), ("b", "cancelled")]


async def test_extension_settle_is_told_each_outcome() -> None:
    seen: dict[str, Outcome] = {}

    async def worker(item: str, ctx: Context) -> str:
        if item == "f":
            raise Failure("nope")
        return "out"

    async def settle(iid: str, outcome: Outcome) -> None:
        seen[iid] = outcome

    await run_machine(pool(worker, id="p", source=source(Queue(["ok", "f"]).next, settle=settle),
                           item_id=str, failures="report"))
    assert seen["ok"].status == "done" and seen["ok"].output == "out"
    assert seen["f"].status == "failed" and seen["f"].failure is not None


async def test_extension_the_sandbox_is_created_only_on_first_use(tmp_path: Any) -> None:
    await run_machine(pool(noop, id="p", source=source(Queue(["a", "b"]).next), item_id=str),
                      state_dir=tmp_path / "st")
    assert not (tmp_path / "st").exists()


async def test_extension_a_worker_its_source_stops_ends_cancelled_not_failed() -> None:
    stoppers: dict[str, Any] = {}
    settled: list[tuple[str, str]] = []
    src = source(Queue(["a"]).next, started=lambda iid, stop: stoppers.__setitem__(iid, stop),
                 settle=lambda iid, o: settled.append((iid, o.status)))
    r = start(pool(gated(), id="p", source=src, item_id=str))  # failures="fail"
    await settle_loop()
    stoppers["a"]("lease lost")
    res = await r.result()
    assert res.state == "done" and res.exit_code == 0
    assert res.output.failures == {} and res.output.cancelled["a"].reason == "lease lost"
    assert settled == [("a", "cancelled")]


async def test_extension_a_stop_that_comes_while_the_item_settles_is_too_late() -> None:
    """A worker that ended is past stopping: a stop then (a lease renewer or a watch that woke
    late) used to cancel the settle, and the item was never finished: the pool never ended."""
    stoppers: dict[str, Any] = {}
    settled: list[tuple[str, str]] = []
    settling = asyncio.Event()
    go_on = asyncio.Event()

    async def settle(iid: str, outcome: Outcome) -> None:
        settling.set()
        await go_on.wait()  # a tracker answering a settle takes a while
        settled.append((iid, outcome.status))

    src = source(Queue(["a"]).next, settle=settle,
                 started=lambda iid, stop: stoppers.__setitem__(iid, stop))
    r = start(pool(noop, id="p", source=src, item_id=str))
    await settling.wait()
    stoppers["a"]("lease lost")
    go_on.set()
    res = await asyncio.wait_for(r.result(), 5)  # before: waited for good
    assert res.state == "done" and res.output.items == {"a": "a"}
    assert res.output.cancelled == {} and settled == [("a", "done")]


async def test_extension_a_worker_task_ended_from_outside_ends_the_run_in_an_error() -> None:
    """A worker's task cancelled by something other than its Source's stop (or ended by an
    error past the Pool's handling) never leaves the pool waiting for that item for good: the
    run ends `error`, and the item and the other running one are settled `cancelled`."""
    settled: list[tuple[str, str]] = []
    src = source(Queue(["a", "b"]).next, settle=lambda iid, o: settled.append((iid, o.status)))
    r = start(pool(gated(), id="p", source=src, item_id=str, cap=2))
    await settle_loop()
    [task_a] = [t for t in asyncio.all_tasks()
                if t.get_coro().cr_frame is not None  # type: ignore[union-attr]
                and t.get_coro().cr_frame.f_locals.get("iid") == "a"]  # type: ignore[union-attr]
    task_a.cancel()
    res = await asyncio.wait_for(r.result(), 5)  # before: waited for good
    assert res.state == "error" and "ended without finishing its item" in (res.error or "")
    assert sorted(settled) == [("a", "cancelled"), ("b", "cancelled")]


async def test_extension_a_stop_before_the_worker_ran_never_leaves_the_pool_waiting() -> None:
    """A Source that stops a worker the moment it starts (`started` calls `stop` at once, before
    the worker's task ever ran) does not leave the pool waiting for that item for good."""
    settled: list[tuple[str, str]] = []
    src = source(Queue(["a"]).next, settle=lambda iid, o: settled.append((iid, o.status)),
                 started=lambda iid, stop: stop("taken back"))
    r = start(pool(noop, id="p", source=src, item_id=str))
    res = await asyncio.wait_for(r.result(), 5)
    assert res.state == "error" and "ended without finishing its item" in (res.error or "")
    assert settled == [("a", "cancelled")]


class Reoffer:
    """A Source that offers `a` again after its first attempt was stopped."""

    def __init__(self) -> None:
        self.offers = ["a"]
        self.stops: dict[str, Any] = {}

    def next(self, active: list[str]) -> Any:
        return self.offers.pop(0) if self.offers else None

    def started(self, iid: str, stop: Any) -> None:
        self.stops[iid] = stop

    def settle(self, iid: str, outcome: Any) -> None:
        if outcome.status == "cancelled":
            self.offers.append(iid)  # released: offered again as a new attempt


async def test_extension_a_stopped_item_may_be_offered_again_and_keeps_its_last_outcome() -> None:
    src_state = Reoffer()
    src = source(src_state.next, started=src_state.started, settle=src_state.settle)
    r = start(pool(gated(), id="p", source=src, item_id=str))
    await settle_loop()
    src_state.stops["a"]("lease lost")
    await settle_loop()
    [gate] = r.gates()
    r.send(gate.id, "go", None)
    res = await r.result()
    assert res.state == "done", res
    assert res.output.items == {"a": "a"} and res.output.cancelled == {}
    assert res.output.attempts == {"a": 2}


async def test_extension_a_failed_item_offered_again_keeps_its_last_outcome() -> None:
    tries: list[str] = []

    async def fails_once(item: str, ctx: Context) -> str:
        tries.append(item)
        if len(tries) == 1:
            raise Failure("flaky")
        return "ok"

    # a person cleared the failure (`jr2 local retry`): the Source offers the item again
    res = await run_machine(pool(fails_once, id="p", source=source(Queue(["a", "a"]).next),
                                 item_id=str))
    assert res.state == "done", res
    assert res.output.items == {"a": "ok"} and res.output.failures == {}
    assert res.output.attempts == {"a": 2}


async def test_a_pool_is_a_machine_whose_failure_fails_the_outer_item() -> None:
    async def bad(item: str, ctx: Context) -> str:
        raise Failure("inner")

    inner = pool(bad, id="inner", source=source(Queue(["x"]).next), item_id=str)
    outer = pool(inner, id="outer", source=source(Queue(["A"]).next), item_id=str,
                 failures="report")
    res = await run_machine(outer)
    assert res.output.failures["A"].reason == "1 of 1 items failed"


def test_a_pool_needs_a_source_made_with_source() -> None:
    with pytest.raises(UsageError):
        pool(noop, id="p", source=object(), item_id=str)  # type: ignore[arg-type]


def test_the_defect_error_class_is_a_pool_defect() -> None:
    assert issubclass(PoolDefect, Exception)
