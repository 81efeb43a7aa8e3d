"""Pull requests linked to an issue from its sidebar ("Development"), seen by merge-aware deltas.

Design notes
------------
* What GitHub documents of such a link: the issue events `connected` and `disconnected` ("Issue
  event types": "The issue or pull request was linked to another issue or pull request", and
  unlinked, in the REST API for issue events, for issues and for pull requests), and the link
  itself in GraphQL (`closedByPullRequestsReferences`; its counterpart's `userLinkedOnly` says
  manual links are part of it), which `pulls.py` reads. What it does not document: that the
  link moves the `updated_at` of the issue or of the PR (neither REST description says so), or
  any webhook for it (`@octokit/openapi-webhooks` 12.1.0: no `issues` or `pull_request` action
  is a link; a sidebar link is not a closing keyword, so no `edited` body names it). So the
  since-window of `delta.py` cannot be relied on to see it.
* The signal used: "List issue events for a repository" (`GET /repos/{owner}/{repo}/issues/
  events`: `issue-event` objects with `event`, `created_at` and the `issue`, fixtures/github/
  openapi), conditional like every GET. Every `EVERY` seconds, and only under `--done-when
  merged`, a delta reads it from its first page on (GitHub answers newest first; the
  description gives no order, so a page is read until its oldest event is older than the
  window and at most `MAX_PAGES` pages: more is a sign of a gap, a full reading). The issue and
  the PR of each new `connected` / `disconnected` event are marked: the next delta reads them
  directly (a marked issue is judged again; a PR read re-judges the issues it was linked to).
* The window: events created since the server's time (`Date`) of the last read, less an overlap
  (`OVERLAP`: an event committed a little after the time it carries); an event already taken
  (its id) is not taken twice. A full reading starts the window at its own start (the list's
  `Date`), so a link made while it read is seen by the next events read.
* Cost: one request every `EVERY` seconds (a 304 while no issue event happened; any event, a
  label or a close, changes the page: one rate-limit point), none between; without it a sidebar
  link is seen at the resynchronisation (`--resync-every`, default 5m) or by a webhook naming
  the issue.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from jr2_sources.capabilities.deltas.sincewindow import DEFAULT_OVERLAP, WindowGap

from .client import GitHubClient
from .refs import parse_time

EVERY = 60.0
"""Seconds between two readings of the repository's issue events."""
OVERLAP = timedelta(seconds=DEFAULT_OVERLAP)  # the since-window's
MAX_PAGES = 10
LINK_EVENTS = frozenset({"connected", "disconnected"})


class LinkEvents:
    """The window over one repository's issue events (module notes)."""

    def __init__(self, client: GitHubClient, repo: str, clock: Callable[[], float]) -> None:
        self.client = client
        self.path = f"/repos/{repo}/issues/events"
        self.clock = clock
        self.since: datetime | None = None  # no full reading yet: nothing to read
        self.taken: dict[int, datetime] = {}  # ids of events taken, within the overlap
        self._at = 0.0

    def reset(self, began: datetime | None) -> None:
        """A full reading began at `began` (server time): read events from then on."""
        self.since, self.taken, self._at = began, {}, self.clock()

    def due(self) -> bool:
        return self.since is not None and self.clock() - self._at >= EVERY

    def read(self) -> set[int]:
        """The numbers of the issues and PRs of link events since the last read ({} when not
        due). Raises `WindowGap` when more than `MAX_PAGES` pages are new."""
        if not self.due():
            return set()
        assert self.since is not None
        self._at = self.clock()
        floor = self.since - OVERLAP
        found: set[int] = set()
        date: datetime | None = None
        for page in range(1, MAX_PAGES + 1):
            resp = self.client.get(self.path, {"per_page": 100, "page": page},
                                   need="read issue events")
            date = date or resp.date
            events = [e for e in resp.data or [] if isinstance(e, dict)]
            older = False
            for event in events:
                when = _created(event)
                if when is None or when < floor:
                    older = True
                    continue
                eid = int(event.get("id") or 0)
                if eid in self.taken:
                    continue
                self.taken[eid] = when
                number = (event.get("issue") or {}).get("number")
                if event.get("event") in LINK_EVENTS and isinstance(number, int):
                    found.add(number)
            if older or not resp.next_url:
                break
        else:
            raise WindowGap(f"more than {MAX_PAGES} pages of issue events since the last read")
        if date is not None:
            self.since = date
        floor = self.since - OVERLAP
        self.taken = {i: t for i, t in self.taken.items() if t >= floor}
        return found


def _created(event: dict[str, Any]) -> datetime | None:
    stamp = event.get("created_at")
    try:
        return parse_time(str(stamp)) if stamp else None
    except ValueError:
        return None
