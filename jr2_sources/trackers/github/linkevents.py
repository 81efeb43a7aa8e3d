"""Pull requests linked to an issue from its sidebar ("Development"), seen by merge-aware deltas.

Such a link moves no `updated_at` and sends no webhook, so every `EVERY` seconds under `--done-when
merged` a delta reads the repository's issue events (conditional) from the first page until a
page's oldest event is older than the window (since the last read's server time less `OVERLAP`;
at most `MAX_PAGES`, more is a gap). The issue and the PR of each new `connected` /
`disconnected` event are marked for the next delta; an event id is taken once.
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
