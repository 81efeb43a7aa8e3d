"""Global caps and conflict groups on a comment tracker: lock comments on the thread of one
coordination issue (`jr2 work --control-issue ID`), whose ids give the order every pool agrees on.

* look first: list the thread; a live lock for the same item or one of our groups, or
  `global_cap` live locks, and we give way without posting (one listing per Ready-set reading).
* acquire (before the item's claim): post a `jr2:lock` marker (item, groups, holder, lease,
  nonce), list the thread, and yield (deleting ours) if a live lock with a lower id is for the
  same item, shares a group, or `global_cap` such locks exist; a lost claim deletes it at once.
* renew edits the lock with the item's lease; settle and parking delete it.
* clean-up: a lock dead for one more lease (at most `GRACE`) is deleted by the next claimers, at
  most `SWEEP` per acquire; only complete `jr2:lock` markers by jr2 are ever deleted.
* bounds: a lock counts for at most the reader's own `--lease`; groups over `GROUPS_BUDGET`
  characters are written as digests, else `all_groups`. A refused lock (`LockRefused`) skips the
  item; a refusal about the coordination issue ends the run.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from jr2_core import Outcome
from jr2_core.errors import ItemError, SourceError, SourceHTTPError, UsageError
from jr2_sources.capabilities import readings
from jr2_sources.capabilities.approvals.mixin import KeepsApprovals
from jr2_sources.capabilities.approvals.policy import ApprovalRequest
from jr2_sources.capabilities.limits.mixin import LocksByComment
from jr2_sources.kit.claims import MAX_LEASE, Comment, render_marker, split_marker
from jr2_sources.kit.comment_claims import Thread
from jr2_sources.readyset import SnapshotItem
from jr2_sources.tracker import Tracker

__all__ = ["GRACE", "GROUPS_BUDGET", "SWEEP", "CommentLocks", "Lock", "LockedClaims",
           "LocksByComment", "Wanted", "digest", "group_fields", "lock_fields", "parse_lock",
           "render_lock"]

GRACE = 60.0  # a dead lock is cleaned up one more lease after its end, at most this later
SWEEP = 3  # dead locks deleted per acquire, at most
GROUPS_BUDGET = 4000  # characters of a lock's groups in its marker, far under any body limit
SHOWN, NAME_SHOWN = 5, 40  # groups its line for people names, and characters of each

RACE_PAUSE = 1.0  # a pool that waited and finds room waits a random part of it and looks again

_DIGEST = 12  # hex digits of a group's digest (48 bits: a collision only makes a pool wait)
_REFUSED = frozenset({400, 413, 422})  # the tracker refused the comment itself (its content)


class LockRefused(ItemError):
    """The tracker refused one item's lock comment (its content): that item is skipped."""


def digest(group: str) -> str:
    """A group's short digest, as a lock whose groups are too many to name writes it."""
    return hashlib.sha256(group.encode()).hexdigest()[:_DIGEST]


def group_fields(groups: Iterable[str]) -> dict[str, Any]:
    """A lock marker's group fields within `GROUPS_BUDGET` characters: the names (`groups`)
    when they fit, else their digests (`digests`), else `all_groups` (the lock then conflicts
    with every item that has a group: coarser, never wrong)."""
    names = sorted(set(groups))
    if len(json.dumps(names)) <= GROUPS_BUDGET:
        return {"groups": names}
    digests = sorted({digest(g) for g in names})
    if len(json.dumps(digests)) <= GROUPS_BUDGET:
        return {"groups": [], "digests": digests}
    return {"groups": [], "all_groups": True}


@dataclass(frozen=True, slots=True)
class Wanted:
    """The groups of an item a claimer wants to lock, in the forms locks are compared in."""

    digests: frozenset[str]
    every: bool  # too many to write but as `all_groups`

    @classmethod
    def of(cls, groups: Iterable[str]) -> Wanted:
        names = frozenset(groups)
        return cls(frozenset(digest(g) for g in names), "all_groups" in group_fields(names))


