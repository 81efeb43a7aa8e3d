"""Who may answer an approval gate on Jira (`jr2 work --gate`, `jr2_sources.gates`).

Design note: an answer (`/jr2 approve NAME` or `/jr2 reject NAME [reason]`, a comment after
jr2's `jr2:gate` marker, read by `jr2_sources.kit.gatecomments`) counts only from someone who
may edit the issue: the *Edit Issues* project permission is Jira's write access (adding a
comment needs only *Add Comments*, often granted far wider). It is checked with "Find users
with permissions", `GET /rest/api/2/user/permission/search?permissions=EDIT_ISSUES&issueKey=KEY`
with the answerer's `accountId` (Cloud) or `username` (Data Center) (fixtures/jira/atlassian:
`/rest/api/3/user/permission/search`, the same operation): the answerer may answer when the
list names them. Atlassian's description requires *Administer Projects* (or *Administer Jira*)
of the caller; an account without it is refused (403), and then no answer can be checked: every
answer is ignored, the report names the answerers and jr2 warns once, so nothing runs on an
unchecked answer. Each (answerer, project) is checked once per `TTL` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from jr2_core.errors import SourceHTTPError
from jr2_sources.gates import Gate
from jr2_sources.kit.claims import Comment
from jr2_sources.kit.gatecomments import gates_of

from .client import JiraClient

log = logging.getLogger("jr2.jira")

TTL = 300.0


class GateReader:
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

    def of(self, key: str, comments: Iterable[Comment]) -> tuple[Gate, ...]:
        """The gates recorded in the comments of the issue `key`."""
        return gates_of(comments, lambda who: self.can_edit(who, key))
