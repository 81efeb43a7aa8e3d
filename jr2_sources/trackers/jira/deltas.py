"""Jira deltas: Jira's queries for the kit's `SinceReader`, at most two searches whatever N.

* In scope (`page`): `(<filter>) AND statusCategory != Done AND (updated >= "T" OR key in (<to
  read>))`, T the server's time when the last reading began less `delta_overlap`, in the
  account's time zone (the window is not `paged`: the client follows `nextPageToken`).
* Left the scope (`leave_page`): the same time in the projects read and the outside blockers,
  `AND NOT (<scope>)`; such an issue leaves the set (`Delta.left`).
* Read again whatever their time: issues written here or named by a delivery (the window's
  marks), another pool's claim whose lease ends, parked issues. A deleted issue is confirmed and
  leaves as `missing`; a moved one leaves under its old key.
* Signs of a gap (no `Date`, the clock going back, a refused search, more keys than
  `jql.MAX_KEYS`) make the reading full.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jr2_core.errors import SourceHTTPError
from jr2_sources.capabilities.approvals.policy import awaiting
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow, WindowGap
from jr2_sources.readyset import BlockerState, Snapshot, SnapshotItem

from .client import JiraHTTPError, parse_jira_time
from .jql import MAX_KEYS, changed_jql, jql_time, left_jql
from .webhook import project_of

if TYPE_CHECKING:
    from .tracker import JiraTracker

log = logging.getLogger("jr2.jira")

LEFT_FIELDS = ("status", "updated")
"""The fields read of issues outside the scope: their state as a blocker, and their time."""

LEASE_MARGIN = timedelta(seconds=5)
"""A claim held here as ending within this margin is read again (it may have been renewed)."""


def _zone(name: object) -> tzinfo | None:
    if not isinstance(name, str) or not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _refs(item: SnapshotItem) -> set[str]:
    """The keys an item names as blockers or sub-tasks, but those Jira says are gone or out of
    reach (naming them in a search would make Jira refuse it)."""
    return {r.id for r in (*item.blockers, *item.children)
            if r.state not in ("missing", "inaccessible")}


class JiraChanges(SinceReader[str]):
    """Jira's queries for the kit's `SinceReader`, and what a delta needs between readings."""

    def __init__(self, tracker: JiraTracker, *, overlap: float) -> None:
        super().__init__(SinceWindow(overlap=overlap, paged=False))
        self.tracker = tracker
        self._ids: dict[str, int] = {}  # key -> the issue's id, for every issue read
        self._keys: dict[int, str] = {}  # the other way round (a moved issue keeps its id)
        self._leases: dict[str, datetime] = {}  # key -> end of another pool's live claim
        self._parked: set[str] = set()  # keys awaiting an approval gate: read every delta
        self._refs: dict[str, set[str]] = {}  # key -> the keys it names as blockers/children
        self._named: Counter[str] = Counter()  # key -> how many issues of the set name it
        self._projects: frozenset[str] = frozenset()
        self._zone: tzinfo | None = None
        self._zone_known = False
        # this delta: keys read again, outside blockers, deletions confirmed, ids to reconcile,
        # the keys the scope's search answered, the items built, moved keys and their state
        self._forced: set[str] = set()
        self._blockers: set[str] = set()
        self._gone: set[str] = set()
        self._reconcile: tuple[int, ...] = ()
        self._inside: set[str] = set()
        self._built: dict[str, SnapshotItem] = {}
        self._moves: dict[str, BlockerState] = {}

    # -- what this process learns between readings -----------------------------------------------

    def note(self, key: str) -> None:
        """Read `key` again in the next delta (this process wrote to it)."""
        self.window.mark([key])

    def mark(self, *, keys: Iterable[str] = (), ids: Iterable[int] = (),
             deleted: Iterable[str] = (), deleted_ids: Iterable[int] = ()) -> None:
        """A verified webhook delivery named these issues (keys, or ids for link events), or
        says these were deleted."""
        self.window.mark([*keys, *ids, *(("deleted", d) for d in (*deleted, *deleted_ids))])

    def marks(self) -> list[str]:
        return []  # read in `prepare`: the searches name them

    def full_read(self, snap: Snapshot, found: list[dict[str, Any]], at: datetime | None) -> None:
        """Start from a full reading (`JiraTracker.read_scope`'s answer)."""
        self.start(at, ((str(i["key"]), i) for i in found), snap.items)
        self._leases, self._refs, self._parked, self._named = {}, {}, set(), Counter()
        self._projects = frozenset(project_of(str(i["key"])) for i in found)
        self._zone_known = False  # a person may have changed it: asked again by the next delta
        for issue in found:
            self._remember_id(issue)
        for item in snap.items:
            self._hold(item)

    # -- the queries -----------------------------------------------------------------------------

    def prepare(self) -> None:
        """What to read whatever its time (module notes); a gap when that is too many keys."""
        marks = self.window.take_marks()
        deleted = {m[1] for m in marks if isinstance(m, tuple)}
        deleted = {self._keys.get(d, "") if isinstance(d, int) else d for d in deleted} - {""}
        forced = {m for m in marks if isinstance(m, str)}
        forced |= {self._keys[m] for m in marks if isinstance(m, int) and m in self._keys}
        forced -= deleted
        # Jira drops a deleted issue's links: the issues naming it are read again (a direct read
        # confirms the deletion first: a delivery is not proof, and deletions are rare)
        self._gone = {k for k in sorted(deleted) if (k in self.in_set or k in self._named)
                      and self.tracker.is_missing(k)}
        if self._gone:
            forced |= {k for k, refs in self._refs.items() if refs & self._gone} - self._gone
        now = datetime.now(UTC)
        forced |= {k for k, end in self._leases.items() if end <= now + LEASE_MARGIN}
        forced |= self._parked - deleted
        self._blockers = {k for k in self._named if k not in self.in_set
                          and project_of(k) not in self._projects}
        if len(forced | self._blockers) > MAX_KEYS:
            raise WindowGap(f"{len(forced)} issues to read again")
        for key in forced:
            self.window.forget(key)  # news even when unchanged
        self._forced = forced
        self._reconcile = tuple(sorted(self._ids[k] for k in forced if k in self._ids))[:50]
        self._built, self._moves = {}, {}

    def _search(self, jql: str, fields: tuple[str, ...] | None = None) -> Page:
        try:
            return self.tracker.client.search_at(jql, fields, reconcile=self._reconcile)
        except JiraHTTPError as exc:
            if exc.status != 400:
                raise
            raise WindowGap(f"a delta search was refused ({exc})") from None

    def page(self, since: datetime) -> Page:
        literal = jql_time(since, self._account_zone())
        found, at = self._search(changed_jql(self.tracker.config.jql, literal, self._forced))
        self._inside = {str(i["key"]) for i in found}
        return found, at

    def leave_page(self, since: datetime) -> list[Any]:
        jql = left_jql(self.tracker.config.jql, jql_time(since, self._account_zone()),
                       self._projects, self._forced | self._blockers)
        return self._search(jql, LEFT_FIELDS)[0] if jql else []

    def key_of(self, obj: Any) -> str:
        return str(obj["key"])

    def updated_of(self, obj: Any) -> datetime | None:
        try:
            return parse_jira_time(str((obj.get("fields") or {}).get("updated")))
        except ValueError:
            return None

    # -- building --------------------------------------------------------------------------------

    def after_listing(self, fresh: dict[str, Any]) -> None:
        """Moved issues leave under their old key (out of the scope: in their state now)."""
        for key, issue in fresh.items():
            moved = self._remember_id(issue)
            if moved is not None and (moved in self.in_set or moved in self._named):
                self._moves[moved] = self._left_state(moved, issue) if key in self.leaving \
                    else "open"
                self._drop(moved)
                self.window.mark(k for k, refs in self._refs.items() if moved in refs)

    def leaves(self, key: str, obj: Any, skip: set[str]) -> BlockerState | None:
        if key not in self.leaving:
            item = self.tracker.item_of(obj, own=True)
            if item is not None:
                self._built[key] = item
                return None
        return self._left_state(key, obj)  # out of the scope, a person's, or settled here

    def item_of(self, key: str, obj: Any, delta: Delta) -> SnapshotItem | None:
        item = self._built.pop(key)
        self._projects |= {project_of(key)}
        self._drop(key)
        self._hold(item)
        return item

    def dropped(self, ident: str, *, settled: bool) -> None:
        self._drop(ident)

    def finish(self, delta: Delta) -> None:
        """Moved keys and confirmed deletions leave."""
        built = {it.id for it in delta.items}
        for key, state in self._moves.items():
            if key not in built:
                delta.left.setdefault(key, state)
                self.in_set.discard(key)
        for key in sorted(self._gone - delta.left.keys() - self._inside):
            delta.left[key] = "missing"
            self.in_set.discard(key)
            self._drop(key)

    # -- the mirror ------------------------------------------------------------------------------

    def _account_zone(self) -> tzinfo | None:
        """The time zone Jira reads this account's JQL dates in (looked up again after each
        full reading: a person may change it while a pool runs)."""
        if not self._zone_known:
            ad = self.tracker
            try:
                me = ad.myself(fresh=True)
            except SourceHTTPError as exc:  # the account may not read itself: a wider search
                log.info("%s: cannot read the account's time zone: %s", ad.name, exc)
                me = {}
            zone = _zone(me.get("timeZone")) or _zone(
                ad.client.server_info().get("serverTimeZone"))
            if zone is None:
                log.info("%s: the account's time zone is unknown: delta searches reach 12 "
                         "hours further back", ad.name)
            self._zone, self._zone_known = zone, True
        return self._zone

    def _remember_id(self, issue: Mapping[str, Any]) -> str | None:
        """Remember the issue's id; the key the set knows it by, when it was moved (a key of
        another project, the same id), else None."""
        raw = issue.get("id")
        if raw is None or not str(raw).isdigit():
            return None
        key, iid = str(issue["key"]), int(str(raw))
        old = self._keys.get(iid)
        self._ids[key], self._keys[iid] = iid, key
        return old if old is not None and old != key else None

    def id_of(self, key: str) -> int | None:
        """The id of the issue a reading of this process saw under `key` (None: not seen)."""
        return self._ids.get(key)

    def knows(self, issue_id: int) -> bool:
        """Has a reading of this process seen the issue with this id?"""
        return issue_id in self._keys

    def _left_state(self, key: str, issue: Mapping[str, Any]) -> BlockerState:
        ad = self.tracker
        if ad.done_here(key):
            return "done"
        state = ad.state_of(issue)
        return "open" if state == "missing" else state

    def _hold(self, item: SnapshotItem) -> None:
        key = item.id
        if item.claim is not None and item.claim.lease_expires is not None:
            self._leases[key] = item.claim.lease_expires
        if item.gates and awaiting(item) is not None:
            self._parked.add(key)
        refs = _refs(item)
        self._refs[key] = refs
        self._named.update(refs)

    def _drop(self, key: str) -> None:
        self._leases.pop(key, None)
        self._parked.discard(key)
        refs = self._refs.pop(key, set())
        self._named.subtract(refs)
        for ref in refs:
            if self._named[ref] <= 0:
                del self._named[ref]
