"""A counted, retried, spaced client over the `jira` package for the endpoints jr2 uses.

Searches are posted with a body jr2 builds (Cloud: `POST /rest/api/2/search/jql`, page tokens,
`reconcileIssues`; Data Center: `POST /rest/api/2/search`), only the fields jr2 reads; other
calls go through the package's session as plain requests (`request()`: JSON, `Date`, headers).
Retries only in `kit.retry`; errors are one line with Jira's text, scrubbed of the token.
`search_at` says when the server answered the first page; `stats` counts every response. A
read-only client refuses every write but the searches and `comment/list`.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import requests

from jr2_core.errors import SourceError, SourceHTTPError, UsageError
from jr2_sources.kit.redact import Redactor
from jr2_sources.kit.rest import RequestStats, RestResponse, parse_http_date
from jr2_sources.kit.retry import (
    Retryable,
    RetryPolicy,
    WriteSpacer,
    rate_limit_wait,
    retry_or_fail,
    unreachable,
)

from .config import JiraAuth

FIELDS = ("summary", "status", "labels", "assignee", "priority", "created", "updated",
          "issuelinks", "subtasks", "parent")
PAGE = 100
API = "/rest/api/2"
API3 = "/rest/api/3"  # Cloud's REST v3: the same operations, rich text as ADF
READS = ("/search", "/search/jql", "/comment/list")  # POSTs that only read


class JiraHTTPError(SourceHTTPError):
    """Jira answered with an error status that retrying cannot fix."""


Stats = RequestStats  # requests (responses plus connection failures), writes, retries
Reply = RestResponse  # status, JSON `data`, the server's `date`, the headers (no paging here)


def parse_jira_time(value: str) -> datetime:
    """Jira's timestamps (`2024-01-02T03:04:05.123+0000`) as aware datetimes."""
    for fmt in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(value, fmt)
        except ValueError:
            continue
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


_HINT = {401: "unauthorized", 403: "forbidden", 404: "not found or no access", 400: "bad request"}


