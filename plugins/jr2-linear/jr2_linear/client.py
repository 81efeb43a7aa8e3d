"""`LinearClient`: POSTs of jr2's GraphQL operations to Linear, counted and retried in one layer.

Design notes
------------
* One `requests.Session`; every request goes through `jr2_sources.kit.retry.retry_or_fail`
  (tenacity), the retry layer every jr2 source shares: 5xx, timeouts and truncated bodies back
  off; a rate limit waits as Linear says.
* Rate limits (Linear's rate-limiting page; the header names are those of `@linear/sdk`'s
  `RatelimitedLinearError`): an answer whose GraphQL error has `extensions.code` `RATELIMITED`
  (or HTTP 429) waits `Retry-After` seconds when given, else until the reset of the budget that is
  spent, `X-RateLimit-Requests-Reset` or `X-RateLimit-Complexity-Reset` (epoch milliseconds,
  measured against the answer's `Date`, not this machine's clock).
* Auth: a personal API key goes as it is in `Authorization` (`LINEAR_API_KEY`); an OAuth access
  token as `Bearer <token>` (`LINEAR_OAUTH_TOKEN`). Both are `SecretStr`s, unwrapped only for the
  header; every error text is scrubbed of them.
* Each answer keeps the server's `Date` (the claim protocol's clock) and is counted: `stats`
  holds requests, writes (mutations), retries and requests per operation name.
* Errors are one line naming the source: `linear:ENG: Linear refused Jr2Issues: <message>`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import SecretStr

from jr2_core import ConfigError, SourceError, SourceHTTPError
from jr2_sources.kit.redact import Redactor
from jr2_sources.kit.rest import parse_http_date
from jr2_sources.kit.retry import Retryable, RetryPolicy, WriteSpacer, retry_or_fail, unreachable

DEFAULT_URL = "https://api.linear.app/graphql"
USER_AGENT = "jr2-linear-source"


class LinearHTTPError(SourceHTTPError):
    """Linear refused an operation in a way that retrying cannot fix; `code` is Linear's
    `extensions.code` (or `type`) when it gave one."""

    def __init__(self, message: str, status: int, code: str = "") -> None:
        super().__init__(message, status)
        self.code = code


@dataclass
class Stats:
    """What a client sent: every attempt, the mutations, the retries, and attempts by name."""

    requests: int = 0
    writes: int = 0
    retries: int = 0
    by_operation: dict[str, int] = field(default_factory=dict)


@dataclass
class Answer:
    """An operation's `data`, the server's `date`, and the response headers."""

    data: dict[str, Any]
    date: datetime | None
    headers: Mapping[str, str]


def api_url(env: Mapping[str, str] | None = None) -> str:
    """Linear's GraphQL endpoint (`LINEAR_API_URL`, for a proxy or a fake; default Linear's)."""
    env = os.environ if env is None else env
    url = (env.get("LINEAR_API_URL") or DEFAULT_URL).strip()
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"LINEAR_API_URL must be an http(s) URL, not {url!r}")
    return url


def resolve_auth(env: Mapping[str, str] | None = None) -> tuple[SecretStr, bool]:
    """The credential and whether it is an OAuth token (Bearer): `LINEAR_API_KEY` first, then
    `LINEAR_OAUTH_TOKEN`; a one-line `ConfigError` when neither is set."""
    env = os.environ if env is None else env
    key = (env.get("LINEAR_API_KEY") or "").strip()
    if key:
        return SecretStr(key), False
    token = (env.get("LINEAR_OAUTH_TOKEN") or "").strip()
    if token:
        return SecretStr(token), True
    raise ConfigError("linear: no credentials: set LINEAR_API_KEY (a personal API key, "
                      "Settings > Security & access) or LINEAR_OAUTH_TOKEN (an OAuth access "
                      "token with read and write scopes)")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    low = name.lower()
    return next((v for k, v in headers.items() if k.lower() == low), None)


def rate_limit_wait(headers: Mapping[str, str]) -> float:
    """Seconds to wait after a RATELIMITED answer (see the module notes); at least 1."""
    after = _header(headers, "retry-after")
    if after is not None:
        try:
            return max(1.0, float(after))
        except ValueError:
            pass
    date = parse_http_date(_header(headers, "date"))
    now = date.timestamp() if date is not None else time.time()
    waits = []
    for budget in ("requests", "complexity"):
        remaining = _header(headers, f"x-ratelimit-{budget}-remaining")
        reset = _header(headers, f"x-ratelimit-{budget}-reset")
        try:
            spent = remaining is not None and float(remaining) <= 0
            if reset is not None and (spent or remaining is None):
                waits.append(float(reset) / 1000.0 - now)
        except ValueError:
            continue
    return max([1.0, *waits]) + (1.0 if waits else 0.0)


class LinearClient:
    """Counted, retried GraphQL requests to one Linear endpoint (see the module notes)."""

    tracker = "Linear"

    def __init__(self, url: str, credential: SecretStr, *, bearer: bool = False, label: str,
                 write_spacing: float = 0.0, policy: RetryPolicy | None = None,
                 timeout: tuple[float, float] = (10.0, 30.0),
                 sleep: Callable[[float], None] = time.sleep, session: Any = None) -> None:
        import requests

        self.url = url
        self.label = label
        self.policy = policy or RetryPolicy()
        self.timeout = timeout
        self.sleep = sleep
        self.stats = Stats()
        self._credential = credential
        self._bearer = bearer
        self._redact = Redactor([credential.get_secret_value()])
        self._session = session or requests.Session()
        self._session.headers.update({"User-Agent": USER_AGENT,
                                      "Content-Type": "application/json"})
        self._lock = threading.Lock()
        self._spacer = WriteSpacer(write_spacing)
        self._reached = False

    def _auth(self) -> str:
        value = self._credential.get_secret_value()
        return f"Bearer {value}" if self._bearer else value

    def run(self, name: str, document: str, variables: Mapping[str, Any] | None = None, *,
            need: str = "read issues") -> Answer:
        """Send one operation (`name` is its operation name, for counts and messages); a
        mutation is spaced and counted as a write."""
        write = document.lstrip().startswith("mutation")
        if write:
            self._spacer.wait()
        body = {"query": document, "variables": dict(variables or {}), "operationName": name}
        attempts = [0]

        def on_retry() -> None:
            with self._lock:
                self.stats.retries += 1

        def once() -> Answer:
            attempts[0] += 1
            return self._once(name, body, need, write)

        return retry_or_fail(once, self.policy, self.sleep, label=self.label,
                             tracker=self.tracker, on_retry=on_retry)

    def close(self) -> None:
        self._session.close()

    def _once(self, name: str, body: dict[str, Any], need: str, write: bool) -> Answer:
        import requests

        with self._lock:
            self.stats.requests += 1
            self.stats.by_operation[name] = self.stats.by_operation.get(name, 0) + 1
            if write:
                self.stats.writes += 1
        try:
            resp = self._session.post(self.url, json=body, headers={"Authorization": self._auth()},
                                      timeout=self.timeout, allow_redirects=False)
        except requests.Timeout:
            raise Retryable("timed out") from None
        except requests.ConnectionError as exc:
            why = None if self._reached else unreachable(exc)
            if why is not None:
                raise SourceError(f"{self.label}: cannot reach {self.url}: {why}") from None
            raise Retryable(f"connection failed: {type(exc).__name__}") from None
        self._reached = True
        status = resp.status_code
        if status >= 500:
            raise Retryable(f"HTTP {status}")
        try:
            payload = resp.json()
        except ValueError:
            if status >= 400:
                raise self._error(name, status, resp.reason or "error", "") from None
            raise Retryable(f"HTTP {status}: unparsable (truncated?) body") from None
        errors = payload.get("errors") if isinstance(payload, dict) else None
        if status == 429 or any(_code(e) == "RATELIMITED" for e in errors or ()):
            raise Retryable("RATELIMITED", rate_limit_wait(resp.headers))
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            raise self._error(name, status, str(first.get("message") or "error"), _code(first))
        if status >= 400:
            raise self._error(name, status, resp.reason or "error", "")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, dict):
            raise Retryable(f"HTTP {status}: no data in the answer")
        return Answer(data, parse_http_date(resp.headers.get("Date")), resp.headers)

    def _error(self, name: str, status: int, message: str, code: str) -> LinearHTTPError:
        message = " ".join(message.split())[:200]
        if status == 401 or code == "AUTHENTICATION_ERROR":
            text = (f"{self.label}: Linear refused the credentials ({message}); check "
                    "LINEAR_API_KEY or LINEAR_OAUTH_TOKEN")
        elif code == "FORBIDDEN" or status == 403:
            text = f"{self.label}: the credentials may not {name} ({message})"
        else:
            text = f"{self.label}: Linear refused {name} ({message})"
        return LinearHTTPError(self._redact(text), status, code)


def _code(error: Any) -> str:
    """Linear's code of one GraphQL error: `extensions.code`, else `extensions.type`, upper."""
    ext = error.get("extensions") if isinstance(error, dict) else None
    if not isinstance(ext, dict):
        return ""
    return str(ext.get("code") or ext.get("type") or "").upper().replace(" ", "_")
