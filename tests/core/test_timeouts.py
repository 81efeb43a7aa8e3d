"""`jr2_core.timeouts.wait_for`: a time limit that never loses the caller's cancellation (on
Python 3.11, `asyncio.wait_for` returns the answer instead when both arrive in one turn)."""

from __future__ import annotations

import asyncio

import pytest

from jr2_core.timeouts import wait_for


async def test_a_cancellation_in_the_same_turn_as_the_answer_reaches_the_caller() -> None:
    answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    went_on: list[int] = []

    async def waiting() -> None:
        went_on.append(await wait_for(answer, 5))

    task = asyncio.create_task(waiting())
    await asyncio.sleep(0)  # the task now waits for the answer
    answer.set_result(1)  # the answer and the cancellation arrive in the same turn
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert went_on == []  # asyncio.wait_for on 3.11: [1], and the task ran on


async def test_the_answer_comes_back_and_a_late_one_is_a_timeout() -> None:
    assert await wait_for(asyncio.sleep(0, "ok"), 1) == "ok"
    assert await wait_for(asyncio.sleep(0.01, "no limit"), None) == "no limit"
    with pytest.raises(TimeoutError):
        await wait_for(asyncio.sleep(5), 0.02)
