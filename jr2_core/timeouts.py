"""`wait_for`: wait for an awaitable with a time limit, never losing a cancellation.

Design notes
------------
On Python 3.11, `asyncio.wait_for` swallows a cancellation that arrives in the same turn of the
loop as the answer it waits for: it returns the answer and the task goes on, `cancelling`
but running (CPython gh-86296, fixed in 3.12 by rebuilding `wait_for` on `asyncio.timeout`).
For jr2 that was a pool that never ended: a settle cancelled the lease renewer just as a
renewal answered, the renewer went on renewing the finished item's claim, and the settle
waited for it forever. The same race could drop a worker's stop, a Ctrl-C of the pool's loop,
or the end of the dashboard's task. This is 3.12's `wait_for` for 3.11 and later: the
awaitable runs in the caller's task under `asyncio.timeout`, so a cancellation always
reaches the caller. Ruff's `banned-api` keeps `asyncio.wait_for` out of the code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

_T = TypeVar("_T")


async def wait_for(aw: Awaitable[_T], timeout: float | None) -> _T:
    """`await aw`, raising `TimeoutError` after `timeout` seconds (None: no limit). A
    cancellation of the caller is never swallowed, even when `aw` answers in the same turn."""
    async with asyncio.timeout(timeout):
        return await aw
