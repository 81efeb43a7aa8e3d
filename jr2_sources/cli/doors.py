"""The doors of `jr2 work`'s run host: connection caps in front of aiohttp, since `--listen`
faces the internet (`jr2_core.host` takes them as its `doors`).

* A connection has `HEADER_TIMEOUT` seconds to send its first request's headers (over TLS the
  handshake too, done here, `loop.start_tls`, so it is counted before it).
* One address (an IPv6 /64) holds at most `MAX_PEER` connections, all together at most a quarter
  of `RLIMIT_NOFILE` (16 to 1024), the listening backlog no more. When all are taken, a newcomer
  from an address holding fewer than the busiest closes that one's oldest; else it is closed.
* Refusals, timeouts and asyncio's "out of system resource" are one warning line per burst
  (`BURST_GAP` seconds), never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import ssl
import time
from collections.abc import Callable
from typing import Any

from jr2_core.host import BURST_GAP, HEADER_TIMEOUT, peer_address

log = logging.getLogger("jr2.host")
MAX_PEER = 64
"""The most connections one address holds at once."""


class _OutOfDescriptors(logging.Filter):
    """asyncio's accept error (with its traceback, once a second per address) as one line per
    burst."""

    def __init__(self) -> None:
        super().__init__()
        self.doors: Doors | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if self.doors is None or "out of system resource" not in str(record.msg):
            return True
        exc = record.exc_info[1] if record.exc_info else None
        self.doors.say("fds", f"cannot accept connections: {getattr(exc, 'strerror', exc)}")
        return False


_OUT_OF_FDS = _OutOfDescriptors()
logging.getLogger("asyncio").addFilter(_OUT_OF_FDS)


class Doors:
    """The connections of one run host (all its addresses), within the caps of the module
    notes; call it with aiohttp's protocol factory (and the address's TLS context) to get the
    guarded one."""

    def __init__(self) -> None:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.total = max(16, min(1024, (soft if soft > 0 else 1024) // 4))
        self.backlog = min(128, self.total)
        _OUT_OF_FDS.doors = self
        self.open: dict[str, list[Guarded]] = {}
        self.count = 0
        self._said: dict[str, float] = {}

    def __call__(self, factory: Callable[[], Any], tls: ssl.SSLContext | None = None
                 ) -> Callable[[], Guarded]:
        return lambda: Guarded(factory(), self, tls)

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

    def holds(self, conn: Guarded) -> bool:
        """Whether `conn` still counts (the doors may have closed it meanwhile)."""
        return conn in self.open.get(conn.peer, [])

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

    def __init__(self, inner: Any, doors: Doors, tls: ssl.SSLContext | None = None) -> None:
        self.inner, self.doors, self.tls, self.peer = inner, doors, tls, "?"
        self.admitted = False  # counted, and (over TLS once the handshake is done) given to aiohttp
        self.transport: Any = None
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""
        self._early: list[bytes] = []  # what TLS decrypted before aiohttp had the connection
        self._handshake: asyncio.Task[None] | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport, self.peer = transport, peer_address(transport)
        if not self.doors.admit(self):
            transport.abort()
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(HEADER_TIMEOUT, self._late)
        if self.tls is None:
            self._connected(transport)
        else:
            self._handshake = loop.create_task(self._hello(loop, self.tls))

    async def _hello(self, loop: asyncio.AbstractEventLoop, tls: ssl.SSLContext) -> None:
        try:
            secured = await loop.start_tls(self.transport, self, tls, server_side=True,
                                           ssl_handshake_timeout=HEADER_TIMEOUT)
        except (OSError, ssl.SSLError, TimeoutError):
            self.close()  # no hello in time, or a bad one (the doors' timer says so)
            return
        if secured is not None and self.doors.holds(self):
            self._connected(secured)

    def _connected(self, transport: Any) -> None:
        self.transport, self.admitted = transport, True
        self.inner.connection_made(transport)
        for data in self._early:
            self.inner.data_received(data)
        self._early = []

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
        if self.admitted:
            self.inner.data_received(data)
        else:
            self._early.append(data)

    def eof_received(self) -> bool | None:
        return bool(self.inner.eof_received()) if self.admitted else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.doors.left(self)
        if self.admitted:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.admitted:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.admitted:
            self.inner.resume_writing()
