"""A thin REST client for the few GitLab endpoints the adapter uses: counted, spaced, retried.

Design notes
------------
* One `requests.Session` (keep-alive) rather than python-gitlab's objects: the claim protocol
  needs the `Date` header of a notes listing (the server's clock), tests need an exact count of
  requests, and retries must happen in one layer only (`jr2_sources.retry`), so no library
  retry loop runs underneath.
* The token goes in GitLab's `PRIVATE-TOKEN` header; it is a `SecretStr`, only unwrapped to
  build that header, and every error message is scrubbed of it (`jr2_sources.Redactor`).
* Lists use offset pagination, `per_page=100`, following `Link: rel="next"` or, when a proxy
  dropped it, the `x-next-page` header. Links are followed only on the API's own origin, so the
  token never goes to another host.
* Writes pass a gate that keeps them `write_spacing` apart.
* Errors are one line naming the project and what the token could not do.
"""

from __future__ import annotations

import email.utils
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests
from pydantic import SecretStr

from jr2_core import ConfigError, SourceError, SourceHTTPError
from jr2_sources import Redactor
from jr2_sources.retry import Retryable, RetryPolicy, WriteSpacer, rate_limit_wait, retry_or_fail

USER_AGENT = "jr2-gitlab-source"
DEFAULT_URL = "https://gitlab.com"


def api_url(env: Mapping[str, str] | None = None) -> str:
    """The REST v4 base URL from `GITLAB_URL` (the instance's root; default gitlab.com)."""
    env = os.environ if env is None else env
    url = (env.get("GITLAB_URL") or DEFAULT_URL).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"GITLAB_URL must be an http(s) URL, not {url!r}")
    return url if url.endswith("/api/v4") else url + "/api/v4"


def resolve_token(env: Mapping[str, str] | None = None) -> SecretStr:
    """`GITLAB_TOKEN` as a `SecretStr`; a one-line `ConfigError` when it is not set."""
    env = os.environ if env is None else env
    value = (env.get("GITLAB_TOKEN") or "").strip()
    if not value:
        raise ConfigError("gitlab: no token: set GITLAB_TOKEN (a personal, project or group "
                          "access token with the api scope; read_api is enough for a report)")
    return SecretStr(value)


class GitLabHTTPError(SourceHTTPError):
    """GitLab answered with an error status that retrying cannot fix."""


@dataclass
class Stats:
    """What the client sent: requests (every attempt), writes, retries, by method."""

    requests: int = 0
    writes: int = 0
    retries: int = 0
    by_method: dict[str, int] = field(default_factory=dict)


