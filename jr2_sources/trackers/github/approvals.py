"""Who may answer an approval gate on GitHub (`jr2 work --gate`): someone with write access.

Each answerer of a comment that looks like an answer is checked with "Get repository permissions
for a user" (`admin` or `write` may; `read`, `none` or a 404 may not), once per login per `TTL`
seconds. A label answers too (`jr2:approve:NAME`, `jr2:reject:NAME`): who added it, and when,
comes from the issue's `labeled` events, read only while it carries such a label.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import quote

from jr2_sources.capabilities.approvals.comments import Answer, approvals_of
from jr2_sources.capabilities.approvals.policy import Approval, answer_label
from jr2_sources.kit.claims import Comment
from jr2_sources.kit.labeltracker import parse_time

from .client import GitHubClient, GitHubHTTPError

TTL = 300.0
WRITE = frozenset({"admin", "write"})


class ApprovalReader:
    """The gates of one repository's issues, with the answerers' write access checked."""

    def __init__(self, client: GitHubClient, repo: str) -> None:
        self.client = client
        self.repo = repo
        self._known: dict[str, tuple[bool, float]] = {}
        self.own: Callable[[], frozenset[str]] = frozenset
        """jr2's own accounts, lower case (the tracker's `MarkerTrust.own`: asked once)."""
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
           labels: Iterable[str] = ()) -> tuple[Approval, ...]:
        """The gates recorded in issue `number`'s comments (and, while it carries an answer
        label, its label events)."""
        others = self.labelled(number) if any(answer_label(x) for x in labels) else []
        return approvals_of(comments, self.can_answer, others)
