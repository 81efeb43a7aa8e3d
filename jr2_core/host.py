"""The run host: a small HTTP server on loopback for `jr2 gates`, `jr2 send` and webhooks.

One aiohttp application per run. Control routes (`/v1/...`) need the run's bearer token,
compared in constant time; other routes (webhooks: `add_route(..., auth=False)`) check their
own signatures. A body over `max_body` bytes gets 413. The address and token go into a run file
in `<state>/runs/` (mode 0600, written atomically, removed when the run ends).

A `public` address (`jr2 work --listen`) serves the unauthenticated routes only (over TLS with
an `ssl` context), the control API staying on loopback. Unsigned requests are capped before any
signature check: `MAX_UNSIGNED` at a time (503 past it; an address holding none still gets in,
up to twice that), `UNSIGNED_TIMEOUT` seconds each, a body at `MIN_BODY_RATE` or dropped (408)
after `BODY_GRACE` or when a newcomer needs its place. A request aiohttp cannot parse gets its
400 and one warning line. `doors(factory, ssl_context)` wraps the protocol factory (connection
caps, the TLS handshake: `jr2_sources.cli.doors`); idle connections get `HEADER_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import os
import ssl
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from secrets import token_urlsafe
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from .errors import GateError, UnknownGate
from .paths import write_private
from .runs import Run
from .text import one_line

Handler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]
DEFAULT_MAX_BODY = 1 << 20
MAX_UNSIGNED = 16
"""The most requests to unauthenticated routes handled at once."""
UNSIGNED_TIMEOUT = 10.0
"""The most seconds a request to an unauthenticated route has to be received and handled."""
MIN_BODY_RATE = 16 << 10
"""The fewest bytes a second an unauthenticated request's body may arrive at."""
BODY_GRACE = 1.0
"""Seconds a body may lag behind `MIN_BODY_RATE` before it is dropped for it."""
HEADER_TIMEOUT = 10.0
"""The most seconds a connection has to send its first request's headers, or to stay idle."""
BURST_GAP = 10.0
"""Refusals less than this many seconds apart are one burst, said in one line."""


