"""The doors of `jr2 work`'s run host: connection caps in front of aiohttp, since `--listen`
faces the internet (`jr2_core.host` takes them as its `doors`).

Design notes:

* A connection has `HEADER_TIMEOUT` seconds to send its first request's headers, else it is
  closed: connections that never finish their headers cannot pile up.
* One address (an IPv6 /64) holds at most `MAX_PEER` connections, and all addresses together at
  most a quarter of the process's file descriptors (`RLIMIT_NOFILE`; from 16 to 1024), so a flood
  cannot use them up. When all are taken, a newcomer from an address holding fewer than the
  busiest address closes that address's oldest connection (a delivery from elsewhere still gets
  in); otherwise the newcomer is closed at once.
* Refusals and timeouts are said in one warning line per burst (`BURST_GAP` seconds), never one
  per connection and never with a traceback.
* Behind TLS the counting starts once the handshake is done, which itself has `HEADER_TIMEOUT`
  seconds (the host's).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from typing import Any

from jr2_core.host import BURST_GAP, HEADER_TIMEOUT, peer_address

log = logging.getLogger("jr2.host")
MAX_PEER = 64
"""The most connections one address holds at once."""


class Doors:
    """The connections of one listening address, within the caps of the module notes; call it
    with aiohttp's protocol factory to get the guarded one."""

    def __init__(self) -> None:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.total = max(16, min(1024, (soft if soft > 0 else 1024) // 4))
        self.open: dict[str, list[Guarded]] = {}
        self.count = 0
        self._said: dict[str, float] = {}

    def __call__(self, factory: Callable[[], Any]) -> Callable[[], Guarded]:
        return lambda: Guarded(factory(), self)

    def say(self, kind: str, text: str) -> None:
        """One warning line per burst of one `kind`."""
        now, last = time.monotonic(), self._said.get(kind)
        self._said[kind] = now
        if last is None or now - last > BURST_GAP:
            log.warning("jr2: webhook host: %s (said once per burst)", text)

    def admit(self, conn: Guarded) -> bool:
        mine = self.open.setdefault(conn.peer, [])
        if len(mine) < MAX_PEER and self.count >= self.total:
            busiest = max(self.open.values(), key=len)
            if len(busiest) > len(mine) + 1:
                busiest[0].close()  # makes room: the busiest address's oldest connection
        if len(mine) >= MAX_PEER or self.count >= self.total:
            self.say("refused", f"refusing connections (from {conn.peer}: at most {MAX_PEER} "
                     f"per address and {self.total} in all)")
            if not mine:
                del self.open[conn.peer]
            return False
        mine.append(conn)
        self.count += 1
        return True

    def left(self, conn: Guarded) -> None:
        mine = self.open.get(conn.peer, [])
        if conn in mine:
            mine.remove(conn)
            self.count -= 1
            if not mine:
                del self.open[conn.peer]


class Guarded(asyncio.Protocol):
    """aiohttp's protocol for one connection, behind the doors: closed when over a cap or when
    its first request's headers take over `HEADER_TIMEOUT` seconds."""

    def __init__(self, inner: Any, doors: Doors) -> None:
        self.inner, self.doors, self.peer, self.admitted = inner, doors, "?", False
        self.transport: Any = None
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""

    def connection_made(self, transport: Any) -> None:
        self.transport, self.peer = transport, peer_address(transport)
        if not self.doors.admit(self):
            transport.abort()
            return
        self.admitted = True
        self._timer = asyncio.get_running_loop().call_later(HEADER_TIMEOUT, self._late)
        self.inner.connection_made(transport)

    def _late(self) -> None:
        self.doors.say("slow", f"closing connections that sent no headers within "
                       f"{HEADER_TIMEOUT:g}s (from {self.peer})")
        self.close()

    def close(self) -> None:
        self.doors.left(self)
        self.transport.abort()

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:
            seen = self._tail + data
            if b"\r\n\r\n" in seen:
                self._timer.cancel()
                self._timer = None
            self._tail = seen[-3:]
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return bool(self.inner.eof_received())

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.doors.left(self)
        if self.admitted:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()
