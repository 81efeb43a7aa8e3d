"""Who may answer an approval gate on GitHub (`jr2 work --gate`,
`jr2_sources.capabilities.gates.policy`).

Design note: an answer counts only from someone with write access to the repository. GitHub's
`author_association` on a comment does not say that (`COLLABORATOR` includes read-only
collaborators, `MEMBER` any member of the owning organisation), so each answerer is checked
with "Get repository permissions for a user", `GET /repos/{owner}/{repo}/collaborators/
{username}/permission` (fixtures/github/openapi): `permission` `admin` or `write` (`maintain`
is reported as `write`) may answer; `read`, `none` or a 404 (no collaborator) may not. Only
comments that look like an answer (`/jr2 approve|reject NAME`, after the request) are checked,
once per login per `TTL` seconds, so a gated item costs one request per answerer, not per poll.

A label answers too: `jr2:approve:NAME` or `jr2:reject:NAME` on the issue. Who added it, and
when, comes from "List issue events", `GET /repos/{owner}/{repo}/issues/{issue_number}/events`
(its `labeled` events: `actor`, `label.name`, `created_at`), read only while the
issue carries such a label; the actor is checked for write access the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import quote

from jr2_sources.capabilities.gates.comments import Answer, gates_of
from jr2_sources.capabilities.gates.policy import Gate, answer_label
from jr2_sources.kit.claims import Comment
from jr2_sources.kit.labeltracker import parse_time

from .client import GitHubClient, GitHubHTTPError

TTL = 300.0
WRITE = frozenset({"admin", "write"})


class GateReader:
    """The gates of one repository's issues, with the answerers' write access checked."""

    def __init__(self, client: GitHubClient, repo: str) -> None:
        self.client = client
        self.repo = repo
        self._known: dict[str, tuple[bool, float]] = {}
        self.own: Callable[[], frozenset[str]] = frozenset
        """jr2's own accounts, lower case (the adapter's `MarkerTrust.own`: asked once)."""
        self._lock = threading.Lock()

    def can_answer(self, login: str) -> bool | None:
        """True when `login` has write access to the repository (cached for `TTL`); None for
        jr2's own account (a `/jr2` comment posted with jr2's token is no person's answer)."""
        key = login.lower()
        if key in self.own():
            return None
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

    def labelled(self, number: int) -> list[Answer]:
        """The label answers of issue `number`, from its `labeled` events."""
        found, _ = self.client.get_all(f"/repos/{self.repo}/issues/{number}/events",
                                       need="read issue events")
        out: list[Answer] = []
        for ev in found:
            label = ev.get("label") if isinstance(ev, dict) else None
            if ev.get("event") != "labeled" or not isinstance(label, dict):
                continue
            said = answer_label(str(label.get("name") or ""))
            actor = ev.get("actor")
            if said is None or not isinstance(actor, dict) or not ev.get("created_at"):
                continue
            out.append((parse_time(str(ev["created_at"])), said[0], said[1],
                        str(actor.get("login")) if actor.get("login") else None, None))
        return out

    def of(self, comments: Iterable[Comment], number: int,
           labels: Iterable[str] = ()) -> tuple[Gate, ...]:
        """The gates recorded in issue `number`'s comments (and, while it carries an answer
        label, its label events)."""
        others = self.labelled(number) if any(answer_label(x) for x in labels) else []
        return gates_of(comments, self.can_answer, others)