class _OneLine(logging.Filter):
    """aiohttp's "Error handling request" for a request it could not parse, as one line
    without its traceback: bad input from a client, not a defect of jr2."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            why = one_line((exc.message.strip().splitlines() or ["bad request"])[0]).rstrip(": ")
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg, record.args = "jr2: refused a malformed request from %s (%s: %s)", (
                remote, exc.code, why)
            record.exc_info = record.exc_text = None
        return True


_SERVER_LOG = logging.getLogger("jr2.host")
_SERVER_LOG.addFilter(_OneLine())


def peer_address(transport: Any) -> str:
    """The address a connection counts against: its IP, an IPv6 one by its /64."""
    name = transport.get_extra_info("peername") if transport is not None else None
    ip = str(name[0]) if isinstance(name, tuple) and name else "?"
    if ":" not in ip:
        return ip
    addr = ipaddress.IPv6Address(ip.split("%")[0])
    if addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return str(ipaddress.IPv6Network(f"{addr}/64", strict=False))


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda o: json.dumps(o, default=str))


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status=status)


class _InHand:
    """One unauthenticated request being received: how far behind `MIN_BODY_RATE` its body is."""

    def __init__(self, request: web.Request, limit: asyncio.Timeout) -> None:
        self.request, self.limit = request, limit
        self.began = asyncio.get_running_loop().time()
        self.dropped = False

    def behind(self, now: float) -> float:
        """Bytes the body lags behind the rate (<= 0: on time, or all of it arrived)."""
        body = self.request.content
        if body.is_eof():
            return 0.0
        return MIN_BODY_RATE * (now - self.began) - body.total_bytes

    def drop(self) -> None:
        """End the request now (its handler gets a TimeoutError at its next wait)."""
        self.dropped = True
        if not self.limit.expired():  # an expiring deadline is ending it already
            self.limit.reschedule(asyncio.get_running_loop().time())


class RunHost:
    """Serves one run's control API (and any routes sources add) over HTTP."""

    def __init__(self, run: Run, *, host: str = "127.0.0.1", port: int = 0,
                 max_body: int = DEFAULT_MAX_BODY, public: tuple[str, int] | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 doors: Callable[[Callable[[], Any], Any], Callable[[], Any]] | None = None,
                 ) -> None:
        self.run = run
        self.host = host
        self.port = port
        self.max_body = max_body
        self.public = public
        self.ssl_context = ssl_context
        self.doors = doors
        self.backlog = 128
        """Connections accepted in one go (asyncio accepts as many at once as the backlog)."""
        self.token = token_urlsafe(24)
        self.address: str | None = None
        self.public_address: str | None = None
        self.run_file: Path | None = None
        self._routes: list[tuple[str, str, Handler, bool]] = []
        self._runner: web.AppRunner | None = None
        self._public_runner: web.AppRunner | None = None
        self._unsigned: dict[str, int] = {}
        self._hand: set[_InHand] = set()
        self._busy_said = self._slow_said = -BURST_GAP
        self._servers: list[asyncio.Server] = []
        self._started = False
        self.add_route("GET", "/v1/run", self._get_run)
        self.add_route("GET", "/v1/gates", self._get_gates)
        self.add_route("POST", "/v1/send", self._post_send)

    def add_route(self, method: str, path: str, handler: Handler, *, auth: bool = True) -> None:
        """Add a route before `start()`. `auth=False` routes must authenticate requests
        themselves (webhook signatures)."""
        if self._started:
            raise RuntimeError("routes must be added before the host starts")
        self._routes.append((method, path, handler, auth))

    def _wrap(self, handler: Handler, auth: bool) -> Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            if auth:
                # surrogateescape: a header that is not UTF-8 is a wrong token, not a 500
                given = request.headers.get("Authorization", "").encode("utf-8",
                                                                        "surrogateescape")
                if not hmac.compare_digest(given, f"Bearer {self.token}".encode()):
                    return _error(401, "missing or wrong bearer token")
            elif (request.content_length or 0) > self.max_body:
                return _error(413, f"the body is over {self.max_body} bytes")
            try:
                if auth:
                    return await handler(request)
                return await self._unsigned_call(handler, request)
            except web.HTTPException:
                raise
            except Exception as exc:  # never a 500 with a traceback to a client
                return _error(400, f"{type(exc).__name__}: {exc}")

        return guarded

    async def _unsigned_call(self, handler: Handler, request: web.Request) -> web.StreamResponse:
        """An unauthenticated request, within the caps of the module notes."""
        peer, busy = peer_address(request.transport), self._unsigned
        total, mine = sum(busy.values()), busy.get(peer, 0)
        if (total >= MAX_UNSIGNED and mine) or (total >= 2 * MAX_UNSIGNED
                                                and not self._drop_furthest_behind()):
            if time.monotonic() - self._busy_said > BURST_GAP:  # one line per burst
                _SERVER_LOG.warning("jr2: webhook host: answering 503 to unsigned deliveries "
                                    "(from %s: %d in hand, and past them one per address)",
                                    peer, MAX_UNSIGNED)
            self._busy_said = time.monotonic()
            resp = _error(503, "too many deliveries at once; try again")
            resp.headers["Retry-After"] = "1"
            return resp
        busy[peer] = mine + 1
        entry: _InHand | None = None
        check: asyncio.TimerHandle | None = None
        try:
            async with asyncio.timeout(UNSIGNED_TIMEOUT) as limit:
                if not request.content.is_eof():  # the body is still coming: watch its rate
                    entry = _InHand(request, limit)
                    self._hand.add(entry)
                    check = asyncio.get_running_loop().call_later(BODY_GRACE, self._check,
                                                                  entry, peer)
                return await handler(request)
        except TimeoutError:
            why = (f"the body arrived slower than {MIN_BODY_RATE} bytes a second"
                   if entry is not None and entry.dropped
                   else f"the request took over {UNSIGNED_TIMEOUT:g}s")
            resp = _error(408, why)
            resp.force_close()  # the rest of the body is not read: the connection ends
            return resp
        finally:
            if check is not None:
                check.cancel()
            if entry is not None:
                self._hand.discard(entry)
            busy[peer] -= 1
            if not busy[peer]:
                del busy[peer]

    def _check(self, entry: _InHand, peer: str) -> None:
        """Drop `entry` if its body is behind the minimum rate; else look again shortly."""
        if entry.request.content.is_eof() or entry not in self._hand:
            return
        if entry.behind(asyncio.get_running_loop().time()) > 0:
            self._drop(entry, peer)
            return
        asyncio.get_running_loop().call_later(BODY_GRACE / 4, self._check, entry, peer)

    def _drop(self, entry: _InHand, peer: str) -> None:
        if time.monotonic() - self._slow_said > BURST_GAP:  # one line per burst
            _SERVER_LOG.warning("jr2: webhook host: dropping unsigned bodies that arrive "
                                "slower than %d bytes a second (from %s)", MIN_BODY_RATE, peer)
        self._slow_said = time.monotonic()
        self._hand.discard(entry)
        entry.drop()

    def _drop_furthest_behind(self) -> bool:
        """Make room in a full hand: drop the body furthest behind the rate, if one is."""
        now = asyncio.get_running_loop().time()
        worst = max(self._hand, key=lambda e: e.behind(now), default=None)
        if worst is None or worst.behind(now) <= 0:
            return False
        self._drop(worst, peer_address(worst.request.transport))
        return True

    async def _serve(self, host: str, port: int, *, public: bool) -> tuple[web.AppRunner, int]:
        """Serve the application on `host:port` behind its doors: every route on the control
        address, the unauthenticated ones only on the public one; return the runner and the
        port (raise OSError when it cannot listen)."""
        app = web.Application(client_max_size=self.max_body)
        for method, path, handler, auth in self._routes:
            if not (public and auth):
                app.router.add_route(method, path, self._wrap(handler, auth))
        # lingering_time=0: a body left unread (a 503, 408 or 413) closes its connection
        # instead of being read and dropped for 10 s more (aiohttp's default)
        runner = web.AppRunner(app, access_log=None, logger=_SERVER_LOG,
                               keepalive_timeout=HEADER_TIMEOUT, lingering_time=0)
        await runner.setup()
        factory, tls = runner.server, self.ssl_context if public else None
        assert factory is not None
        try:
            server = await asyncio.get_running_loop().create_server(
                self.doors(factory, tls) if self.doors else factory, host, port,
                ssl=None if self.doors else tls,
                ssl_handshake_timeout=HEADER_TIMEOUT if tls and not self.doors else None,
                backlog=self.backlog)
        except BaseException:
            await runner.cleanup()
            raise
        self._servers.append(server)
        return runner, int(server.sockets[0].getsockname()[1])

    @staticmethod
    def _url(host: str, port: int, tls: bool) -> str:
        shown = f"[{host}]" if ":" in host else host
        return f"{'https' if tls else 'http'}://{shown}:{port}"

    async def start(self) -> str:
        """Listen and write the run file; return the base URL."""
        self._started = True
        self._runner, bound = await self._serve(self.host, self.port, public=False)
        self.address = self._url(self.host, bound, False)
        if self.public is not None:
            host, port = self.public
            try:
                self._public_runner, bound = await self._serve(host, port, public=True)
            except BaseException:
                await self.stop()
                raise
            self.public_address = self._url(host, bound, self.ssl_context is not None)
        self.run_file = self.run.state_dir / "runs" / f"{self.run.id}.json"
        write_private(self.run_file, json.dumps({
            "run_id": self.run.id, "address": self.address, "token": self.token,
            "pid": os.getpid(), "machine": self.run.machine.id,
            "started_at": datetime.now(UTC).isoformat()}))
        return self.address

    async def stop(self) -> None:
        """Stop listening and remove the run file."""
        if self.run_file is not None:
            self.run_file.unlink(missing_ok=True)
        for server in self._servers:
            server.close()
        self._servers = []
        for runner in (self._public_runner, self._runner):
            if runner is not None:
                await runner.cleanup()
        self._runner = self._public_runner = None

    # -- control routes ------------------------------------------------------------------------

    async def _get_run(self, request: web.Request) -> web.Response:
        return _json({"run_id": self.run.id, "state": self.run.state,
                      "machine": self.run.machine.id})

    async def _get_gates(self, request: web.Request) -> web.Response:
        return _json([g.to_json() for g in self.run.gates()])

    async def _post_send(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("gate"), str) or not isinstance(
            body.get("event"), str
        ):
            return _error(400, 'the body must be {"gate": str, "event": str, "data": {...}}')
        try:
            self.run.send(body["gate"], body["event"], body.get("data"))
        except UnknownGate as exc:
            return _error(404, str(exc))
        except GateError as exc:
            return _error(422, str(exc))
        return _json({"ok": True})