@dataclass(frozen=True, slots=True)
class _Found:
    """One lock comment of the thread: `own` when it is exactly what jr2 writes (deletable),
    `digests` of its named groups and of those it carries instead, `every`: `all_groups`."""

    comment_id: int
    groups: frozenset[str]
    nonce: str
    updated_at: datetime
    lease: float
    own: bool = False
    item: str | None = None
    digests: frozenset[str] = frozenset()
    every: bool = False

    def live(self, now: datetime, bound: float | None = None) -> bool:
        """Live at server time `now`, its lease at most `bound` (the reader's own `--lease`)."""
        lease = self.lease if bound is None else min(self.lease, bound)
        return now < self.updated_at + timedelta(seconds=lease)

    def dead(self, now: datetime) -> bool:
        """Expired for one more lease (at most `GRACE` s): its holder can never renew it."""
        grace = min(self.lease, GRACE)
        return self.own and now >= self.updated_at + timedelta(seconds=self.lease + grace)

    def shares(self, wanted: Wanted) -> bool:
        """Whether this lock holds a group of an item with the groups `wanted`."""
        if not wanted.digests or not (self.groups or self.digests or self.every):
            return False
        return self.every or wanted.every or bool(self.digests & wanted.digests)


def render_lock(fields: dict[str, Any], text: str) -> str:
    """A lock comment's body: the hidden marker, then one line for people."""
    return render_marker("lock", fields, text)


def lock_fields(body: str) -> dict[str, Any] | None:
    """The JSON fields of a lock comment's marker, or None when `body` is not one."""
    found = split_marker(body)
    return found[1] if found is not None and found[0] == "lock" else None


