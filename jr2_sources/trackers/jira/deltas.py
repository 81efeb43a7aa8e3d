"""Jira deltas: one full reading, then at most two searches whatever N (`JiraTracker.changes`).

* In scope: `(<filter>) AND statusCategory != Done AND (updated >= "T" OR key in (<to read>))`, T
  the server's time when the last reading began less `delta_overlap`, in the account's time zone.
* Left the scope: the same time in the projects read and the outside blockers, `AND NOT
  (<scope>)`, judged locally (`Delta.left`).
* Read again whatever their time: issues written here or named by a delivery, another pool's
  claim whose lease ends, parked issues. A deleted issue is confirmed and leaves as `missing`; a
  moved one leaves under its old key.
* Signs of a gap (no earlier reading, no `Date`, the clock going back, a refused search, more
  keys than `jql.MAX_KEYS`, a delta that failed half-way) make the reading full.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jr2_core.errors import SourceHTTPError
from jr2_sources.capabilities.approvals.policy import awaiting
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.readyset import BlockerState, Snapshot, SnapshotItem

from .client import JiraHTTPError, parse_jira_time
from .jql import MAX_KEYS, changed_jql, jql_time, left_jql
from .webhook import project_of

if TYPE_CHECKING:
    from .adapter import JiraTracker

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


class JiraDeltas:
    """The mirror of the last reading of one adapter, and the searches for what changed."""

    def __init__(self, adapter: JiraTracker, *, overlap: float) -> None:
        self.adapter = adapter
        self.overlap = timedelta(seconds=overlap)
        self._since: datetime | None = None  # server time the last reading began
        self._stamps: dict[str, str] = {}  # key -> `updated` of each issue of the set
        self._ids: dict[str, int] = {}  # key -> the issue's id, for every issue read
        self._keys: dict[int, str] = {}  # the other way round (a moved issue keeps its id)
        self._leases: dict[str, datetime] = {}  # key -> end of a live claim (this machine)
        self._parked: set[str] = set()  # keys awaiting an approval gate: read every delta
        self._refs: dict[str, set[str]] = {}  # key -> the keys it names as blockers/children
        self._named: Counter[str] = Counter()  # key -> how many issues of the set name it
        self._seen_outside: dict[str, str] = {}  # key -> `updated` of a named issue outside
        self._projects: frozenset[str] = frozenset()
        self._forced: set[str] = set()  # keys to read again whatever their time
        self._forced_ids: set[int] = set()  # issue ids a delivery named (mapped when known)
        self._deleted: set[str] = set()  # keys a delivery says were deleted
        self._deleted_ids: set[int] = set()  # and their ids (mapped to the keys known here)
        self._zone: tzinfo | None = None
        self._zone_known = False
        self._judging = False  # a delta's answers are being judged (the mirror changes)
        self._lock = threading.Lock()

    # -- what this process learns between readings -----------------------------------------------

    def note(self, key: str) -> None:
        """Read `key` again in the next delta (this process wrote to it)."""
        with self._lock:
            self._forced.add(key)

    def mark(self, *, keys: Iterable[str] = (), ids: Iterable[int] = (),
             deleted: Iterable[str] = (), deleted_ids: Iterable[int] = ()) -> None:
        """A verified webhook delivery named these issues (keys, or ids for link events), or
        says these were deleted."""
        with self._lock:
            self._forced.update(keys)
            self._forced_ids.update(ids)
            self._deleted.update(deleted)
            self._deleted_ids.update(deleted_ids)

    # -- reading ---------------------------------------------------------------------------------

    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """What changed since the last call (module notes): a `Delta`, or a full `Snapshot`."""
        with self._lock:
            forced, self._forced = self._forced, set()
            ids, self._forced_ids = self._forced_ids, set()
            deleted, self._deleted = self._deleted, set()
            deleted_ids, self._deleted_ids = self._deleted_ids, set()
        deleted = deleted | {self._keys[i] for i in deleted_ids if i in self._keys}
        try:
            if full or self._since is None:
                return self._full()
            got = self._delta(forced, ids, deleted)
            return got if got is not None else self._full()
        except BaseException:
            with self._lock:  # nothing learnt is lost when a reading fails
                self._forced |= forced
                self._forced_ids |= ids
                self._deleted |= deleted
                if self._judging:  # the mirror is half updated: the next reading is full
                    self._since, self._judging = None, False
            raise

    def _full(self) -> Snapshot:
        snap, found, at = self.adapter.read_scope()
        stamps = {str(i["key"]): self._stamp(i) for i in found}
        self._stamps, self._leases, self._refs = {}, {}, {}
        self._parked = set()
        self._named, self._seen_outside = Counter(), {}
        self._projects = frozenset(project_of(k) for k in stamps)
        self._zone_known = False  # a person may have changed it: asked again by the next delta
        for issue in found:
            self._remember_id(issue)
        for item in snap.items:
            self._hold(item, stamps.get(item.id, ""))
        self._since = at
        return snap

    def _delta(self, forced: set[str], ids: set[int], deleted: set[str]) -> Delta | None:
        ad = self.adapter
        since = self._since
        assert since is not None
        by_id = self._keys
        forced |= {by_id[i] for i in ids if i in by_id}
        forced -= deleted
        # Jira drops a deleted issue's links: the issues naming it are read again (a direct read
        # confirms the deletion first: a delivery is not proof, and deletions are rare)
        gone_keys = {k for k in sorted(deleted)
                     if (k in self._stamps or k in self._named) and ad.is_missing(k)}
        if gone_keys:
            forced |= {k for k, refs in self._refs.items() if refs & gone_keys} - gone_keys
        now = datetime.now(UTC)
        forced |= {k for k, end in self._leases.items() if end <= now + LEASE_MARGIN}
        forced |= self._parked - deleted
        outside = {k for k in self._named if k not in self._stamps
                   and project_of(k) not in self._projects}
        if len(forced) > MAX_KEYS or len(forced | outside) > MAX_KEYS:
            log.info("%s: %d issues to read again: reading in full", ad.name, len(forced))
            return None
        literal = jql_time(since - self.overlap, self._account_zone())
        reconcile = tuple(sorted({self._ids[k] for k in forced if k in self._ids} |
                                 {i for i in ids if i in by_id}))[:50]
        try:
            inside, at = ad.client.search_at(changed_jql(ad.config.jql, literal, forced),
                                              reconcile=reconcile)
            jql = left_jql(ad.config.jql, literal, self._projects, forced | outside)
            gone = ad.client.search_at(jql, LEFT_FIELDS, reconcile=reconcile)[0] if jql else []
        except JiraHTTPError as exc:
            if exc.status != 400:
                raise
            log.info("%s: a delta search was refused (%s): reading in full", ad.name, exc)
            return None
        if at is None or at < since:
            return None
        self._judging = True  # from here the mirror changes as the answers are judged
        delta = Delta()
        newer = {str(i["key"]): self._stamp(i) for i in inside}
        for issue in gone:
            moved = self._remember_id(issue)
            if moved is not None and (moved in self._stamps or moved in self._named):
                # moved out (or a blocker moved), under a new key
                delta.left[moved] = self._left_state(moved, issue)
                self._moved(moved)
            key = str(issue["key"])
            if key in newer and newer[key] >= self._stamp(issue):
                continue  # both searches saw it: the newer answer wins (a tie: in scope)
            if key in self._stamps or (key in self._named and (
                    key in forced or self._seen_outside.get(key) != self._stamp(issue))):
                delta.left[key] = self._left_state(key, issue)
                self._drop(key)
                self._seen_outside[key] = self._stamp(issue)
        for issue in inside:
            moved = self._remember_id(issue)
            if moved is not None and (moved in self._stamps or moved in self._named):
                # moved within the scope: it is read under its new key below
                delta.left[moved] = "open"
                self._moved(moved)
            key = str(issue["key"])
            stamp = self._stamp(issue)
            if key in delta.left or (self._stamps.get(key) == stamp and key not in forced):
                continue  # left per the newer answer, or unchanged since it was read
            item = ad.item_of(issue, own=True)
            if item is None:  # a person's now, or settled here: out of the set
                if key in self._stamps:
                    delta.left[key] = self._left_state(key, issue)
                    self._drop(key)
                elif key in self._named and (
                        key in forced or self._seen_outside.get(key) != stamp):
                    # a blocker outside the set (done, say) reopened and taken by a person:
                    # in the filter, not in the set, and its dependents read its state now
                    delta.left[key] = self._left_state(key, issue)
                    self._seen_outside[key] = stamp
                continue
            self._projects |= {project_of(key)}
            self._drop(key)
            self._hold(item, stamp)
            delta.items.append(item)
        for key in sorted(gone_keys - delta.left.keys() - newer.keys()):
            delta.left[key] = "missing"
            self._drop(key)
        self._since, self._judging = at, False
        return delta

    # -- the mirror ------------------------------------------------------------------------------

    def _account_zone(self) -> tzinfo | None:
        """The time zone Jira reads this account's JQL dates in (looked up again after each
        full reading: a person may change it while a pool runs)."""
        if not self._zone_known:
            ad = self.adapter
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

    @staticmethod
    def _stamp(issue: Mapping[str, Any]) -> str:
        """The issue's `updated` as an ISO text that sorts in time order (UTC)."""
        raw = (issue.get("fields") or {}).get("updated")
        try:
            return parse_jira_time(str(raw)).astimezone(UTC).isoformat()
        except ValueError:
            return ""

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
        ad = self.adapter
        if ad.done_here(key):
            return "done"
        state = ad.state_of(issue)
        return "open" if state == "missing" else state

    def _hold(self, item: SnapshotItem, stamp: str) -> None:
        key = item.id
        self._stamps[key] = stamp
        if item.claim is not None and item.claim.lease_expires is not None:
            self._leases[key] = item.claim.lease_expires
        if item.gates and awaiting(item) is not None:
            self._parked.add(key)
        refs = _refs(item)
        self._refs[key] = refs
        self._named.update(refs)

    def _moved(self, old: str) -> None:
        """The issue known as `old` has a new key: the issues naming it by the old one are read
        again in the next delta (their links name the new key by then)."""
        self._drop(old)
        with self._lock:
            self._forced.update(k for k, refs in self._refs.items() if old in refs)

    def _drop(self, key: str) -> None:
        self._stamps.pop(key, None)
        self._leases.pop(key, None)
        self._parked.discard(key)
        refs = self._refs.pop(key, set())
        self._named.subtract(refs)
        for ref in refs:
            if self._named[ref] <= 0:
                del self._named[ref]
