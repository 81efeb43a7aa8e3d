"""Who may answer an approval gate on GitHub (`jr2 work --gate`, `jr2_sources.gates`).

Design note: an answer counts only from someone with write access to the repository. GitHub's
`author_association` on a comment does not say that (`COLLABORATOR` includes read-only
collaborators, `MEMBER` any member of the owning organisation), so each answerer is checked
with "Get repository permissions for a user", `GET /repos/{owner}/{repo}/collaborators/
{username}/permission` (fixtures/github/openapi): `permission` `admin` or `write` (`maintain`
is reported as `write`) may answer; `read`, `none` or a 404 (no collaborator) may not. Only
comments that look like an answer (`/jr2 approve|reject NAME`, after the request) are checked,
once per login per `TTL` seconds, so a gated item costs one request per answerer, not per poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from urllib.parse import quote

from jr2_sources.gates import Gate
from jr2_sources.kit.claims import Comment
from jr2_sources.kit.gatecomments import gates_of

from .client import GitHubClient, GitHubHTTPError

TTL = 300.0
WRITE = frozenset({"admin", "write"})


class GateReader:
    """The gates of one repository's issues, with the answerers' write access checked."""

    def __init__(self, client: GitHubClient, repo: str) -> None:
        self.client = client
        self.repo = repo
        self._known: dict[str, tuple[bool, float]] = {}
        self._lock = threading.Lock()

    def can_answer(self, login: str) -> bool:
        """True when `login` has write access to the repository (cached for `TTL`)."""
        key = login.lower()
        with self._lock:
            known = self._known.get(key)
        if known is not None and time.monotonic() - known[1] < TTL:
            return known[0]
        path = f"/repos/{self.repo}/collaborators/{quote(login, '')}/permission"
        try:
            data = self.client.get(path, need="read collaborators' permissions").data
            ok = isinstance(data, dict) and data.get("permission") in WRITE
        except GitHubHTTPError as exc:
            if exc.status != 404:  # 404: not a collaborator; anything else: cannot tell now
                raise
            ok = False
        with self._lock:
            self._known[key] = (ok, time.monotonic())
        return ok

    def of(self, comments: Iterable[Comment]) -> tuple[Gate, ...]:
        """The gates recorded in one issue's comments."""
        return gates_of(comments, self.can_answer)
