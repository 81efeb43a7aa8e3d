"""Who may answer an approval gate on GitLab (`jr2 work --gate`, `jr2_sources.gates`).

Design note: an answer (`/jr2 approve NAME` or `/jr2 reject NAME [reason]`, a note after jr2's
`jr2:gate` marker, read by `jr2_sources.kit.gatecomments`) counts only from a member who may
push: GitLab's "Get a member of a group or project, including inherited and invited members",
`GET /projects/:id/members/all/:user_id` (doc/api/members.md), with `access_level` 30
(Developer) or more; a lower role or a 404 (no member) may not answer. A note names its author
by `username` and `id`; the reader keeps the ids it saw (`ids`). Each answerer is checked once
per `TTL` seconds. jr2's own account (`GET /user`) never answers: a note posted with its token
is no person's answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from jr2_core import SourceHTTPError
from jr2_sources.gates import Gate
from jr2_sources.kit import gates_of
from jr2_sources.kit.claims import Comment

from .client import GitLabClient
from .refs import encode_project

TTL = 300.0
DEVELOPER = 30


class GateReader:
    """The gates of one project's issues, with each answerer's role checked."""

    def __init__(self, client: GitLabClient, project: str) -> None:
        self.client = client
        self.project = project
        self.ids: dict[str, int] = {}  # username -> user id, from the notes read
        self._known: dict[str, tuple[bool, float]] = {}
        self._me: list[str | None] = []  # the token's own username, once asked
        self._lock = threading.Lock()

    def _own(self) -> str | None:
        if not self._me:
            try:
                data = self.client.get("/user", need="read its own user").data
                name = data.get("username") if isinstance(data, dict) else None
            except SourceHTTPError:
                name = None
            self._me.append(str(name) if name else None)
        return self._me[0]

    def can_answer(self, username: str) -> bool | None:
        """True when `username` is a member with Developer access or more (cached); None for
        jr2's own account."""
        if username == self._own():
            return None
        with self._lock:
            known = self._known.get(username)
            uid = self.ids.get(username)
        if known is not None and time.monotonic() - known[1] < TTL:
            return known[0]
        if uid is None:
            return False
        path = f"/projects/{encode_project(self.project)}/members/all/{uid}"
        try:
            data = self.client.get(path, need="read project members").data
            level = data.get("access_level") if isinstance(data, dict) else None
            ok = isinstance(level, int) and level >= DEVELOPER
        except SourceHTTPError as exc:
            if exc.status != 404:
                raise
            ok = False
        with self._lock:
            self._known[username] = (ok, time.monotonic())
        return ok

    def of(self, comments: Iterable[Comment]) -> tuple[Gate, ...]:
        """The gates recorded in one issue's notes."""
        return gates_of(comments, self.can_answer)
