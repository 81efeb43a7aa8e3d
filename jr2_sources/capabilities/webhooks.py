"""Tracker webhooks: signature checks, replay protection, and the run-host route (public API).

A tracker takes webhooks by inheriting `TakesWebhooks`. `verify_signature` checks an HMAC-SHA256
of the raw body in constant time (GitHub's `X-Hub-Signature-256`, Jira's `X-Hub-Signature`);
`DeliveryDeduper` acknowledges a repeated delivery id without acting on it; `attach_webhook`
routes `POST /webhook` of a `RunHost` to the tracker's verdict, a waking one sending the run's
wake event (a bad signature: 401; anything the receiver raises: 400, never a 500).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from . import options

log = logging.getLogger("jr2.webhooks")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to answer a delivery (`status`), whether it wakes the pool, and why (for logs)."""

    status: int
    wake: bool = False
    reason: str = ""
    touched: tuple[str, ...] = field(default=(), compare=False)
    """The tracker keys the delivery names when it wakes: deltas read them directly next."""
    full: bool = field(default=False, compare=False)
    """The delivery may change what the filter selects without moving any issue's update time
    (a label it names was renamed): deltas read everything next."""


Receiver = Callable[[Mapping[str, str], bytes, str | None], Verdict]


class TakesWebhooks(ABC):
    """Declares webhooks (`jr2 work --listen ... --webhook-secret-env NAME`)."""

    @abstractmethod
    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Verify one delivery (signature with `secret`, replay) and say whether it can change
        the Ready-set (`wake`); 401 for a bad signature."""
        raise NotImplementedError


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header by name, case-insensitively."""
    value = headers.get(name)
    if value is not None:
        return value
    low = name.lower()
    return next((v for k, v in headers.items() if k.lower() == low), None)


def hmac_sha256(secret: str | bytes, body: bytes) -> str:
    """The hex HMAC-SHA256 of `body` under `secret`."""
    key = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def verify_signature(secret: str | bytes, body: bytes, given: str | None,
                     prefix: str = "sha256=") -> bool:
    """True when `given` is `prefix + hex HMAC-SHA256(body)`; constant-time compare."""
    if not given or not secret:
        return False
    expected = (prefix + hmac_sha256(secret, body)).encode()
    return hmac.compare_digest(given.strip().encode(), expected)


class DeliveryDeduper:
    """Remembers the last `size` delivery ids; `seen(id)` is True for a repeat."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def seen(self, delivery_id: str | None) -> bool:
        """Record `delivery_id`; True when it was recorded before. No id: never a repeat."""
        if not delivery_id:
            return False
        with self._lock:
            if delivery_id in self._ids:
                self._ids.move_to_end(delivery_id)
                return True
            self._ids[delivery_id] = None
            if len(self._ids) > self.size:
                self._ids.popitem(last=False)
            return False


def attach_webhook(host: Any, run: Any, receiver: Receiver, secret: str | None,
                   *, path: str = "/webhook") -> None:
    """Route `POST path` on `host` (a RunHost) to `receiver`; a waking verdict wakes `run`."""
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            verdict = receiver(dict(request.headers), body, secret)
        except Exception as exc:
            log.warning("webhook rejected: %s: %s", type(exc).__name__, exc)
            return web.json_response({"error": "bad delivery"}, status=400)
        woke = False
        if verdict.wake and verdict.status < 300:
            try:
                run.send("source", "wake", None, external=False)
                woke = True
            except Exception as exc:  # the pool is not waiting on a wake gate (yet/anymore)
                log.info("webhook could not wake the run: %s", exc)
        return web.json_response({"ok": verdict.status < 300, "woke": woke,
                                  "reason": verdict.reason}, status=verdict.status)

    host.add_route("POST", path, handle, auth=False)


WORK_OPTIONS = options(
    click.option("--listen", metavar="HOST:PORT", default=None,
                 help="Serve POST /webhook here (a non-loopback address serves only the "
                      "webhook: the control API stays on 127.0.0.1:--port)."),
    click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), default=None,
                 help="Serve --listen over HTTPS with this certificate (PEM; chain included)."),
    click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), default=None,
                 help="The private key of --tls-cert (PEM), unless the certificate file holds "
                      "it."),
    click.option("--webhook-secret-env", metavar="NAME", default=None,
                 help="Verify webhook deliveries with the secret in this environment "
                      "variable."),
)
"""`jr2 work`'s options of the webhook route: where it listens (TLS) and its secret."""
