"""`wait_for`: wait for an awaitable with a time limit, never losing a cancellation.

On Python 3.11 `asyncio.wait_for` swallows a cancellation that arrives in the same turn as the
answer (CPython gh-86296): a settle could then wait for ever on a lease renewer that went on. This
is 3.12's `wait_for`: the awaitable runs in the caller's task under `asyncio.timeout`. Ruff's
`banned-api` keeps `asyncio.wait_for` out of the code.
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