class JiraClient:
    """The Jira calls jr2 makes, counted and retried in one layer."""

    def __init__(self, server: str, auth: JiraAuth, *, label: str, write_spacing: float = 0.2,
                 policy: RetryPolicy | None = None, timeout: tuple[float, float] = (10.0, 30.0),
                 sleep: Callable[[float], None] = time.sleep, read_only: bool = False) -> None:
        from jira import JIRA

        self.server = server.rstrip("/")
        self.label = label
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.read_only = read_only
        self.fields: tuple[str, ...] = FIELDS  # what a search reads unless told (see adapter)
        self.stats = Stats()
        self._redact = Redactor([auth.token.get_secret_value()])
        self._reached = False  # any answer yet (before one, an unreachable host is final)
        secret = auth.token.get_secret_value()
        creds: dict[str, Any] = ({"basic_auth": (auth.email, secret)} if auth.email
                                 else {"token_auth": secret})
        self.jira = JIRA(server=self.server, options={"check_update": False}, max_retries=0,
                         get_server_info=False, timeout=timeout, **creds)
        self._session = self.jira._session
        self._session.hooks.setdefault("response", []).append(self._count)
        self._lock = threading.Lock()
        self._spacer = WriteSpacer(write_spacing)
        self._info: dict[str, Any] | None = None
        self._seen = threading.local()  # the `Date` of this thread's last response

    # -- counting -------------------------------------------------------------------------------

    def _count(self, resp: requests.Response, *args: Any, **kwargs: Any) -> None:
        method = (resp.request.method or "GET").upper() if resp.request is not None else "GET"
        self._seen.date = parse_http_date(resp.headers.get("Date"))
        with self._lock:
            self.stats.requests += 1
            self.stats.by_method[method] = self.stats.by_method.get(method, 0) + 1
            if method != "GET" and not str(resp.url).split("?")[0].endswith(READS):
                self.stats.writes += 1

    # -- the server -----------------------------------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        """`GET /rest/api/2/serverInfo`, once per client."""
        if self._info is None:
            info = self._retrying(self.jira.server_info, "read the server info")
            if not isinstance(info, dict):
                raise SourceError(f"{self.label}: serverInfo is not a JSON object")
            self._info = info
            self.jira.deploymentType = info.get("deploymentType")
            nums = info.get("versionNumbers")
            if isinstance(nums, list):
                self.jira._version = tuple(nums)
        return self._info

    @property
    def is_cloud(self) -> bool:
        """Jira Cloud (`deploymentType: Cloud`); anything else is Server / Data Center."""
        return self.server_info().get("deploymentType") == "Cloud"

    # -- search ---------------------------------------------------------------------------------

    def search(self, jql: str, fields: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """Every issue matching `jql`, `PAGE` per request, with only `fields` (default: the
        client's `fields`)."""
        return self.search_at(jql, fields)[0]

    def search_at(self, jql: str, fields: tuple[str, ...] | None = None, *,
                  reconcile: tuple[int, ...] = ()) -> tuple[list[dict[str, Any]], datetime | None]:
        """`search`, and the server's time of the first page's answer (None when it sent no
        `Date`). `reconcile`: issue ids to read consistently (Cloud, at most 50)."""
        fields = self.fields if fields is None else fields
        out: list[dict[str, Any]] = []
        at: datetime | None = None
        self._seen.date = None
        if self.is_cloud:
            token: str | None = None
            while True:
                page = self._page(self._cloud_page(jql, token, fields, reconcile[:50]))
                at = at or self._seen.date
                out.extend(page.get("issues") or [])
                token = page.get("nextPageToken")
                if not token or page.get("isLast") is True:
                    return out, at
        start = 0
        while True:
            page = self._page(self._dc_page(jql, start, fields))
            at = at or self._seen.date
            issues = page.get("issues") or []
            out.extend(issues)
            start += len(issues)
            total = page.get("total")
            if not issues or (isinstance(total, int) and start >= total):
                return out, at

    def _cloud_page(self, jql: str, token: str | None, fields: tuple[str, ...],
                    reconcile: tuple[int, ...] = ()) -> Callable[[], Any]:
        body: dict[str, Any] = {"jql": jql, "fields": list(fields), "maxResults": PAGE}
        if token:
            body["nextPageToken"] = token
        if reconcile:
            body["reconcileIssues"] = list(reconcile)
        return lambda: self._search_post("/search/jql", body)

    def _dc_page(self, jql: str, start: int, fields: tuple[str, ...]) -> Callable[[], Any]:
        body = {"jql": jql, "startAt": start, "maxResults": PAGE, "fields": list(fields)}
        return lambda: self._search_post("/search", body)

    def _search_post(self, path: str, body: dict[str, Any]) -> Any:
        """One search page through the package's session (it raises `JIRAError` on an error
        status). The body holds only fields the description allows, with their types: the
        package's own search methods send `"expand": null` (and `"properties": null` on Cloud),
        which Atlassian's schema does not allow."""
        return self._session.post(f"{self.server}{API}{path}", data=json.dumps(body)).json()

    def _page(self, fn: Callable[[], Any]) -> dict[str, Any]:
        page = self._retrying(fn, "search issues (check the JQL)")
        if not isinstance(page, dict):
            raise SourceError(f"{self.label}: a search answered with no JSON object")
        return page

    # -- plain requests -------------------------------------------------------------------------

    def get(self, path: str, params: Mapping[str, Any] | None = None, *,
            need: str = "read issues", api: str = API) -> Reply:
        return self.request("GET", path, params=params, need=need, api=api)

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                body: Any = None, need: str = "read issues", api: str = API) -> Reply:
        """One REST call (`path` under `api`: /rest/api/2, or API3 for what only REST v3 says
        in ADF, the dashboard's description), retried; writes are spaced."""
        method = method.upper()
        if method != "GET" and not path.endswith(READS):
            if self.read_only:
                raise UsageError(f"{self.label}: read-only here (a report never writes to Jira)")
            self._spacer.wait()
        url = f"{self.server}{api}{path}"

        def once() -> Reply:
            data = json.dumps(body) if body is not None else None
            resp = self._session.request(method, url, params=dict(params or {}), data=data)
            parsed: Any = None
            if resp.status_code != 204 and resp.content:
                parsed = resp.json()
            return Reply(resp.status_code, parsed, parse_http_date(resp.headers.get("Date")),
                         headers=resp.headers)

        result: Reply = self._retrying(once, need)
        return result

    # -- retries and errors ---------------------------------------------------------------------

    def _retrying(self, fn: Callable[[], Any], need: str) -> Any:
        return retry_or_fail(lambda: self._attempt(fn, need), self.policy, self.sleep,
                             label=self.label, tracker="Jira", on_retry=self._count_retry)

    def _count_retry(self) -> None:
        with self._lock:
            self.stats.retries += 1

    def _attempt(self, fn: Callable[[], Any], need: str) -> Any:
        from jira.exceptions import JIRAError

        try:
            result = fn()
            self._reached = True
            return result
        except JIRAError as exc:
            self._reached = self._reached or exc.status_code is not None
            self._raise_for(exc.status_code, exc.response, exc.text, need)
        except requests.Timeout:
            raise Retryable("timed out") from None
        except requests.ConnectionError as exc:
            with self._lock:
                self.stats.requests += 1
            why = None if self._reached else unreachable(exc)
            if why is not None:  # offline, or a wrong URL: not worth a retry
                raise SourceError(f"{self.label}: cannot reach {urlsplit(self.server).hostname}: "
                                  f"{why}") from None
            raise Retryable(f"connection failed: {type(exc).__name__}") from None
        except ValueError:  # a truncated or non-JSON body
            raise Retryable("unparsable (truncated?) body") from None
        raise AssertionError("unreachable")

    def _raise_for(self, status: int | None, resp: Any, text: str | None, need: str) -> None:
        if status is None:
            raise Retryable(f"no answer ({(text or 'empty response')[:80]})")
        headers: Mapping[str, str] = getattr(resp, "headers", None) or {}
        message = self._redact(" ".join(str(_jira_message(resp) or text or "").split()))[:300]
        if status >= 500 and status != 503:
            raise Retryable(f"HTTP {status}")
        if status in (429, 503):
            retry_after = headers.get("Retry-After")
            if retry_after is not None:
                try:
                    raise Retryable(f"HTTP {status}: rate limited", max(0.0, float(retry_after)))
                except ValueError:
                    pass
            if status == 503:
                raise Retryable("HTTP 503")
            limited = rate_limit_wait(429, headers, message, self.policy.secondary_wait)
            if limited is not None:
                raise limited
        if status == 409:
            raise Retryable("HTTP 409: conflict")
        hint = message or _HINT.get(status, "error")
        if status == 401:
            text_ = (f"{self.label}: the credentials were refused (HTTP 401: {hint}); check "
                     "JIRA_EMAIL + JIRA_API_TOKEN (Cloud) or JIRA_PAT (Data Center)")
        elif status in (403, 404):
            text_ = f"{self.label}: cannot {need} (HTTP {status}: {hint})"
        else:
            text_ = f"{self.label}: Jira refused to {need} (HTTP {status}: {hint})"
        raise JiraHTTPError(text_, status)

    def for_writes(self) -> JiraClient:
        """This client (same session, counts and write spacing) allowed to write: for the one
        issue `jr2 dashboard` keeps and what a person's tick asks, while the report's reads
        stay on the read-only client."""
        writer = copy.copy(self)
        writer.read_only = False
        return writer

    def close(self) -> None:
        self._session.close()


def _jira_message(resp: Any) -> str | None:
    """Jira's own error text: `errorMessages` and `errors` of the documented error body."""
    if resp is None:
        return None
    try:
        data = resp.json()
    except (ValueError, AttributeError):
        text = getattr(resp, "text", "") or ""
        # whole: the caller redacts before it shortens (a cut secret would not match)
        return text if text and "<html" not in text.lower() else None
    if not isinstance(data, dict):
        return None
    parts = [str(m) for m in data.get("errorMessages") or []]
    errors = data.get("errors")
    if isinstance(errors, dict):
        parts += [f"{k}: {v}" for k, v in errors.items()]
    if data.get("message"):
        parts.append(str(data["message"]))
    return "; ".join(parts) or None
