"""What `jr2 work` spends per item that no item needs: the exit of a command is heard when it
happens, not found by polling (a poll that doubles from 5 ms to 50 ms added up to one poll
period to every item)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from jr2_sources.cli import runner


async def test_a_command_exit_is_heard_when_it_happens_not_polled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    proc = await runner._spawn(sys.executable, "-c", "import sys; sys.exit(3)",
                               stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    naps: list[float] = []
    real_sleep = asyncio.sleep

    async def counting_sleep(delay: float, *args: Any) -> Any:
        naps.append(delay)
        return await real_sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", counting_sleep)
    assert await asyncio.wait_for(runner._exited(proc), 30) == 3
    assert naps == []
    await proc.wait()


async def test_a_command_whose_child_holds_its_pipes_is_done_when_it_exits() -> None:
    # the child sleeps on with the command's stdout; the command itself exits at once
    proc = await runner._spawn("/bin/sh", "-c", "sleep 5 & exit 0",
                               stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                               start_new_session=True)
    assert await asyncio.wait_for(runner._exited(proc), 4) == 0
    await runner._end_group(proc)