@dataclass
class Response:
    """A parsed answer: JSON `data`, the server's `date`, and the next page's URL."""

    status: int
    data: Any
    date: datetime | None
    next_url: str | None = None


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def _message(resp: Any) -> str:
    try:
        data = resp.json()
    except ValueError:
        return ""
    if isinstance(data, dict):
        msg = data.get("message", data.get("error", ""))
        if isinstance(msg, dict):  # validation errors: {"field": ["reason"]}
            msg = "; ".join(f"{k} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                            for k, v in msg.items())
        return str(msg)
    return ""


class GitLabClient:
    """Counted, spaced, retried REST calls against one GitLab API base URL."""

    def __init__(
        self,
        base_url: str,
        token: SecretStr,
        *,
        label: str,
        write_spacing: float = 0.2,
        policy: RetryPolicy | None = None,
        timeout: tuple[float, float] = (10.0, 30.0),
        sleep: Callable[[float], None] = time.sleep,
        session: Any = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.base_url))
        self._token = token
        self.label = label
        self.policy = policy or RetryPolicy()
        self.timeout = timeout
        self.sleep = sleep
        self.stats = Stats()
        self._redact = Redactor([token.get_secret_value()])
        self._session = session or requests.Session()
        self._session.headers.update({"User-Agent": USER_AGENT, "Accept": "application/json"})
        self._lock = threading.Lock()
        self._spacer = WriteSpacer(write_spacing)

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        if params:
            query = urlencode(sorted((k, str(v)) for k, v in params.items() if v is not None))
            url = f"{url}{'&' if '?' in url else '?'}{query}"
        return url

    def get(self, path: str, params: Mapping[str, Any] | None = None, *,
            need: str = "read issues") -> Response:
        return self._call("GET", self.url(path, params), None, need)

    def get_all(self, path: str, params: Mapping[str, Any] | None = None, *,
                need: str = "read issues") -> tuple[list[Any], Response]:
        """Every page of a list endpoint; returns the items and the first page's response."""
        first = self.get(path, {"per_page": 100, **(params or {})}, need=need)
        items = list(first.data or [])
        nxt, seen = first.next_url, 0
        while nxt and seen < 10000:
            page = self._call("GET", nxt, None, need)
            items.extend(page.data or [])
            nxt, seen = page.next_url, seen + 1
        return items, first

    def write(self, method: str, path: str, body: Any = None, *,
              need: str = "write issues") -> Response:
        self._spacer.wait()
        return self._call(method, self.url(path), body, need)

    def graphql(self, query: str, variables: Mapping[str, Any], *,
                need: str = "read work items") -> Response:
        """One POST of a read-only GraphQL query to the instance's `/api/graphql` (a query is
        not a write: it is neither spaced nor counted in `stats.writes`)."""
        root = self.base_url.removesuffix("/api/v4")
        return self._call("POST", root + "/api/graphql",
                          {"query": query, "variables": dict(variables)}, need, write=False)

    def close(self) -> None:
        self._session.close()

    # -- internals ------------------------------------------------------------------------------

    def _call(self, method: str, url: str, body: Any, need: str, *,
              write: bool | None = None) -> Response:
        if not url.startswith(self._origin + "/"):
            raise SourceError(f"{self.label}: refusing to follow a link off the API host")
        is_write = method != "GET" if write is None else write
        return retry_or_fail(lambda: self._once(method, url, body, need, is_write), self.policy,
                             self.sleep, label=self.label, tracker="GitLab",
                             on_retry=self._count_retry)

    def _count_retry(self) -> None:
        with self._lock:
            self.stats.retries += 1

    def _next_url(self, resp: Any, url: str) -> str | None:
        nxt = resp.links.get("next", {}).get("url")
        if nxt:
            return str(nxt)
        page = (resp.headers.get("x-next-page") or "").strip()
        if not page.isdigit():
            return None
        parts = urlsplit(url)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "page"] + [("page", page)]
        return urlunsplit(parts._replace(query=urlencode(query)))

    def _once(self, method: str, url: str, body: Any, need: str, write: bool) -> Response:
        headers = {"PRIVATE-TOKEN": self._token.get_secret_value()}
        with self._lock:
            self.stats.requests += 1
            self.stats.by_method[method] = self.stats.by_method.get(method, 0) + 1
            if write:
                self.stats.writes += 1
        try:
            resp = self._session.request(method, url, json=body, headers=headers,
                                         timeout=self.timeout, allow_redirects=False)
        except requests.Timeout:
            raise Retryable("timed out") from None
        except requests.ConnectionError as exc:
            raise Retryable(f"connection failed: {type(exc).__name__}") from None
        status = resp.status_code
        date = _parse_date(resp.headers.get("Date"))
        if status >= 400:
            self._raise_for(resp, need)
        if 300 <= status < 400:  # e.g. a moved project
            return Response(status, None, date, None)
        data: Any = None
        if status != 204 and resp.content:
            try:
                data = resp.json()
            except ValueError:
                raise Retryable(f"HTTP {status}: unparsable (truncated?) body") from None
        nxt = self._next_url(resp, url) if method == "GET" else None
        return Response(status, data, date, nxt)

    def _raise_for(self, resp: Any, need: str) -> None:
        status = resp.status_code
        if status >= 500:
            raise Retryable(f"HTTP {status}")
        message = self._redact(" ".join(_message(resp).split()))[:200]
        limited = rate_limit_wait(status, resp.headers, message, self.policy.secondary_wait)
        if limited is not None:
            raise limited
        hint = message or (resp.reason or "error")
        if status == 404:
            hint = "not found or no access"
        if status == 401:
            text = f"{self.label}: the token was refused (HTTP 401: {hint}); check GITLAB_TOKEN"
        elif status in (403, 404):
            text = f"{self.label}: the token cannot {need} (HTTP {status}: {hint})"
        else:
            text = f"{self.label}: GitLab refused to {need} (HTTP {status}: {hint})"
        raise GitLabHTTPError(self._redact(text), status)
