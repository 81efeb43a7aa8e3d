"""The run's gate table: exact ids, validated delivery, refusals that change nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from jr2_core import (
    Context,
    DuplicateGate,
    InvalidPayload,
    UnknownEvent,
    UnknownGate,
    define_event,
    pool,
    source,
    start,
)


class Reason(BaseModel):
    reason: str


approve = define_event(name="approve")
reject = define_event(name="reject", input=Reason)
secret = define_event(name="poke", audience="internal")


async def review(item: str, ctx: Context) -> Any:
    ev = await ctx.gate("review", accepts=[approve, reject, secret], meta={"t": item})
    return {"event": ev.name, "data": ev.data.model_dump()}


def one(items: list[str]) -> Any:
    pending = list(items)
    return source(lambda active: pending.pop(0) if pending else None)


async def started(items: list[str], cap: int = 4) -> Any:
    r = start(pool(review, id="p", source=one(items), item_id=str, cap=cap))
    for _ in range(20):
        await asyncio.sleep(0)
    return r


async def test_gate_ids_are_matched_exactly_even_with_slashes_hashes_and_dots() -> None:
    r = await started(["o/r#1.x"])
    assert [g.id for g in r.gates()] == ["o/r#1.x.review"]
    with pytest.raises(UnknownGate):
        r.send("o/r#1.x.Review", "approve")
    r.send("o/r#1.x.review", "approve")
    res = await r.result()
    assert res.output.items["o/r#1.x"]["event"] == "approve"


async def test_a_payload_that_fails_the_model_is_refused_and_changes_nothing() -> None:
    r = await started(["a"])
    with pytest.raises(InvalidPayload, match="reason: Field required"):
        r.send("a.review", "reject", {})
    assert [g.id for g in r.gates()] == ["a.review"]
    r.send("a.review", "reject", {"reason": "late"})
    res = await r.result()
    assert res.output.items["a"]["data"] == {"reason": "late"}


async def test_an_event_the_gate_does_not_accept_is_refused_naming_what_it_accepts() -> None:
    r = await started(["a"])
    with pytest.raises(UnknownEvent, match="accepts: approve, reject"):
        r.send("a.review", "merge")
    r.send("a.review", "approve")
    await r.result()


async def test_an_internal_event_is_refused_from_outside_and_accepted_from_code() -> None:
    r = await started(["a"])
    with pytest.raises(UnknownEvent):
        r.send("a.review", "poke")
    r.send("a.review", "poke", external=False)
    assert (await r.result()).output.items["a"]["event"] == "poke"


async def test_a_one_shot_gate_closes_on_delivery() -> None:
    r = await started(["a"])
    r.send("a.review", "approve")
    with pytest.raises(UnknownGate):
        r.send("a.review", "approve")
    await r.result()


async def test_two_live_gates_with_one_id_is_a_defect() -> None:
    async def twice(item: str, ctx: Context) -> None:
        await asyncio.gather(ctx.gate("g", accepts=[approve]), ctx.gate("g", accepts=[approve]))

    r = start(pool(twice, id="p", source=one(["a"]), item_id=str))
    res = await r.result()
    assert res.state == "error" and "already open" in (res.error or "")
    assert isinstance(DuplicateGate("x"), Exception)


async def test_gate_meta_is_shown() -> None:
    r = await started(["a"])
    assert r.gates()[0].meta == {"t": "a"}
    r.send("a.review", "approve")
    await r.result()


async def test_a_raising_observer_is_logged_and_never_fatal() -> None:
    def bad(ev: Any) -> None:
        raise RuntimeError("observer broke")

    r = start(pool(review, id="p", source=one(["a"]), item_id=str), observers=[bad])
    for _ in range(20):
        await asyncio.sleep(0)
    r.send("a.review", "approve")
    assert (await r.result()).state == "done"
