"""Who may answer an approval gate on Jira: someone with *Edit Issues* on the issue.

Checked with `GET /rest/api/2/user/permission/search?permissions=EDIT_ISSUES&issueKey=KEY`, once
per (answerer, project) per `TTL`; that needs *Administer Projects* of jr2's account, and refused
(403) every answer is ignored, with one warning. A label answers too (`jr2:approve:NAME`,
`jr2:reject:NAME`): its author comes from the changelog (Cloud: the latest 100 histories), read
only while the issue carries an answer label and a gate request. jr2 removes no answer label.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from jr2_core.errors import SourceHTTPError
from jr2_sources.capabilities.approvals.comments import Answer, approvals_of
from jr2_sources.capabilities.approvals.policy import Approval, answer_label
from jr2_sources.kit.claims import Comment, markers

from .client import JiraClient, parse_jira_time

log = logging.getLogger("jr2.jira")

TTL = 300.0


class ApprovalReader:
    """The gates of one Jira site's issues, with each answerer's Edit Issues checked."""

    def __init__(self, client: JiraClient, is_me: Callable[[str], bool] = lambda _: False
                 ) -> None:
        self.client = client
        self.is_me = is_me  # jr2's own account never answers
        self._known: dict[tuple[str, str], tuple[bool, float]] = {}
        self._warned = False
        self._lock = threading.Lock()

    def can_edit(self, who: str, key: str) -> bool | None:
        """True when the account `who` may edit the issue `key` (cached per project); None for
        jr2's own account (no person's answer)."""
        if self.is_me(who):
            return None
        cache = (who, key.rsplit("-", 1)[0])
        with self._lock:
            known = self._known.get(cache)
        if known is not None and time.monotonic() - known[1] < TTL:
            return known[0]
        param = "accountId" if self.client.is_cloud else "username"
        try:
            data = self.client.get("/user/permission/search",
                                   {param: who, "permissions": "EDIT_ISSUES", "issueKey": key,
                                    "maxResults": 50},
                                   need="check who may answer a gate (Administer Projects)").data
        except SourceHTTPError as exc:
            if exc.status not in (401, 403, 404):
                raise
            if not self._warned:
                self._warned = True
                log.warning("jira: cannot check who may answer an approval gate (HTTP %s: the "
                            "account needs Administer Projects); answers are ignored",
                            exc.status)
            return False
        users = data if isinstance(data, list) else []
        ok = any(isinstance(u, dict) and who in (u.get("accountId"), u.get("name"), u.get("key"))
                 for u in users)
        with self._lock:
            self._known[cache] = (ok, time.monotonic())
        return ok

    def labelled(self, key: str) -> list[Answer]:
        """The label answers of the issue `key`, from its change history."""
        data = self.client.get(f"/issue/{key}", {"fields": "labels", "expand": "changelog"},
                               need="read the issue's change history").data
        log = data.get("changelog") if isinstance(data, dict) else None
        out: list[Answer] = []
        for h in (log.get("histories") or []) if isinstance(log, dict) else []:
            author = h.get("author") if isinstance(h, dict) else None
            if not isinstance(author, dict) or not h.get("created"):
                continue
            who = author.get("accountId") or author.get("name")
            for item in h.get("items") or []:
                if not isinstance(item, dict) or item.get("field") != "labels":
                    continue
                before = set(str(item.get("fromString") or "").split())
                for label in str(item.get("toString") or "").split():
                    said = answer_label(label) if label not in before else None
                    if said is not None:
                        out.append((parse_jira_time(str(h["created"])), said[0], said[1],
                                    str(who) if who else None, None))
        return out

    def of(self, key: str, comments: Iterable[Comment],
           labels: Iterable[str] = ()) -> tuple[Approval, ...]:
        """The gates recorded in the comments of the issue `key` (and, while it carries an
        answer label, in its change history)."""
        thread = list(comments)
        asked = any(mk.kind == "gate" for mk in markers(thread))  # a claimed issue: no history
        others = self.labelled(key) if asked and any(answer_label(x) for x in labels) else []
        return approvals_of(thread, lambda who: self.can_edit(who, key), others)
