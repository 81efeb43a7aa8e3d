"""Who may answer an approval gate on GitLab (`jr2 work --gate`,
`jr2_sources.capabilities.approvals.policy`).

Design note: an answer (`/jr2 approve NAME` or `/jr2 reject NAME [reason]`, a note after jr2's
`jr2:gate` marker, read by `jr2_sources.capabilities.approvals.comments`) counts only from a member
who
may push: GitLab's "Get a member of a group or project, including inherited and invited members",
`GET /projects/:id/members/all/:user_id` (doc/api/members.md), with `access_level` 30
(Developer) or more; a lower role or a 404 (no member) may not answer. A note names its author
by `username` and `id`; the reader keeps the ids it saw (`ids`). Each answerer is checked once
per `TTL` seconds. jr2's own account (`GET /user`) never answers: a note posted with its token
is no person's answer.

A label answers too, as on GitHub: `jr2:approve:NAME` or `jr2:reject:NAME` on the issue. Who
added it, and when, comes from "List project issue label events", `GET /projects/:id/issues/
:issue_iid/resource_label_events` (doc/api/resource_label_events.md, "who, when, and which label
was added to (or removed from) an issue"; its example answer is fixtures/gitlab/api/
resource_label_events.json): the events with `action` `add`, their `label.name`, `user`
{`id`, `username`} and `created_at`. It is read only while the issue carries such a label (one
more request per reading of a parked issue then), and the adder's role is checked as a note
author's is. jr2 removes no label a person set: the answer label stays on the issue (GitHub
does the same); a later request of the same gate counts only answers given after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime

from jr2_core import SourceHTTPError
from jr2_sources.capabilities.approvals.comments import approvals_of
from jr2_sources.capabilities.approvals.policy import Approval, ApprovalStatus, answer_label
from jr2_sources.kit.claims import Comment

from .client import GitLabClient
from .refs import encode_project, parse_time

Answer = tuple[datetime, ApprovalStatus, str, str | None, str | None]
"""A label answer (as `jr2_sources.kit.approvals_of` takes it): when, approved or rejected, the
gate, who, why."""

TTL = 300.0
DEVELOPER = 30


class ApprovalReader:
    """The gates of one project's issues, with each answerer's role checked."""

    def __init__(self, client: GitLabClient, project: str) -> None:
        self.client = client
        self.project = project
        self.ids: dict[str, int] = {}  # username -> user id, from the notes read
        self._known: dict[str, tuple[bool, float]] = {}
        self.own: Callable[[], frozenset[str]] = frozenset
        """jr2's own accounts, lower case (the tracker's `MarkerTrust.own`: asked once)."""
        self._lock = threading.Lock()

    def can_answer(self, username: str) -> bool | None:
        """True when `username` is a member with Developer access or more (cached); None for
        jr2's own account."""
        if username.lower() in self.own():
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

    def labelled(self, iid: int) -> list[Answer]:
        """The label answers of issue `iid`, from its label events (`add` only)."""
        path = f"/projects/{encode_project(self.project)}/issues/{iid}/resource_label_events"
        found, _ = self.client.get_all(path, need="read issue label events")
        out: list[Answer] = []
        for ev in found:
            if not isinstance(ev, dict) or ev.get("action") != "add":
                continue
            label, user = ev.get("label"), ev.get("user")
            said = answer_label(str(label.get("name") or "")) if isinstance(label, dict) else None
            if said is None or not isinstance(user, dict) or not ev.get("created_at"):
                continue
            who = str(user["username"]) if user.get("username") else None
            if who is not None and isinstance(user.get("id"), int):
                with self._lock:
                    self.ids[who] = user["id"]
            out.append((parse_time(str(ev["created_at"])), said[0], said[1], who, None))
        return out

    def of(self, comments: Iterable[Comment], iid: int | None = None,
           labels: Iterable[str] = ()) -> tuple[Approval, ...]:
        """The gates recorded in one issue's notes (and, while issue `iid` carries an answer
        label, its label events)."""
        others = self.labelled(iid) if iid is not None and any(
            answer_label(x) for x in labels) else []
        return approvals_of(comments, self.can_answer, others)