def parse_lock(comment: Comment) -> _Found | None:
    """The lock a comment holds, or None when it is not a lock comment."""
    found = split_marker(comment.body)
    if found is None or found[0] != "lock":
        return None
    _, fields, text = found
    try:
        groups = frozenset(str(g) for g in fields.get("groups") or ())
        digests = frozenset(str(d) for d in fields.get("digests") or ())
        lease = min(max(float(fields.get("lease", 0)), 0.0), MAX_LEASE)
        nonce = str(fields["nonce"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    own = (isinstance(fields.get("item"), str) and isinstance(fields.get("holder"), str)
           and isinstance(fields.get("groups"), list) and isinstance(fields.get("nonce"), str)
           and isinstance(fields.get("lease"), (int, float)) and fields["lease"] > 0
           and text.lstrip().startswith("jr2: "))
    item = fields.get("item")
    return _Found(comment.id, groups, nonce, comment.updated_at, lease, own,
                  item if isinstance(item, str) else None,
                  digests | frozenset(digest(g) for g in groups), fields.get("all_groups") is True)


def _found(comments: Iterable[Comment]) -> list[_Found]:
    """The lock comments among `comments`, in ascending id (the order every pool agrees on)."""
    return sorted((f for c in comments if (f := parse_lock(c)) is not None),
                  key=lambda f: f.comment_id)


def _shown(groups: Sequence[str]) -> str:
    """The groups as the line for people names them: the first `SHOWN`, each cut short."""
    named = [g if len(g) <= NAME_SHOWN else g[:NAME_SHOWN - 1] + "…" for g in groups[:SHOWN]]
    more = f" and {len(groups) - SHOWN:,} more" if len(groups) > SHOWN else ""
    return f" (groups {', '.join(named)}{more})" if groups else ""


@dataclass
class Lock:
    """A lock this process holds: its comment, last server `updated_at` and lease."""

    item_id: str
    groups: tuple[str, ...]
    holder: str
    nonce: str
    comment_id: int
    updated_at: datetime
    lease: float


class CommentLocks:
    """Group and slot locks on the thread of the coordination issue `key` (module notes);
    `reuse`: a look may use an earlier look's listing until `fresh()` or a write of ours."""

    def __init__(self, thread: Thread, key: str, *, global_cap: int | None,
                 reuse: bool = False, race_pause: float = RACE_PAUSE,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.thread = thread
        self.key = key
        self.global_cap = global_cap
        self.reuse = reuse
        self.race_pause = race_pause
        self._sleep = sleep
        self._seen: tuple[list[_Found], datetime, set[str]] | None = None
        self._raced = False  # a lock of ours had to yield: pause before the next post
        self._waited = False  # a look found no room: pause once there is some
        self._mutex = threading.Lock()

    def _body(self, item_id: str, groups: Sequence[str], holder: str, lease: float,
              nonce: str) -> str:
        fields = {"item": item_id, **group_fields(groups), "holder": holder, "lease": lease,
                  "nonce": nonce}
        return render_lock(fields, f"jr2: {item_id} is held{_shown(sorted(set(groups)))} by "
                                   f"`{holder}` (lease {lease:.0f}s).")

    def fresh(self) -> None:
        """Forget the last listing: the next look lists the thread again."""
        with self._mutex:
            self._seen = None

    def _blocked(self, found: Iterable[_Found], now: datetime, item_id: str, wanted: Wanted,
                 bound: float) -> bool:
        """Whether the live locks `found` (leases at most `bound`) keep this item out: one is
        for it or holds one of its groups, or `global_cap` or more are live."""
        live = [f for f in found if f.live(now, bound)]
        return (any(f.item == item_id or f.shares(wanted) for f in live)
                or (self.global_cap is not None and len(live) >= self.global_cap))

    def look(self, item_id: str, groups: Sequence[str], lease: float) -> bool:
        """Whether the thread, as just read (dead locks swept), shows room for this item; with
        `reuse` one listing serves one look per item (a second look means a new round)."""
        with self._mutex:
            seen = self._seen if self.reuse else None
            if seen is not None and item_id in seen[2]:
                seen = None
        if seen is None:
            comments, now = self.thread.list_comments(self.key)
            found = _found(comments)
            swept = self._sweep(found, now)
            seen = ([f for f in found if f.comment_id not in swept], now, set())
        seen[2].add(item_id)
        room = not self._blocked(seen[0], seen[1], item_id, Wanted.of(groups), lease)
        with self._mutex:
            self._seen = seen
            self._waited = self._waited or not room
        return room

    def acquire(self, item_id: str, groups: Sequence[str], holder: str,
                lease: float) -> Lock | None:
        """Take a lock for `item_id`: None, nothing posted, when `look` shows no room; else
        post one and keep it unless earlier live locks block it (None, ours deleted)."""
        if not self.look(item_id, groups, lease):
            return None
        with self._mutex:
            pause = self._raced or self._waited
            self._raced = self._waited = False
            self._seen = None
        if pause and self.race_pause > 0:
            self._sleep(random.uniform(0.0, self.race_pause))
            if not self.look(item_id, groups, lease):
                return None
            self.fresh()
        nonce = secrets.token_hex(8)
        posted = self._post(item_id, self._body(item_id, groups, holder, lease, nonce))
        comments, now = self.thread.list_comments(self.key)
        found = _found(comments)
        ours = [f for f in found if f.nonce == nonce]
        mine = {f.comment_id for f in ours} | ({posted} if posted is not None else set())
        if not ours:  # our comment is not listed (yet): we cannot know our place, so yield
            self._lost(mine)
            return None
        first = ours[0]
        earlier = [f for f in found if f.comment_id < first.comment_id and f.nonce != nonce]
        if self._blocked(earlier, now, item_id, Wanted.of(groups), lease):
            self._lost(mine)
            return None
        self._delete(mine - {first.comment_id})
        return Lock(item_id, tuple(groups), holder, nonce, first.comment_id, first.updated_at,
                    lease)

    def _post(self, item_id: str, body: str) -> int | None:
        try:
            return self.thread.post_comment(self.key, body)
        except SourceHTTPError as exc:
            if isinstance(exc, ItemError) or exc.status not in _REFUSED:
                raise
            raise LockRefused(f"the lock comment of {item_id} on {self.key} was refused: "
                              f"{exc}") from None

    def _lost(self, mine: set[int]) -> None:
        """Our lock had to yield: delete it, and pause before the next acquire."""
        with self._mutex:
            self._raced = True
        self._delete(mine)

    def renew(self, lock: Lock, lease: float) -> bool:
        """Extend the lock; False when it is gone or its lease had run out (lost)."""
        body = self._body(lock.item_id, lock.groups, lock.holder, lease, lock.nonce)
        updated = self.thread.edit_comment(self.key, lock.comment_id, body)
        if updated is None:
            return False
        if (updated - lock.updated_at).total_seconds() >= lock.lease:
            self.release(lock)
            return False
        lock.updated_at, lock.lease = updated, lease
        return True

    def release(self, lock: Lock) -> None:
        """Delete the lock comment (a comment already gone is fine)."""
        self._delete({lock.comment_id})

    def _sweep(self, found: list[_Found], now: datetime) -> set[int]:
        """Delete up to `SWEEP` dead lock comments of other (killed) pools, oldest first."""
        return self._delete({f.comment_id for f in found if f.dead(now)}, limit=SWEEP)

    def _delete(self, ids: set[int], limit: int | None = None) -> set[int]:
        gone = sorted(ids)[:limit]
        if gone:
            self.fresh()
        for cid in gone:
            self.thread.delete_comment(self.key, cid)
        return set(gone)


class LockedClaims:
    """The claims of a `LocksByComment` tracker with the limits kept by `CommentLocks` on the
    coordination issue `control`: `claim`, `renew`, `settle` and `park` as the tracker's, the
    item's lock taken first and released last; `fresh()` at each reading of the backlog."""

    def __init__(self, tracker: Tracker, control: str) -> None:
        if not isinstance(tracker, LocksByComment):
            raise UsageError(f"{tracker.name}: this source cannot keep lock comments on a "
                             "coordination issue (drop --control-issue)")
        self.tracker = tracker
        self.thread = cast(Thread, tracker)
        self.control = control
        self.name = tracker.name
        self.locks = CommentLocks(self.thread, control, global_cap=None, reuse=True)
        self._locks: dict[str, Lock] = {}
        self._guard = threading.Lock()

    @property
    def global_cap(self) -> int | None:
        """`--global-cap`, set by the WorkSource (None: no global cap)."""
        return self.locks.global_cap

    @global_cap.setter
    def global_cap(self, value: int | None) -> None:
        self.locks.global_cap = value

    def fresh(self) -> None:
        """A new reading of the backlog: the next look lists the coordination issue again."""
        self.locks.fresh()

    def reading(self, snapshot: Callable[[], Any], changes: Callable[..., Any] | None
                ) -> tuple[Callable[[], Any], Callable[..., Any] | None]:
        """`snapshot` and `changes` (the tracker's readings), each calling `fresh` first."""
        return readings(snapshot, changes, before=self.fresh)

    def check(self) -> None:
        """At start: the coordination issue exists and may be read (a refusal is bad input);
        a tracker that guards its writes by scope (Jira) is told the user chose it."""
        cast(LocksByComment, self.tracker).allow_control(self.control)
        self._call(lambda: self.thread.list_comments(self.control), UsageError)

    def _call(self, fn: Any, error: type[Exception] = SourceError) -> Any:
        """A call about the coordination issue, whose refusal is the source's (an `error`)."""
        try:
            return fn()
        except LockRefused:
            raise  # one item's lock comment: that item is skipped, the issue is fine
        except ItemError as exc:
            why = str(exc).removeprefix(f"{self.name}: ")
            raise error(f"{self.name}: the coordination issue {self.control} (from "
                        f"--control-issue): {why}") from None

    def _unlock(self, item_id: str) -> None:
        with self._guard:
            lock = self._locks.pop(item_id, None)
        if lock is not None:
            self._call(lambda: self.locks.release(lock))

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        if not item.groups and self.global_cap is None:
            return bool(self.tracker.claim(item, holder, lease))
        lock = self._call(lambda: self.locks.acquire(item.id, item.groups, holder, lease))
        if lock is None:
            return False
        try:
            won = bool(self.tracker.claim(item, holder, lease))
        except BaseException:
            self._call(lambda: self.locks.release(lock))
            raise
        if not won:
            self._call(lambda: self.locks.release(lock))
            return False
        with self._guard:
            self._locks[item.id] = lock
        return True

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        ok = bool(self.tracker.renew(item_id, holder, lease))
        with self._guard:
            lock = self._locks.get(item_id)
        if ok and lock is not None:
            ok = bool(self._call(lambda: self.locks.renew(lock, lease)))
        return ok

    def settle(self, item_id: str, holder: str, outcome: Outcome, *attempt: Any) -> None:
        settle: Any = self.tracker.settle  # takes an Attempt on a `KeepsAttempts` tracker
        try:
            settle(item_id, holder, outcome, *attempt)
        finally:
            self._unlock(item_id)

    def park(self, item_id: str, holder: str, request: ApprovalRequest) -> None:
        """`--gate`: the tracker parks the item and its lock goes as on a settle (a parked item
        holds no place while it waits)."""
        if not isinstance(self.tracker, KeepsApprovals):
            raise UsageError(f"{self.name}: this source cannot park an item awaiting approval")
        try:
            self.tracker.park(item_id, holder, request)
        finally:
            self._unlock(item_id)
