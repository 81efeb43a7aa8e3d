"""A thin REST client for the few GitLab endpoints the tracker uses: counted, spaced, retried.

Design notes
------------
* `jr2_sources.kit.rest.RestClient` (one `requests.Session`, counted, retried in one layer, spaced
  writes, redacted one-line errors, links followed on the API's origin only) rather than
  python-gitlab's objects: the claim protocol needs the `Date` header of a notes listing (the
  server's clock) and tests need an exact count of requests. What is GitLab's own is here.
* The token goes in GitLab's `PRIVATE-TOKEN` header; it is a `SecretStr`, only unwrapped to
  build that header.
* Lists use offset pagination, `per_page=100`, following `Link: rel="next"` or, when a proxy
  dropped it, the `x-next-page` header.
* Error text is GitLab's `message` (or `error`); validation errors name each field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import SecretStr

from jr2_core import ConfigError, SourceHTTPError
from jr2_sources.kit.rest import RestClient, RestResponse

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


class GitLabClient(RestClient):
    """Counted, spaced, retried REST calls against one GitLab API base URL."""

    tracker: ClassVar[str] = "GitLab"
    token_hint: ClassVar[str] = "GITLAB_TOKEN"
    session_headers: ClassVar[Mapping[str, str]] = {"User-Agent": USER_AGENT,
                                                    "Accept": "application/json"}
    error_type = GitLabHTTPError

    def auth_headers(self) -> dict[str, str]:
        return {"PRIVATE-TOKEN": self._token.get_secret_value()}

    def error_message(self, resp: Any) -> str:
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

    def next_url(self, resp: Any, url: str) -> str | None:
        nxt = super().next_url(resp, url)
        if nxt:
            return nxt
        page = (resp.headers.get("x-next-page") or "").strip()
        if not page.isdigit():
            return None
        parts = urlsplit(url)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "page"] + [("page", page)]
        return urlunsplit(parts._replace(query=urlencode(query)))

    def graphql(self, query: str, variables: Mapping[str, Any], *,
                need: str = "read work items") -> RestResponse:
        """One POST of a read-only GraphQL query to the instance's `/api/graphql` (a query is
        not a write: it is neither spaced nor counted in `stats.writes`)."""
        root = self.base_url.removesuffix("/api/v4")
        return self.call("POST", root + "/api/graphql",
                         {"query": query, "variables": dict(variables)}, need, write=False)

