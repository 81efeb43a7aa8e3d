"""Jira webhook deliveries: which ones can change the Ready-set, and which are jr2's own echo.

* Comment deliveries (`comment_*`, or `jira:issue_updated` of a comment event) and updates with
  an empty changelog do not wake.
* Own writes: before editing labels, the assignee or the status jr2 records the echo it expects
  (`Echoes.expect`); an update whose changelog items are all such echoes does not wake. Echoes
  match once and are forgotten after `ttl`.
* A delivery about a project the last snapshot did not name does not wake; link events (ids,
  not keys) always do.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

WAKE_EVENTS = frozenset({"jira:issue_created", "jira:issue_updated", "jira:issue_deleted",
                         "issuelink_created", "issuelink_deleted"})
# fields whose change travels with a transition (the resolution is set by the workflow)
_WITH_STATUS = frozenset({"resolution", "resolutiondate"})


class Echoes:
    """The changes this process made and expects to see again as webhook deliveries."""

    def __init__(self, ttl: float = 300.0, size: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._want: OrderedDict[tuple[str, str, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def expect(self, key: str, field: str, value: str) -> None:
        """Record that this process is about to change `field` of issue `key` to/by `value`."""
        with self._lock:
            self._want.setdefault((key, field.lower(), value.lower()), []).append(self.clock())
            while len(self._want) > self.size:
                self._want.popitem(last=False)

    def _take(self, key: str, field: str, value: str) -> bool:
        entry = (key, field.lower(), value.lower())
        times = self._want.get(entry)
        now = self.clock()
        while times and now - times[0] > self.ttl:
            times.pop(0)
        if not times:
            self._want.pop(entry, None)
            return False
        times.pop(0)
        return True

    def consume(self, key: str, items: list[Mapping[str, Any]]) -> bool:
        """True when every changelog item of a delivery about `key` is an expected echo (each
        is then forgotten); False (nothing forgotten) when any item is someone else's change."""
        with self._lock:
            wanted = [_changes(it) for it in items]
            status = any(f == "status" for ch in wanted for f, _ in ch)
            needed = [(f, v) for ch in wanted for f, v in ch
                      if not (status and f in _WITH_STATUS)]
            if not needed:
                return False
            have = {e: list(t) for e, t in self._want.items() if e[0] == key}
            for f, v in needed:
                if not self._take(key, f, v):
                    for e, t in have.items():  # put back what was taken
                        self._want[e] = t
                    return False
            return True


def _changes(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A changelog item as (field, value) echoes: labels as `+label` / `-label`, a status or
    an assignee as its new value (`*` for an assignee: jr2 assigns only itself)."""
    field = str(item.get("field") or "").lower()
    if field == "labels":
        before = set(str(item.get("fromString") or "").split())
        after = set(str(item.get("toString") or "").split())
        return [("labels", f"+{x}") for x in sorted(after - before)] + \
            [("labels", f"-{x}") for x in sorted(before - after)]
    if field == "assignee":
        return [("assignee", "*")]
    return [(field, str(item.get("toString") or ""))]


def project_of(key: str) -> str:
    """The project key of an issue key (`ENG-12` -> `ENG`)."""
    return key.rsplit("-", 1)[0]


def marked_by(data: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The issues a delivery names, for the next delta to read again (`JiraChanges.mark`):
    `keys` (an issue event's issue), `ids` (its id, or both issues of a link event: Jira names
    them by id, `sourceIssueId` / `destinationIssueId`), and for `jira:issue_deleted` the
    issue's key and id as `deleted` / `deleted_ids` (a moved issue keeps its id)."""
    event = str(data.get("webhookEvent") or "")
    issue = data.get("issue")
    key = str(issue.get("key") or "") if isinstance(issue, Mapping) else ""
    ids: list[int] = []
    if isinstance(issue, Mapping) and str(issue.get("id") or "").isdigit():
        ids.append(int(str(issue["id"])))
    link = data.get("issueLink")
    if isinstance(link, Mapping):
        ids += [int(str(link[f])) for f in ("sourceIssueId", "destinationIssueId")
                if str(link.get(f) or "").isdigit()]
    if event == "jira:issue_deleted":
        return {"keys": [], "ids": [], "deleted": [key] if key else [], "deleted_ids": ids}
    return {"keys": [key] if key else [], "ids": ids, "deleted": [], "deleted_ids": []}


def wakes(data: Mapping[str, Any], *, projects: frozenset[str],
          echoes: Echoes) -> tuple[bool, str]:
    """Whether a delivery can change the Ready-set, and why (for the log)."""
    event = str(data.get("webhookEvent") or "")
    if event not in WAKE_EVENTS:
        return False, f"ignored event {event or '(none)'}"
    issue = data.get("issue")
    key = str(issue.get("key") or "") if isinstance(issue, Mapping) else ""
    if key and projects and project_of(key) not in projects:
        return False, f"{key} is outside the projects in scope"
    if event != "jira:issue_updated":
        return True, event
    changelog = data.get("changelog")
    items = [it for it in (changelog.get("items") or []) if isinstance(it, Mapping)] \
        if isinstance(changelog, Mapping) else []
    if not items:
        kind = str(data.get("issue_event_type_name") or "")
        return False, f"{kind or 'an update'} without a change that matters"
    if key and echoes.consume(key, items):
        return False, f"{key}: this process's own change"
    return True, event
