"""The REST client of the GitHub source (`kit.rest.RestClient`): counted, conditional, spaced.

What is GitHub's own is here: the headers, the ETag cache of every GET (4096 URLs; a 304 costs
no rate limit), `stats` of requests, 304s and points, writes spaced `write_spacing` apart. A
renamed or transferred repository answers under its old name with a redirect, which is never
followed blindly: on a 3xx for `/repos/OLD/...` the client asks `GET /repos/OLD`; when that
redirects too, it reads the repository object there (same origin), warns once of the new name
and rewrites every request for OLD from then on, the redirected one included. A 200 there (an
issue transferred out) returns the 3xx as it came.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

from jr2_core.errors import SourceHTTPError
from jr2_sources.kit.redact import Redactor
from jr2_sources.kit.rest import RequestStats, RestClient, RestResponse

log = logging.getLogger("jr2.github")
_REDIRECTS = frozenset({301, 302, 307, 308})
_REPO_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/?#]+)")

_BY_UPDATE = {"sort": "updated", "direction": "asc"}
USER_AGENT = "jr2-github-source"
API_VERSION = "2022-11-28"

class GitHubHTTPError(SourceHTTPError):
    """GitHub answered with an error status that retrying cannot fix."""


@dataclass
class Stats(RequestStats):
    """What the client sent, plus GitHub's 304s and rate-limit points (a 304 costs none)."""

    not_modified: int = 0
    points: int = 0


