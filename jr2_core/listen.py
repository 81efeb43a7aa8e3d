"""A listening socket bound now, whose HTTP server is loaded when the first connection arrives.

Design notes
------------
Every run serves a small HTTP API (`jr2 gates`, `jr2 send`, webhooks), and most runs never get a
single request: a `jr2 work local:` drain of 100 items spent about 130 ms of its CPU importing
aiohttp and building the server, a fifth of its whole start-up. Yet the address must exist from
the start: it goes into the run file, and `--port`/`--listen` errors must end the command at
once. So the socket is bound and listening at start (the kernel queues connections in its
backlog), and only the event loop watches it; the first time it becomes readable, the watch is
dropped and `serve(sock)` starts the real server on the same socket, which accepts the queued
connection as its first. The first request waits for that load (about 0.1 s), no request is lost,
and a run nobody talks to never loads a server at all.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable

log = logging.getLogger("jr2.host")

BACKLOG = 128


class Listener:
    """One bound, listening TCP socket; `serve_on_first_connection` arms the lazy start."""

    def __init__(self, host: str, port: int) -> None:
        """Bind `host:port` (port 0: any free port) and listen; raise OSError when that is
        impossible (the address is not this machine's, the port is taken, the name does not
        resolve). As asyncio does: the first address a name resolves to, SO_REUSEADDR, and an
        IPv6 socket that serves IPv6 only."""
        # an ASCII name goes as bytes: a str would be run through the "idna" codec, whose
        # import (stringprep, unicodedata) costs every start about 2 ms for "127.0.0.1"
        name = host.encode("ascii") if host and host.isascii() else host or None
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, addr = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(addr)
            sock.listen(BACKLOG)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        self._watching: asyncio.AbstractEventLoop | None = None  # the loop watching the socket
        self._serving: asyncio.Task[None] | None = None

    def serve_on_first_connection(self, serve: Callable[[socket.socket], Awaitable[None]]
                                  ) -> None:
        """Call `serve(sock)` once, when a first connection is waiting to be accepted."""
        loop = self._watching = asyncio.get_running_loop()

        def connected() -> None:
            loop.remove_reader(self.sock.fileno())
            self._watching = None
            self._serving = loop.create_task(self._start(serve))

        loop.add_reader(self.sock.fileno(), connected)

    async def _start(self, serve: Callable[[socket.socket], Awaitable[None]]) -> None:
        try:
            await serve(self.sock)
        except Exception:  # nothing to serve with: the connection waits, the run goes on
            log.exception("the run host could not start its server")

    async def stop_watching(self) -> None:
        """Stop watching; wait for a server being started, so the caller can stop it."""
        if self._watching is not None:
            self._watching.remove_reader(self.sock.fileno())
            self._watching = None
        if self._serving is not None:
            await asyncio.shield(self._serving)

    def close(self) -> None:
        """Close the socket (after its server, if one started, has stopped)."""
        self.sock.close()
