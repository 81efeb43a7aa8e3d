"""Who may answer an approval gate on Jira (`jr2 work --gate`,
`jr2_sources.capabilities.gates.policy`).

Design note: an answer (`/jr2 approve NAME` or `/jr2 reject NAME [reason]`, a comment after
jr2's `jr2:gate` marker, read by `jr2_sources.capabilities.gates.comments`) counts only from someone
who may edit the issue: the *Edit Issues* project permission is Jira's write access (adding a
comment needs only *Add Comments*, often granted far wider). It is checked with "Find users
with permissions", `GET /rest/api/2/user/permission/search?permissions=EDIT_ISSUES&issueKey=KEY`
with the answerer's `accountId` (Cloud) or `username` (Data Center) (fixtures/jira/atlassian:
`/rest/api/3/user/permission/search`, the same operation): the answerer may answer when the
list names them. Atlassian's description requires *Administer Projects* (or *Administer Jira*)
of the caller; an account without it is refused (403), and then no answer can be checked: every
answer is ignored, the report names the answerers and jr2 warns once, so nothing runs on an
unchecked answer. Each (answerer, project) is checked once per `TTL` seconds.

A label answers too, as on GitHub: `jr2:approve:NAME` or `jr2:reject:NAME` on the issue. Who
added it, and when, comes from the issue's change history: "Get issue" with `expand=changelog`
("Returns a list of recent updates to an issue, sorted by date, starting from the most recent";
fixtures/jira/atlassian: `PageOfChangelogs` {histories: [Changelog {author, created, items:
[ChangeDetails {field, fromString, toString}]}]}), `GET /rest/api/2/issue/KEY?fields=labels&
expand=changelog`, the same operation on Cloud and Data Center. A `labels` item lists the labels
before and after, separated by spaces (labels hold no spaces), so the labels it added are those
in `toString` and not in `fromString`; the history's `author` (`accountId` on Cloud, `name` on
Data Center) added them, and is checked for Edit Issues as a comment's author is. It is read
only while the issue carries an answer label and its comments hold a gate request (one more
request per reading of a parked issue then). Cloud returns the most recent 100 histories this
way: an answer label followed by more than 100 other edits of the same issue before a pool reads
it is not seen (answer with a comment then). jr2 removes no label a person set: the answer label
stays on the issue (GitHub does the same); a later request of the same gate counts only later
answers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from jr2_core.errors import SourceHTTPError
from jr2_sources.capabilities.gates.comments import Answer, gates_of
from jr2_sources.capabilities.gates.policy import Gate, answer_label
from jr2_sources.kit.claims import Comment, markers

from .client import JiraClient, parse_jira_time

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
           labels: Iterable[str] = ()) -> tuple[Gate, ...]:
        """The gates recorded in the comments of the issue `key` (and, while it carries an
        answer label, in its change history)."""
        thread = list(comments)
        asked = any(mk.kind == "gate" for mk in markers(thread))  # a claimed issue: no history
        others = self.labelled(key) if asked and any(answer_label(x) for x in labels) else []
        return gates_of(thread, lambda who: self.can_edit(who, key), others)
