"""A thin REST client for the few GitHub endpoints the adapter uses: counted, conditional, spaced.

Design notes
------------
* `jr2_sources.kit.rest.RestClient` (one `requests.Session`), not PyGithub: the adapter needs what
  PyGithub hides — the `ETag` of every list page (to send `If-None-Match`), the response `Date`
  (the server's clock is the claim protocol's clock) and an exact count of requests. PyGithub's
  lazy completion can also send one GET per issue when an attribute the list lacks is read;
  plain dicts cannot. What is GitHub's own is here: the headers, the ETag cache, points.
* Every GET goes through `RestClient`'s ETag cache (4096 URLs): a repeated GET carries
  `If-None-Match`, and a `304 Not Modified` (which GitHub does not count against the rate limit)
  is answered from the cache. `stats` counts requests, 304s and rate-limit points.
* Writes are spaced `write_spacing` apart: GitHub asks for at least one second between
  mutating requests. Errors, redaction and same-origin links are `RestClient`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from jr2_core.errors import SourceHTTPError
from jr2_sources.kit.rest import RequestStats, RestClient

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
    token_hint: ClassVar[str] = "GITHUB_TOKEN / GH_TOKEN"
    status_hints: ClassVar[Mapping[int, str]] = {401: "bad credentials", 403: "forbidden",
                                                 410: "gone", 422: "unprocessable"}
    session_headers: ClassVar[Mapping[str, str]] = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": API_VERSION,
        "User-Agent": USER_AGENT,
    }
    default_write_spacing: ClassVar[float] = 1.0
    etag_cache_size: ClassVar[int] = 4096
    error_type = GitHubHTTPError
    stats: Stats

    def new_stats(self) -> Stats:
        return Stats()

    def answered(self, status: int) -> None:
        if status == 304:
            self.stats.not_modified += 1
        else:
            self.stats.points += 1
