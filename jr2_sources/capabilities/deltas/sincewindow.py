"""`SinceWindow`: the bookkeeping of a tracker read by "what changed since" (every tracker).

* After a full reading the watermark is the server's time when it began. A delta lists the
  issues updated since the watermark less a reach, oldest first, page by page by time (never by
  number); the watermark moves to the newest `updated_at` listed. An issue listed again
  unchanged (same digest, or the `fingerprint` a tracker gives) is not news.
* Sweeps: a delta reaches back `RECENT`; every `SWEEP_EVERY` seconds one reaches back `overlap +
  SWEEP_EVERY`, so an update listed up to `overlap` late is still seen.
* `paged=False` (Jira, local): the query answers every change at once (it follows its own page
  tokens), each delta reaches back `overlap`, and the watermark is the server's time when the
  answer began (no `Date`, or a clock behind the watermark, is a gap).
* `mark(keys)`: issues a verified webhook names, read directly by the next delta; a full reading
  clears only the marks made before it began (`begin`).
* Any sign of a gap raises `WindowGap` (a full snapshot is read): the time filter refused, more
  than `max_pages` pages, a page that cannot move on, the server's clock behind the watermark by
  more than the overlap, a marked issue gone, or `want_full`. `gap()` records why.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["DEFAULT_OVERLAP", "RECENT", "SWEEP_EVERY", "Page", "SinceWindow", "WindowGap",
           "iso_z"]

PER_PAGE = 100


class WindowGap(Exception):
    """A sign of a gap (the message says which): answer with a full snapshot."""


Page = tuple[list[Any], "datetime | None"]
"""One page of a "changed since" list: the issue objects and the server's `Date`."""

DEFAULT_OVERLAP = 10.0
"""Seconds an update may take to be listed after the time it carries (module notes)."""

RECENT = 2.0
"""Seconds a delta that is not a sweep reaches back before the newest update it saw."""

SWEEP_EVERY = 5.0
"""Seconds between sweeps, which reach back `overlap + SWEEP_EVERY` (module notes)."""


