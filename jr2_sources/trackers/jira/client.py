"""The kit's counted, retried, spaced REST client over the `jira` package's session.

Searches are posted with a body jr2 builds (Cloud: `POST /rest/api/2/search/jql`, page tokens,
`reconcileIssues`; Data Center: `POST /rest/api/2/search`), only the fields jr2 reads; other
calls are plain requests (`request()`: JSON, `Date`, headers). Errors are one line with Jira's
text, scrubbed of the token. `search_at` says when the server answered the first page. A
read-only client refuses every write but the searches and `comment/list`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from jr2_core.errors import SourceError, SourceHTTPError, UsageError
from jr2_sources.kit.rest import RequestStats, RestClient, RestResponse
from jr2_sources.kit.retry import Retryable, RetryPolicy, rate_limit_wait

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


class _Answering:
    """The `jira` package's session, its error statuses answered rather than raised (retries
    and errors are `kit.rest`'s, as for every tracker)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.headers = session.headers

    def request(self, method: str, url: str, *, timeout: Any = None, **kwargs: Any) -> Any:
        from jira.exceptions import JIRAError

        try:
            return self.session.request(method, url, **kwargs)
        except JIRAError as exc:
            if exc.response is None:
                raise Retryable(f"no answer ({(exc.text or 'empty response')[:80]})") from None
            return exc.response

    def close(self) -> None:
        self.session.close()


class JiraClient(RestClient):
    """The Jira calls jr2 makes, counted and retried in one layer (`kit.rest.RestClient` over
    the `jira` package's session)."""

    tracker = "Jira"
    error_type = JiraHTTPError

    def __init__(self, server: str, auth: JiraAuth, *, label: str, write_spacing: float = 0.2,
                 policy: RetryPolicy | None = None, timeout: tuple[float, float] = (10.0, 30.0),
                 sleep: Callable[[float], None] = time.sleep, read_only: bool = False) -> None:
        from jira import JIRA

        secret = auth.token.get_secret_value()
        creds: dict[str, Any] = ({"basic_auth": (auth.email, secret)} if auth.email
                                 else {"token_auth": secret})
        self.jira = JIRA(server=server.rstrip("/"), options={"check_update": False},
                         max_retries=0, get_server_info=False, timeout=timeout, **creds)
        super().__init__(server, auth.token, label=label, write_spacing=write_spacing,
                         policy=policy, timeout=timeout, sleep=sleep,
                         session=_Answering(self.jira._session))
        self.server = self.base_url
        self.read_only = read_only
        self.fields: tuple[str, ...] = FIELDS  # what a search reads unless told (see tracker)
        self._info: dict[str, Any] | None = None

    def auth_headers(self) -> dict[str, str]:
        return {}  # the package's session carries them

    def error_message(self, resp: Any) -> str:
        return _jira_message(resp) or ""

    # -- the server -----------------------------------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        """`GET /rest/api/2/serverInfo`, once per client."""
        if self._info is None:
            info = self.get("/serverInfo", need="read the server info").data
            if not isinstance(info, dict):
                raise SourceError(f"{self.label}: serverInfo is not a JSON object")
            self._info = info
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
        `Date`). `reconcile`: issue ids to read consistently (Cloud, at most 50). The body
        holds only fields the description allows, with their types (the package's own search
        methods send `"expand": null`, which Atlassian's schema does not allow)."""
        body: dict[str, Any] = {"jql": jql, "fields": list(self.fields if fields is None
                                                            else fields), "maxResults": PAGE}
        cloud = self.is_cloud
        if cloud and reconcile:
            body["reconcileIssues"] = list(reconcile[:50])
        out: list[dict[str, Any]] = []
        at: datetime | None = None
        while True:
            if not cloud:
                body["startAt"] = len(out)
            reply = self.request("POST", "/search/jql" if cloud else "/search", body=body,
                                 need="search issues (check the JQL)")
            page = reply.data
            if not isinstance(page, dict):
                raise SourceError(f"{self.label}: a search answered with no JSON object")
            at = at or reply.date
            issues = page.get("issues") or []
            out.extend(issues)
            if cloud:
                body["nextPageToken"] = page.get("nextPageToken")
                if not body["nextPageToken"] or page.get("isLast") is True:
                    return out, at
            elif not issues or (isinstance(page.get("total"), int) and len(out) >= page["total"]):
                return out, at

    # -- plain requests -------------------------------------------------------------------------

    def get(self, path: str, params: Mapping[str, Any] | None = None, *,
            need: str = "read issues", api: str = API) -> Reply:
        return self.request("GET", path, params=params, need=need, api=api)

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                body: Any = None, need: str = "read issues", api: str = API) -> Reply:
        """One REST call (`path` under `api`: /rest/api/2, or API3 for what only REST v3 says
        in ADF, the dashboard's description), retried; writes are spaced."""
        method = method.upper()
        write = method != "GET" and not path.endswith(READS)
        if write:
            if self.read_only:
                raise UsageError(f"{self.label}: read-only here (a report never writes to Jira)")
            self._spacer.wait()
        return self.call(method, self.url(api + path, params), body, need, write=write)

    # -- errors ---------------------------------------------------------------------------------

    def _raise_for(self, resp: Any, need: str) -> None:
        status, headers = resp.status_code, resp.headers
        message = self._redact(" ".join(self.error_message(resp).split()))[:300]
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
            text = (f"{self.label}: the credentials were refused (HTTP 401: {hint}); check "
                    "JIRA_EMAIL + JIRA_API_TOKEN (Cloud) or JIRA_PAT (Data Center)")
        elif status in (403, 404):
            text = f"{self.label}: cannot {need} (HTTP {status}: {hint})"
        else:
            text = f"{self.label}: Jira refused to {need} (HTTP {status}: {hint})"
        raise JiraHTTPError(text, status)

    def for_writes(self) -> JiraClient:
        """This client (same session, counts and write spacing) allowed to write: for the one
        issue `jr2 dashboard` keeps and what a person's tick asks, while the report's reads
        stay on the read-only client."""
        writer = copy.copy(self)
        writer.read_only = False
        return writer


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
