"""A counted, retried, spaced REST client over one `requests.Session`, for a tracker's JSON API
(public: the GitHub source and the GitLab plugin). A subclass names its tracker and supplies
`auth_headers`, `error_message` and `token_hint`.

* Conditional GETs (`etag_cache_size` > 0): a GET with an `ETag` is kept (LRU by URL), repeated
  with `If-None-Match`, a 304 answered from the cache; URLs differing only in a `moving_params`
  value keep their last `FAMILY_KEEP`; `forget` drops an item's; a list walked in full drops the
  pages past its new end, and `forget_walk` its later pages.
* Retries only in `kit.retry`; every response's `Date` is kept and every request counted
  (`RequestStats`); writes kept `write_spacing` apart.
* The token is a `SecretStr`, scrubbed from errors; `Link: rel="next"` is followed only on the
  API's origin, redirects never. Errors are one line naming the source and what the token could
  not do. `requests` is imported when a client is made.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit

from pydantic import SecretStr

from jr2_core.errors import SourceError, SourceHTTPError

from .redact import Redactor
from .retry import (
    Retryable,
    RetryPolicy,
    WriteSpacer,
    parse_http_date,
    rate_limit_wait,
    retry_or_fail,
    unreachable,
)

__all__ = ["RequestStats", "RestClient", "RestResponse", "parse_http_date"]


@dataclass
class RequestStats:
    """What a client sent: requests (every attempt), writes, retries, and requests by method."""

    requests: int = 0
    writes: int = 0
    retries: int = 0
    by_method: dict[str, int] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        """A copy as plain data (for benchmarks and reports)."""
        return asdict(self)


@dataclass
class RestResponse:
    """A parsed answer: JSON `data`, the server's `date`, the next and last pages' URLs, and
    whether it came from a cache of conditional GETs (`cached`: the server said 304)."""

    status: int
    data: Any
    date: datetime | None
    next_url: str | None = None
    cached: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    last_url: str | None = None


FAMILY_KEEP = 4  # URLs kept per family of `moving_params` (a sweep's, a delta's, a page's, one)
WALKS_KEPT = 64  # lists of several pages whose later pages are remembered (`get_all`)


class RestClient:
    """Counted, spaced, retried REST calls against one API base URL (see the module notes). A
    subclass names the `tracker` in messages ("GitHub refused to ..."), what a 401 says to
    check (`token_hint`), words for statuses whose answer says nothing (`status_hints`), the
    headers of every request, how many GET answers to keep (`etag_cache_size`), the query
    parameters that move at each reading (`moving_params`, GitHub `since`) and the
    `error_type` of a status that retrying cannot fix."""

    tracker: ClassVar[str] = "the tracker"
    token_hint: ClassVar[str] = "the token"
    status_hints: ClassVar[Mapping[int, str]] = {}
    max_pages: ClassVar[int] = 10_000  # a server that links pages in a loop stops here
    session_headers: ClassVar[Mapping[str, str]] = {}
    default_write_spacing: ClassVar[float] = 0.2
    etag_cache_size: ClassVar[int] = 0
    moving_params: ClassVar[frozenset[str]] = frozenset()
    error_type: ClassVar[type[SourceHTTPError]] = SourceHTTPError

    def __init__(self, base_url: str, token: SecretStr, *, label: str,
                 write_spacing: float | None = None, policy: RetryPolicy | None = None,
                 timeout: tuple[float, float] = (10.0, 30.0),
                 sleep: Callable[[float], None] = time.sleep, session: Any = None) -> None:
        import requests

        self.base_url = base_url.rstrip("/")
        self._origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.base_url))
        self._token = token
        self.label = label
        self.policy = policy or RetryPolicy()
        self.timeout = timeout
        self.sleep = sleep
        self.stats = self.new_stats()
        self._redact = Redactor([token.get_secret_value()])
        self._session = session or requests.Session()
        self._session.headers.update(dict(self.session_headers))
        self._lock = threading.Lock()
        self._spacer = WriteSpacer(self.default_write_spacing if write_spacing is None
                                   else write_spacing)
        self._etags: OrderedDict[str, tuple[str, RestResponse]] = OrderedDict()
        self._families: dict[str, list[str]] = {}  # a URL less its moving params -> cached URLs
        self._walks: OrderedDict[str, list[str]] = OrderedDict()  # a list's URL -> its pages 2..
        self._reached = False  # any answer yet (before one, an unreachable host is final)

    # -- what a tracker supplies ------------------------------------------------------------

    def new_stats(self) -> RequestStats:
        """The counters this client keeps (a subclass may count more)."""
        return RequestStats()

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the token on each request."""
        return {"Authorization": f"Bearer {self._token.get_secret_value()}"}

    def error_message(self, resp: Any) -> str:
        """The tracker's own words for an error answer ("" when none): its `message` and those
        of its `errors` (where GitHub's 422 says what failed)."""
        try:
            data = resp.json()
        except ValueError:
            return ""
        if not isinstance(data, dict):
            return ""
        words = [str(data.get("message", "") or "")]
        errors = data.get("errors")
        for err in errors if isinstance(errors, list) else ():
            said = err.get("message") if isinstance(err, dict) else err
            if isinstance(said, str) and said and said not in words:
                words.append(said)
        return ": ".join(w for w in words if w)

    def next_url(self, resp: Any, url: str) -> str | None:
        """The next page of a list: `Link: rel="next"`."""
        nxt = resp.links.get("next", {}).get("url")
        return str(nxt) if nxt else None

    def answered(self, status: int) -> None:
        """Called with every status received (e.g. to count rate-limit points)."""

    # -- public calls -----------------------------------------------------------------------

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """The full URL of `path` (relative to the API base) with `params` in a stable order."""
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        if params:
            query = urlencode(sorted((k, str(v)) for k, v in params.items() if v is not None))
            url = f"{url}{'&' if '?' in url else '?'}{query}"
        return url

    def get(self, path: str, params: Mapping[str, Any] | None = None, *,
            need: str = "read issues") -> RestResponse:
        """One GET (conditional when the subclass keeps a cache)."""
        return self.call("GET", self.url(path, params), None, need)

    def get_all(self, path: str, params: Mapping[str, Any] | None = None, *,
                need: str = "read issues") -> tuple[list[Any], RestResponse]:
        """Every page of a list endpoint: the items and the first page's response."""
        query = {"per_page": 100, **(params or {})}
        first = self.get(path, query, need=need)
        items = list(first.data or [])
        nxt, walked = first.next_url, list[str]()
        while nxt and len(walked) + 1 < self.max_pages:
            walked.append(nxt)
            page = self.call("GET", nxt, None, need)
            items.extend(page.data or [])
            nxt = page.next_url
        if nxt is None:
            self._walked(self.url(path, query), walked)
        return items, first

    def _walked(self, first: str, later: list[str]) -> None:
        """A whole walk of the list at `first` read the pages `later`: pages past its new end
        leave the cache."""
        with self._lock:
            gone = [u for u in self._walks.pop(first, ()) if u not in later]
            for u in gone:
                self._etags.pop(u, None)
            if later and self.etag_cache_size > 0:
                self._walks[first] = later
                while len(self._walks) > WALKS_KEPT:
                    self._walks.popitem(last=False)

    def forget_walk(self, path: str, params: Mapping[str, Any]) -> None:
        """Drop the cached later pages of the list at `path` with `params` as last walked whole
        (`get_all`): once the list changed they would answer 200 anyway, and they hold a copy of
        the whole list meanwhile."""
        with self._lock:
            for u in self._walks.pop(self.url(path, {"per_page": 100, **params}), ()):
                self._etags.pop(u, None)

    def write(self, method: str, path: str, body: Any = None, *,
              need: str = "write issues") -> RestResponse:
        """A mutating request, spaced `write_spacing` after the previous one."""
        self._spacer.wait()
        return self.call(method, self.url(path), body, need)

    def call(self, method: str, url: str, body: Any, need: str, *,
             write: bool | None = None) -> RestResponse:
        """One request with retries, on the API's own origin only (not spaced); `write`:
        whether it counts in `stats.writes` (default: any method but GET)."""
        if not url.startswith(self._origin + "/"):
            raise SourceError(f"{self.label}: refusing to follow a link off the API host")
        is_write = method != "GET" if write is None else write
        return retry_or_fail(lambda: self._once(method, url, body, need, is_write), self.policy,
                             self.sleep, label=self.label, tracker=self.tracker,
                             on_retry=self._count_retry)

    def close(self) -> None:
        self._session.close()

    # -- internals --------------------------------------------------------------------------

    def _count_retry(self) -> None:
        with self._lock:
            self.stats.retries += 1

    def _once(self, method: str, url: str, body: Any, need: str, write: bool) -> RestResponse:
        import requests

        headers = self.auth_headers()
        with self._lock:
            cached = self._etags.get(url) if method == "GET" else None
            if cached is not None:
                self._etags.move_to_end(url)
            self.stats.requests += 1
            self.stats.by_method[method] = self.stats.by_method.get(method, 0) + 1
            if write:
                self.stats.writes += 1
        if cached is not None:
            headers["If-None-Match"] = cached[0]
        try:
            resp = self._session.request(method, url, json=body, headers=headers,
                                         timeout=self.timeout, allow_redirects=False)
        except requests.Timeout:
            raise Retryable("timed out") from None
        except requests.ConnectionError as exc:
            why = None if self._reached else unreachable(exc)
            if why is not None:  # offline, or a wrong URL: not worth a retry
                raise SourceError(f"{self.label}: cannot reach {urlsplit(url).hostname}: "
                                  f"{why}") from None
            raise Retryable(f"connection failed: {type(exc).__name__}") from None
        status = resp.status_code
        with self._lock:
            self._reached = True
            self.answered(status)
        date = parse_http_date(resp.headers.get("Date"))
        if status == 304 and cached is not None:
            kept = cached[1]
            return RestResponse(304, kept.data, date, kept.next_url, True, resp.headers,
                                kept.last_url)
        if status >= 400:
            self._raise_for(resp, need)
        if 300 <= status < 400:  # e.g. an issue transferred or a project moved
            return RestResponse(status, None, date, None, False, resp.headers)
        data: Any = None
        if status != 204 and resp.content:
            try:
                data = resp.json()
            except ValueError:
                raise Retryable(f"HTTP {status}: unparsable (truncated?) body") from None
        nxt = self.next_url(resp, url) if method == "GET" else None
        last = resp.links.get("last", {}).get("url") if method == "GET" else None
        answer = RestResponse(status, data, date, nxt, False, resp.headers, last and str(last))
        etag = resp.headers.get("ETag")
        if method == "GET" and etag and status == 200 and self.etag_cache_size > 0:
            with self._lock:
                self._etags[url] = (etag, answer)
                self._etags.move_to_end(url)
                self._keep_family(url)
                while len(self._etags) > self.etag_cache_size:
                    self._etags.popitem(last=False)
        return answer

    def _keep_family(self, url: str) -> None:
        """Keep the last `FAMILY_KEEP` URLs of `url`'s family (under `_lock`)."""
        if not self.moving_params or "?" not in url:
            return
        base, query = url.split("?", 1)
        pairs = [kv for kv in query.split("&") if kv.split("=", 1)[0] not in self.moving_params]
        family = f"{base}?{'&'.join(pairs)}"
        if family == url:
            return
        urls = self._families.setdefault(family, [])
        if url in urls:
            urls.remove(url)
        urls.append(url)
        while len(urls) > FAMILY_KEEP:
            self._etags.pop(urls.pop(0), None)

    def forget(self, *paths: str) -> None:
        """Drop the cached answers of `paths` (any query): an item whose claim ended."""
        gone = {self.url(p) for p in paths}
        with self._lock:
            for url in [u for u in self._etags if u.split("?", 1)[0] in gone]:
                del self._etags[url]

    def _raise_for(self, resp: Any, need: str) -> None:
        status = resp.status_code
        if status >= 500:
            raise Retryable(f"HTTP {status}")
        message = self._redact(" ".join(self.error_message(resp).split()))[:200]
        limited = rate_limit_wait(status, resp.headers, message, self.policy.secondary_wait)
        if limited is not None:
            raise limited
        hint = message or self.status_hints.get(status, resp.reason or "error")
        if status == 404:
            hint = "not found or no access"
        if status == 401:
            text = (f"{self.label}: the token was refused (HTTP 401: {hint}); check "
                    f"{self.token_hint}")
        elif status in (403, 404):
            text = f"{self.label}: the token cannot {need} (HTTP {status}: {hint})"
        else:  # not about the token: what it needs (the words in brackets) is beside the point
            text = (f"{self.label}: {self.tracker} refused to {need.partition(' (')[0]} "
                    f"(HTTP {status}: {hint})")
        raise self.error_type(self._redact(text), status)
