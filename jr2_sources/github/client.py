"""A thin REST client for the few GitHub endpoints the adapter uses: counted, conditional, spaced.

Design notes
------------
* One `requests.Session` (keep-alive), not PyGithub: the adapter needs what PyGithub hides — the
  `ETag` of every list page (to send `If-None-Match`), the response `Date` (the server's clock is
  the claim protocol's clock) and an exact count of requests. PyGithub's lazy completion can also
  send one GET per issue when an attribute the list lacks is read; plain dicts cannot.
* Every GET goes through a per-process ETag cache (bounded LRU keyed by the full URL): a repeated
  GET carries `If-None-Match`, and a `304 Not Modified` (which GitHub does not count against the
  rate limit) is answered from the cache. `stats` counts requests, 304s and rate-limit points.
* Writes (POST/PATCH/PUT/DELETE) pass a thread-safe gate that keeps them `write_spacing` apart
  (GitHub: at least one second between mutating requests).
* Errors are one line naming the repository and what the token could not do, e.g.
  `github:o/r: the token cannot read issues (HTTP 404: not found or no access)`; the token is
  never in a message (it is a `SecretStr`, and messages are scrubbed of it anyway).
* Links from `Link` headers are followed only on the API's own origin, so the token is never sent
  to another host.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests
from pydantic import SecretStr

from jr2_core.errors import SourceError, SourceHTTPError

from ..redact import Redactor
from ..retry import Retryable, RetryPolicy, WriteSpacer, rate_limit_wait, retry_or_fail

USER_AGENT = "jr2-github-source"
API_VERSION = "2022-11-28"
_CACHE_SIZE = 4096


class GitHubHTTPError(SourceHTTPError):
    """GitHub answered with an error status that retrying cannot fix."""


@dataclass
class Stats:
    """What the client sent: requests (every attempt), 304s, rate-limit points, writes."""

    requests: int = 0
    not_modified: int = 0
    points: int = 0
    writes: int = 0
    retries: int = 0
    by_method: dict[str, int] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        return {"requests": self.requests, "not_modified": self.not_modified,
                "points": self.points, "writes": self.writes, "retries": self.retries,
                "by_method": dict(self.by_method)}


@dataclass
class Response:
    """A parsed answer: JSON `data`, the server's `date`, the next page's URL, and whether it
    came from the ETag cache (`cached`: GitHub said 304)."""

    status: int
    data: Any
    date: datetime | None
    next_url: str | None = None
    cached: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)


_STATUS_HINT = {401: "bad credentials", 403: "forbidden", 404: "not found or no access",
                410: "gone", 422: "unprocessable"}


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


class GitHubClient:
    """Counted, conditional, spaced REST calls against one API base URL."""

    def __init__(
        self,
        base_url: str,
        token: SecretStr,
        *,
        label: str,
        write_spacing: float = 1.0,
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
        self._session.headers.update({
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": USER_AGENT,
        })
        self._cache: OrderedDict[str, tuple[str, Any, str | None]] = OrderedDict()
        self._lock = threading.Lock()
        self._spacer = WriteSpacer(write_spacing)

    # -- public calls ---------------------------------------------------------------------------

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """The full URL of `path` (relative to the API base) with `params` in a stable order."""
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        if params:
            query = urlencode(sorted((k, str(v)) for k, v in params.items() if v is not None))
            url = f"{url}{'&' if '?' in url else '?'}{query}"
        return url

    def get(self, path: str, params: Mapping[str, Any] | None = None, *,
            need: str = "read issues") -> Response:
        """A conditional GET: `If-None-Match` when the URL was fetched before."""
        return self._call("GET", self.url(path, params), None, need)

    def get_all(self, path: str, params: Mapping[str, Any] | None = None, *,
                need: str = "read issues") -> tuple[list[Any], Response]:
        """Every page of a list endpoint (`per_page=100`, following `Link: rel="next"`);
        returns the items and the first page's response."""
        query = {"per_page": 100, **(params or {})}
        first = self.get(path, query, need=need)
        items = list(first.data or [])
        nxt = first.next_url
        while nxt:
            page = self._call("GET", nxt, None, need)
            items.extend(page.data or [])
            nxt = page.next_url
        return items, first

    def write(self, method: str, path: str, body: Any = None, *,
              need: str = "write issues") -> Response:
        """A mutating request, spaced `write_spacing` after the previous one."""
        self._spacer.wait()
        return self._call(method, self.url(path), body, need)

    def close(self) -> None:
        self._session.close()

    # -- internals ------------------------------------------------------------------------------

    def _call(self, method: str, url: str, body: Any, need: str) -> Response:
        if not url.startswith(self._origin + "/"):
            raise SourceError(f"{self.label}: refusing to follow a link off the API host")
        return retry_or_fail(lambda: self._once(method, url, body, need), self.policy,
                             self.sleep, label=self.label, tracker="GitHub",
                             on_retry=self._count_retry)

    def _count_retry(self) -> None:
        with self._lock:
            self.stats.retries += 1

    def _once(self, method: str, url: str, body: Any, need: str) -> Response:
        headers = {"Authorization": f"Bearer {self._token.get_secret_value()}"}
        with self._lock:
            cached = self._cache.get(url) if method == "GET" else None
        if cached is not None:
            headers["If-None-Match"] = cached[0]
        with self._lock:
            self.stats.requests += 1
            self.stats.by_method[method] = self.stats.by_method.get(method, 0) + 1
            if method != "GET":
                self.stats.writes += 1
        try:
            resp = self._session.request(method, url, json=body, headers=headers,
                                         timeout=self.timeout, allow_redirects=False)
        except requests.Timeout:
            raise Retryable("timed out") from None
        except requests.ConnectionError as exc:
            raise Retryable(f"connection failed: {type(exc).__name__}") from None
        status = resp.status_code
        if status != 304:
            with self._lock:
                self.stats.points += 1
        date = _parse_date(resp.headers.get("Date"))
        if status == 304 and cached is not None:
            with self._lock:
                self.stats.not_modified += 1
                self._cache.move_to_end(url)
            return Response(304, cached[1], date, cached[2], True, resp.headers)
        if status >= 400:
            self._raise_for(resp, need)
        if 300 <= status < 400:  # e.g. 301 for an issue transferred to another repository
            return Response(status, None, date, None, False, resp.headers)
        data: Any = None
        if status != 204 and resp.content:
            try:
                data = resp.json()
            except ValueError:
                raise Retryable(f"HTTP {status}: unparsable (truncated?) body") from None
        nxt = resp.links.get("next", {}).get("url")
        etag = resp.headers.get("ETag")
        if method == "GET" and etag and status == 200:
            with self._lock:
                self._cache[url] = (etag, data, nxt)
                self._cache.move_to_end(url)
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return Response(status, data, date, nxt, False, resp.headers)

    def _raise_for(self, resp: Any, need: str) -> None:
        status = resp.status_code
        try:
            message = str(resp.json().get("message", ""))
        except (ValueError, AttributeError):
            message = ""
        message = self._redact(" ".join(message.split()))[:200]
        if status >= 500:
            raise Retryable(f"HTTP {status}")
        limited = rate_limit_wait(status, resp.headers, message, self.policy.secondary_wait)
        if limited is not None:
            raise limited
        hint = message or _STATUS_HINT.get(status, resp.reason or "error")
        if status == 404:
            hint = "not found or no access"
        if status == 401:
            text = (f"{self.label}: the token was refused (HTTP 401: {hint}); check "
                    "GITHUB_TOKEN / GH_TOKEN")
        elif status in (403, 404):
            text = f"{self.label}: the token cannot {need} (HTTP {status}: {hint})"
        else:
            text = f"{self.label}: GitHub refused to {need} (HTTP {status}: {hint})"
        raise GitHubHTTPError(text, status)