def iso_z(when: datetime) -> str:
    """`when` as `YYYY-MM-DDTHH:MM:SSZ` (GitHub's `since` format; GitLab takes it too)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def digest(obj: Any) -> bytes:
    """A short fingerprint of a JSON object (key order does not matter)."""
    raw = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.blake2b(raw, digest_size=16).digest()


class SinceWindow:
    """The watermark, the digests of the issues last seen and the marks (see the module
    notes). Thread-safe for `mark`; the rest is called by the one reading thread."""

    def __init__(self, *, overlap: float = DEFAULT_OVERLAP, max_pages: int = 10,
                 clock: Callable[[], float] = time.monotonic, paged: bool = True,
                 fingerprint: Callable[[Any], Any] = digest) -> None:
        self.overlap = overlap
        self.paged = paged
        self.fingerprint = fingerprint  # what is compared to tell news (default: a digest)
        self.max_pages = max_pages
        self.clock = clock
        self._swept: tuple[float, datetime | None] | None = None  # last sweep: clock(), Date
        self._server_now: datetime | None = None  # the newest `Date` a page carried
        self.watermark: datetime | None = None
        self.last_gap: str | None = None
        self._seen: dict[Hashable, Any] = {}
        self._marks: dict[Hashable, int] = {}  # key -> the delivery count when marked
        self._full: tuple[str, int] | None = None  # a webhook asked for a full reading: why
        self._deliveries = 0  # marks and full-reading requests so far (under `_lock`)
        self._began_at: int | None = None  # `_deliveries` when the running full reading began
        self.taken: set[Hashable] = set()  # the marks the running delta took
        self.took = False  # whether the running delta took an object in
        self._lock = threading.Lock()

    # -- after a full reading -----------------------------------------------------------------

    def begin(self) -> None:
        """A full reading starts: marks made from now on may name changes it does not see
        (an issue listed before the delivery), so `reset` keeps them."""
        with self._lock:
            self._began_at = self._deliveries

    def reset(self, began: datetime | None, issues: Iterable[tuple[Hashable, Any]]) -> None:
        """A full reading that began at server time `began` listed `issues` (key, object).
        It saw everything marked before it began (`begin`; all marks when it was not
        called); later marks and requests for a full reading stay for the next delta."""
        self._seen = {key: self.fingerprint(obj) for key, obj in issues}
        self.watermark = began
        self._swept = (self.clock(), began)  # a full reading counts as a sweep
        with self._lock:
            seen_up_to = self._deliveries if self._began_at is None else self._began_at
            self._began_at = None
            self._marks = {k: n for k, n in self._marks.items() if n > seen_up_to}
            if self._full is not None and self._full[1] <= seen_up_to:
                self._full = None

    @property
    def ready(self) -> bool:
        """Whether a delta can be read (a full reading set the watermark)."""
        return self.watermark is not None

    # -- reading a delta ----------------------------------------------------------------------

    def since(self, after: datetime | None = None, *, sweep: bool = True) -> datetime:
        """Where the next page starts: `after` (the last time of a full page), or the
        watermark less the reach of a sweep (`overlap + SWEEP_EVERY`) or of any other delta
        (`RECENT`)."""
        assert self.watermark is not None
        if after is not None:
            return after
        if not self.paged:
            return self.watermark - timedelta(seconds=self.overlap)
        return self.watermark - timedelta(seconds=self.overlap + SWEEP_EVERY if sweep
                                          else RECENT)

    def sweep_due(self) -> bool:
        """Whether the next delta is a sweep (module notes)."""
        if self._swept is None:
            return True
        at, date = self._swept
        if self.clock() - at >= SWEEP_EVERY:
            return True
        return (date is not None and self._server_now is not None
                and (self._server_now - date).total_seconds() >= SWEEP_EVERY)

    def collect(self, fetch: Callable[[datetime], Page], key_of: Callable[[Any], Hashable],
                updated_of: Callable[[Any], datetime | None]) -> dict[Hashable, Any]:
        """Walk the pages of issues updated since the watermark (less the overlap), by time
        (module notes): `fetch(since)` asks one page of up to `PER_PAGE`, oldest update
        first. Returns the issues that are news, by key; raises `WindowGap`."""
        with self._lock:
            wanted, self._full = self._full, None
        if wanted is not None:
            raise WindowGap(wanted[0])
        fresh: dict[Hashable, Any] = {}
        after: datetime | None = None
        sweep, started = self.sweep_due(), self.clock()
        first_date: datetime | None = None
        for page_no in range(self.max_pages):
            page, server_now = fetch(self.since(after, sweep=sweep))
            if page_no == 0:
                if self.skewed(server_now):
                    raise WindowGap("the tracker's clock is behind the last update seen by "
                                    "more than the overlap")
                first_date = server_now
            if server_now is not None and (self._server_now is None
                                           or server_now > self._server_now):
                self._server_now = server_now
            for obj in page:
                self.take(fresh, key_of(obj), obj, updated_of(obj))
            if not self.paged:
                self.watermark = server_now
                return fresh
            if len(page) < PER_PAGE:
                if sweep:
                    self._swept = (started, first_date)
                return fresh
            first, last = updated_of(page[0]), updated_of(page[-1])
            if last is None or first == last:
                raise WindowGap("a full page of issues updated in the same second")
            after = last
        raise WindowGap(f"more than {self.max_pages} pages of changes")

    def take(self, fresh: dict[Any, Any], key: Hashable, obj: Any,
             updated: datetime | None, *, listed: bool = True) -> None:
        """One issue object read: into `fresh` when it is news. Only a listed one
        (`listed`, as `collect` reads them) moves the watermark: one read directly (a mark, a
        dependent, a parent) may be newer than what the list covered (a slow delta: a
        `Retry-After` wait), and moving past the list would skip what changed meanwhile."""
        self.took = True
        if listed:
            self.advance(updated)
        if self.news(key, obj):
            fresh[key] = obj

    def news(self, key: Hashable, obj: Any) -> bool:
        """True when `obj` differs from what was last seen of `key` (and remember it)."""
        d = self.fingerprint(obj)
        if self._seen.get(key) == d:
            return False
        self._seen[key] = d
        return True

    def forget(self, key: Hashable) -> None:
        """`key` is gone (deleted, transferred): a later sight of it is news."""
        self._seen.pop(key, None)

    def advance(self, updated: datetime | None) -> None:
        """An issue updated at `updated` was read: the watermark moves up to it."""
        if updated is not None and self.watermark is not None and updated > self.watermark:
            self.watermark = updated

    def skewed(self, server_now: datetime | None) -> bool:
        """Is the server's clock behind the watermark by more than the overlap (at all when not
        `paged`, where no `Date` counts as behind)?"""
        if self.watermark is None:
            return False
        if not self.paged:
            return server_now is None or server_now < self.watermark
        return server_now is not None and server_now < self.watermark - timedelta(
            seconds=self.overlap)

    def gap(self, why: str) -> None:
        """Record a sign of a gap: the caller answers with a full snapshot."""
        self.last_gap = why

    # -- webhooks -----------------------------------------------------------------------------

    def mark(self, keys: Iterable[Hashable]) -> None:
        """Issues a verified webhook delivery concerns: read them directly in the next delta."""
        with self._lock:
            self._deliveries += 1
            self._marks.update(dict.fromkeys(keys, self._deliveries))

    def want_full(self, why: str) -> None:
        """A verified delivery says the scope itself may have changed, which no update time
        shows (a label or milestone the user's filter names, renamed or deleted): the next
        delta is a gap, answered with a full reading (`why` says which delivery)."""
        with self._lock:
            self._deliveries += 1
            self._full = (why, self._deliveries)

    def take_marks(self) -> set[Hashable]:
        """The marked issues (cleared)."""
        with self._lock:
            marks, self._marks = self._marks, {}
        self.taken |= set(marks)
        return set(marks)

    def unmark(self, keys: Iterable[Hashable]) -> None:
        """Put marks back (a delta that could not be read)."""
        self.mark(keys)