class GitHubClient(RestClient):
    """Counted, conditional, spaced REST calls against one GitHub API base URL."""

    tracker: ClassVar[str] = "GitHub"
    token_hint: ClassVar[str] = "GH_TOKEN / GITHUB_TOKEN"
    status_hints: ClassVar[Mapping[int, str]] = {401: "bad credentials", 403: "forbidden",
                                                 410: "gone", 422: "unprocessable"}
    session_headers: ClassVar[Mapping[str, str]] = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": API_VERSION,
        "User-Agent": USER_AGENT,
    }
    default_write_spacing: ClassVar[float] = 1.0
    etag_cache_size: ClassVar[int] = 4096
    moving_params: ClassVar[frozenset[str]] = frozenset({"since"})
    error_type = GitHubHTTPError
    stats: Stats

    def __init__(self, *args: Any, token_source: Callable[[], str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token_source = token_source  # GitHub App auth: a fresh token per request
        self._issued: set[str] = set()
        self._prefix = urlsplit(self.base_url).path.rstrip("/")  # `/api/v3` on GHES
        self._moved: dict[str, str] = {}  # old `owner/repo` (lower case) -> its new full name
        self._moved_lock = threading.Lock()

    def app_token(self) -> bool:
        """Whether the token is a GitHub App installation token (`ghs_`: App auth, and the
        `GITHUB_TOKEN` of GitHub Actions), which has no user behind it."""
        return self._token_source is not None or (
            self._token.get_secret_value().startswith("ghs_"))

    def auth_headers(self) -> dict[str, str]:
        if self._token_source is None:
            return super().auth_headers()
        token = self._token_source()
        with self._moved_lock:
            if token not in self._issued:  # every token ever sent is scrubbed from messages
                self._issued.add(token)
                self._redact = Redactor([*self._issued, self._token.get_secret_value()])
        return {"Authorization": f"Bearer {token}"}

    def new_stats(self) -> Stats:
        return Stats()

    def repo_name(self, repo: str) -> str:
        """The name `repo` is known by now (its new name once a rename was found)."""
        with self._moved_lock:
            return self._moved.get(repo.lower(), repo)

    def call(self, method: str, url: str, body: Any, need: str, *,
             write: bool | None = None) -> RestResponse:
        url = self._renamed(url)
        resp = super().call(method, url, body, need, write=write)
        if resp.status in _REDIRECTS and self._found_move(url, need):
            return super().call(method, self._renamed(url), body, need, write=write)
        return resp

    def get_all(self, path: str, params: Mapping[str, Any] | None = None, *,
                need: str = "read issues") -> tuple[list[Any], RestResponse]:
        """Every page of a list; a redirect that is not a moved repository is an error, never
        an empty list (which would read as "nothing to do")."""
        items, first = super().get_all(path, params, need=need)
        if first.status in _REDIRECTS:
            raise GitHubHTTPError(f"{self.label}: the token cannot {need} (HTTP {first.status}: "
                                  "redirected elsewhere)", first.status)
        return items, first

    def get_open(self, path: str, params: Mapping[str, Any]) -> tuple[list[Any], RestResponse]:
        """Every open issue of a list (and the first page's answer), none missed while others
        close or change during the walk: sorted by update, oldest first (a change moves an issue
        to the end), the pages read from the last back to the second (an issue that leaves
        moves only later ones, towards pages still to read), then the first again. The items
        read last come first. A list without a `last` link is walked forwards."""
        query = {"per_page": 100, **params, **_BY_UPDATE}
        first = self.get(path, query)
        items, nxt = list(first.data or []), first.next_url
        if first.last_url is None or first.status in _REDIRECTS:
            for _ in range(self.max_pages - 1):
                if nxt is None:
                    break
                page = self.call("GET", nxt, None, "read issues")
                items, nxt = [*items, *(page.data or [])], page.next_url
            return items, first
        split = urlsplit(first.last_url)
        pairs = parse_qsl(split.query)
        last = min(int(dict(pairs).get("page", "1")), self.max_pages)
        urls = [split._replace(query=urlencode([(k, str(n) if k == "page" else v)
                                                for k, v in pairs])).geturl()
                for n in range(last, 1, -1)]
        pages = [self.call("GET", url, None, "read issues").data or [] for url in urls]
        again = self.get(path, query)
        self._walked(self.url(path, query), urls)
        return [*(again.data or []), *(i for page in reversed(pages) for i in page),
                *items], first

    def forget_open(self, path: str, params: Mapping[str, Any]) -> None:
        """Drop the cached later pages of a `get_open` list (`RestClient.forget_walk`)."""
        self.forget_walk(path, {**params, **_BY_UPDATE})

    def _repo_of(self, url: str) -> str | None:
        path = urlsplit(url).path
        if not path.startswith(self._prefix):
            return None
        m = _REPO_PATH.match(path[len(self._prefix):])
        return f"{m['owner']}/{m['repo']}" if m else None

    def _renamed(self, url: str) -> str:
        repo = self._repo_of(url)
        if repo is None:
            return url
        new = self.repo_name(repo)
        if new == repo:
            return url
        head = f"{self.base_url}/repos/{repo}"
        return f"{self.base_url}/repos/{new}{url[len(head):]}" if url.startswith(head) else url

    def _found_move(self, url: str, need: str) -> bool:
        """After a 3xx for a repository's path: did the repository move? (see the notes)"""
        repo = self._repo_of(url)
        if repo is None or self.repo_name(repo) != repo:
            return False
        home_url = f"{self.base_url}/repos/{repo}"
        home = super().call("GET", home_url, None, need, write=False)
        location = home.headers.get("Location") if home.status in _REDIRECTS else None
        if not location:
            return False  # the repository is where it was: the redirect was about one item
        target = super().call("GET", urljoin(home_url, location), None, need, write=False)
        full = target.data.get("full_name") if isinstance(target.data, dict) else None
        if target.status != 200 or not isinstance(full, str) or "/" not in full:
            return False
        with self._moved_lock:
            first = repo.lower() not in self._moved
            self._moved[repo.lower()] = full
        if first:
            log.warning("%s: the repository %s moved to %s (renamed or transferred); using %s "
                        "from now on: update the target to github:%s", self.label, repo, full,
                        full, full)
        return True

    def answered(self, status: int) -> None:
        if status == 304:
            self.stats.not_modified += 1
        else:
            self.stats.points += 1
