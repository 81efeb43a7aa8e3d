"""A thin client for the few Redmine REST endpoints the tracker uses: counted, spaced, retried.

Design notes
------------
* `jr2_sources.kit.rest.RestClient` (one `requests.Session`, retries in one layer, spaced writes,
  redacted one-line errors); what is Redmine's own is here: the key goes in the
  `X-Redmine-API-Key` header (a `SecretStr`, unwrapped only to build it), lists page by
  `offset`/`limit` (100, Redmine's most) until `total_count`, and errors are Redmine's
  `{"errors": [...]}`.
* Conditional GETs: Redmine (Rails) answers every GET with a weak `ETag` and a matching
  `If-None-Match` with 304 and no body, so an unchanged poll moves a few hundred bytes a page.
  Rails computes that ETag from the rendered body: the server still does the query.
* One issue comes wrapped, `{"issue": {...}}`; `get` unwraps it and adds the two fields the
  kit's label-and-comment tracker reads from an issue object: `state` (`closed` when the
  status `is_closed`, else `open`) and `updated_at` (`updated_on`).
* `server_now()`: the server's clock, from the `Date` of the latest answer (whole seconds)
  plus the time since it came; a journal records no edit time, so a renewed claim writes it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from pydantic import SecretStr

from jr2_core import ConfigError, SourceHTTPError
from jr2_sources.kit.rest import RestClient, RestResponse

USER_AGENT = "jr2-redmine-source"
PAGE = 100


def resolve_key(env: Mapping[str, str] | None = None) -> SecretStr:
    """`REDMINE_API_KEY` as a `SecretStr`; a one-line `ConfigError` when it is not set."""
    env = os.environ if env is None else env
    value = (env.get("REDMINE_API_KEY") or "").strip()
    if not value:
        raise ConfigError("redmine: no API key: set REDMINE_API_KEY (My account > API access "
                          "key; the REST API must be enabled in Administration > Settings > "
                          "API)")
    return SecretStr(value)


class RedmineHTTPError(SourceHTTPError):
    """Redmine answered with an error status that retrying cannot fix."""


def as_issue(raw: dict[str, Any]) -> dict[str, Any]:
    """A Redmine issue object with `state` and `updated_at` added (a new dict)."""
    status = raw.get("status") or {}
    closed = bool(status.get("is_closed")) if isinstance(status, dict) else False
    return {**raw, "state": "closed" if closed else "open",
            "updated_at": raw.get("updated_on")}


class RedmineClient(RestClient):
    """Counted, spaced, retried REST calls against one Redmine."""

    tracker: ClassVar[str] = "Redmine"
    token_hint: ClassVar[str] = "REDMINE_API_KEY (and that the REST API is enabled)"
    session_headers: ClassVar[Mapping[str, str]] = {"User-Agent": USER_AGENT,
                                                    "Accept": "application/json"}
    etag_cache_size: ClassVar[int] = 2048
    error_type = RedmineHTTPError
    status_hints: ClassVar[Mapping[int, str]] = {422: "refused as invalid"}

    def __init__(self, base_url: str, token: SecretStr, **kw: Any) -> None:
        super().__init__(base_url, token, **kw)
        self._skew = timedelta(0)
        self._clock_lock = threading.Lock()

    def auth_headers(self) -> dict[str, str]:
        return {"X-Redmine-API-Key": self._token.get_secret_value()}

    def error_message(self, resp: Any) -> str:
        try:
            data = resp.json()
        except ValueError:
            return ""
        if isinstance(data, dict) and isinstance(data.get("errors"), list):
            return "; ".join(str(e) for e in data["errors"]) or "no reason given"
        return ""

    def next_url(self, resp: Any, url: str) -> str | None:
        return None  # pages are walked by offset (`get_pages`)

    def call(self, method: str, url: str, body: Any, need: str, *,
             write: bool | None = None) -> RestResponse:
        resp = super().call(method, url, body, need, write=write)
        if resp.date is not None:
            with self._clock_lock:
                self._skew = resp.date - datetime.now(UTC)
        return resp

    def server_now(self) -> datetime:
        """The server's time now, as the latest answer's `Date` tells it."""
        with self._clock_lock:
            return datetime.now(UTC) + self._skew

    def get(self, path: str, params: Mapping[str, Any] | None = None, *,
            need: str = "read issues") -> RestResponse:
        resp = super().get(path, params, need=need)
        data = resp.data
        if isinstance(data, dict) and isinstance(data.get("issue"), dict):
            return RestResponse(resp.status, as_issue(data["issue"]), resp.date, None,
                                resp.cached, resp.headers)
        return resp

    def get_pages(self, path: str, key: str, params: Mapping[str, Any] | None = None, *,
                  need: str = "read issues") -> tuple[list[dict[str, Any]], RestResponse]:
        """Every object of a paged list (`key`: `issues`), 100 a request; the first answer."""
        out: list[dict[str, Any]] = []
        offset, first = 0, None
        while True:
            resp = super().get(path, {**(params or {}), "limit": PAGE, "offset": offset},
                               need=need)
            first = first or resp
            data = resp.data if isinstance(resp.data, dict) else {}
            page = [x for x in data.get(key) or [] if isinstance(x, dict)]
            out.extend(page)
            offset += PAGE
            total = data.get("total_count")
            if not page or not isinstance(total, int) or offset >= total:
                return out, first

    def put(self, path: str, body: Any, *, need: str) -> RestResponse:
        """One PUT (Redmine answers 204, no body)."""
        return self.write("PUT", path, body, need=need)


def now_text(when: datetime) -> str:
    """A time as Redmine writes it (`2026-01-02T03:04:05Z`)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str) -> datetime:
    """An ISO-8601 time as Redmine writes it, in UTC."""
    text = value.strip()
    dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)

