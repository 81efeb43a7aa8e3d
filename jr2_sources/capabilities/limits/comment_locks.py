"""Global caps and conflict groups on a comment tracker: group and slot claims on the comment
thread of one coordination issue (`jr2 work --control-issue ID`).

Design notes
------------
The item claims of `comment_claims` are decided on each item's own thread: two pools that post
at the same instant on the same issue both read both comments and agree on the lower id. A
conflict group spans several items, and a pool cannot read every thread a conflicting claim
could be posted on (an item may be new, or relabelled, since its snapshot). "Post, then read"
is safe only when every claimer posts to and reads the same thread, so the limits live on one
issue that every pool of the tracker names (`--control-issue`), and its comment ids give the
one order every pool agrees on:

* acquire (before the item's claim): post a lock comment

      <!-- jr2:lock {"item": "o/r#12", "groups": ["db"], "holder": "...", "lease": 600,
                     "nonce": "..."} -->

  then list the thread. Among the LIVE lock comments with a LOWER id than ours (live: `now <
  updated_at + lease`, `now` the server's time of the listing, as for claims), if one names a
  group of ours, or `global_cap` or more exist, we yield: our comments are deleted and the item
  is not claimed. Otherwise we hold the groups and a slot. Two claimers that post at once both
  see both comments and agree; a later claimer sees the earlier lock. An earlier lock that will
  itself yield still counts: a claimer may yield needlessly (it tries again on its next poll),
  never wrongly.
* the item's claim follows; if it is lost, the lock is deleted at once. So the lock is taken
  first and released last: a pool holds an item under a limit only while it holds its lock.
* renew with the item's lease (edit the comment; a renewal that lands after the lease ran out,
  `new updated_at >= old updated_at + lease`, has lost the lock: the worker is stopped); settle
  deletes it, and so does parking the item awaiting approval (`--gate`). A pool killed with
  `kill -9` holds its lock until its lease ends, then it is ignored.
* clean-up: a lock comment a killed pool left behind would stay in the thread forever (every
  listing paying its bytes, every page of them one more request). A claimer that finds, in the
  listing it reads anyway, a lock comment expired for one more lease, at most `GRACE` seconds
  (`now >= updated_at + lease + min(lease, GRACE)`, the server's times as above) deletes it: at
  most `SWEEP` per acquire, oldest first, so a thread full of dead locks is emptied over a few
  claims instead of in one burst of deletions. Only jr2's own lock comments are ever deleted:
  the body must parse as a complete `jr2:lock` marker (item, groups, holder, lease, nonce)
  followed by jr2's line for people; any other comment (a person's, jr2's claim or gate markers)
  is never touched. A dead lock's holder cannot come back (a renewal past the lease has lost,
  `renew` below), so deleting it changes no decision; the grace is only a margin for clock skew
  between the pools' views. Two pools sweeping at once may delete the same comment: the second
  deletion's 404 is fine (`delete_comment` of every adapter treats a comment already gone as
  deleted).
* Cost per item under a limit: one comment creation (GitHub's content-creation limit: 500 an
  hour per token), one listing of the coordination issue, one deletion; one edit per renewal;
  plus at most `SWEEP` deletions of dead locks, only when a pool was killed holding some (each
  dead lock is deleted once, by whichever claimer sees it first).
  Lock comments notify the coordination issue's watchers only (unsubscribe from it).

`LockedTracker` wraps a tracker whose adapter is a comment thread (`post_comment`,
`list_comments`, `edit_comment`, `delete_comment` by item key, as `CommentClaims` uses) and adds
the locks around its claims; it is what sets `Tracker.limits` for it. A pool's items with no
group and no global cap take no lock.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from jr2_core import Outcome
from jr2_core.errors import ItemError, SourceError
from jr2_sources.kit.claims import MAX_LEASE, Comment
from jr2_sources.readyset import Snapshot, SnapshotItem
from jr2_sources.tracker import Tracker

__all__ = ["GRACE", "SWEEP", "CommentLocks", "Lock", "LockThread", "LockedTracker", "lock_fields",
           "render_lock"]

_LOCK = re.compile(r"\A\s*<!--\s*jr2:lock\s+(\{.*?\})\s*-->", re.DOTALL)
_PEOPLE_LINE = re.compile(r"\A\s*<!--\s*jr2:lock\s+\{.*?\}\s*-->\s*jr2: ", re.DOTALL)

GRACE = 60.0
"""A lock comment is dead, and cleaned up, one more lease after its lease ended, at most this
many seconds after (module notes: clean-up)."""

SWEEP = 3
"""At most this many dead lock comments are deleted per acquire (module notes: clean-up)."""


class LockThread(Protocol):
    """The comment calls of a tracker adapter (the `CommentThread` of `comment_claims`)."""

    def post_comment(self, key: str, body: str) -> int | None: ...

    def list_comments(self, key: str) -> tuple[list[Comment], datetime]: ...

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None: ...

    def delete_comment(self, key: str, comment_id: int) -> None: ...


@dataclass(frozen=True, slots=True)
class _Found:
    """One lock comment of the thread."""

    comment_id: int
    groups: frozenset[str]
    nonce: str
    updated_at: datetime
    lease: float

    own: bool = False
    """The comment is exactly what jr2 writes (complete marker and jr2's line): deletable."""

    def live(self, now: datetime) -> bool:
        return now < self.updated_at + timedelta(seconds=self.lease)

    def dead(self, now: datetime) -> bool:
        """Expired for one more lease (at most `GRACE` s): its holder can never renew it."""
        grace = min(self.lease, GRACE)
        return self.own and now >= self.updated_at + timedelta(seconds=self.lease + grace)


def render_lock(fields: dict[str, Any], text: str) -> str:
    """A lock comment's body: the hidden marker, then one line for people."""
    return f"<!-- jr2:lock {json.dumps(fields, sort_keys=True)} -->\n{text}"


def lock_fields(body: str) -> dict[str, Any] | None:
    """The JSON fields of a lock comment's marker, or None when `body` is not one (a tracker
    that keeps markers outside the body, Jira Cloud, moves them with these)."""
    m = _LOCK.match(body or "")
    if m is None:
        return None
    try:
        fields = json.loads(m.group(1))
    except ValueError:
        return None
    return fields if isinstance(fields, dict) else None


def _parse(comment: Comment) -> _Found | None:
    fields = lock_fields(comment.body)
    if fields is None:
        return None
    try:
        groups = frozenset(str(g) for g in fields.get("groups") or ())
        lease = min(max(float(fields.get("lease", 0)), 0.0), MAX_LEASE)
        nonce = str(fields["nonce"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    own = (isinstance(fields.get("item"), str) and isinstance(fields.get("holder"), str)
           and isinstance(fields.get("groups"), list) and isinstance(fields.get("nonce"), str)
           and isinstance(fields.get("lease"), (int, float)) and fields["lease"] > 0
           and _PEOPLE_LINE.match(comment.body) is not None)
    return _Found(comment.id, groups, nonce, comment.updated_at, lease, own)


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
    """Group and slot locks on the thread of the coordination issue `key` (module notes)."""

    def __init__(self, thread: LockThread, key: str, *, global_cap: int | None) -> None:
        self.thread = thread
        self.key = key
        self.global_cap = global_cap

    def _body(self, item_id: str, groups: Sequence[str], holder: str, lease: float,
              nonce: str) -> str:
        fields = {"item": item_id, "groups": list(groups), "holder": holder, "lease": lease,
                  "nonce": nonce}
        named = f" (groups {', '.join(groups)})" if groups else ""
        return render_lock(fields, f"jr2: {item_id} is held{named} by `{holder}` "
                                   f"(lease {lease:.0f}s).")

    def acquire(self, item_id: str, groups: Sequence[str], holder: str,
                lease: float) -> Lock | None:
        """Post a lock for `item_id` and keep it if no earlier live lock shares a group and
        fewer than `global_cap` earlier live locks exist; None (ours deleted) otherwise."""
        nonce = secrets.token_hex(8)
        posted = self.thread.post_comment(self.key,
                                          self._body(item_id, groups, holder, lease, nonce))
        comments, now = self.thread.list_comments(self.key)
        found = sorted((f for c in comments if (f := _parse(c)) is not None),
                       key=lambda f: f.comment_id)
        ours = [f for f in found if f.nonce == nonce]
        mine = {f.comment_id for f in ours} | ({posted} if posted is not None else set())
        if not ours:  # our comment is not listed (yet): we cannot know our place, so yield
            self._delete(mine)
            return None
        first = ours[0]
        self._sweep([f for f in found if f.nonce != nonce], now)
        earlier = [f for f in found if f.comment_id < first.comment_id and f.nonce != nonce
                   and f.live(now)]
        wanted = set(groups)
        if any(f.groups & wanted for f in earlier) or (
                self.global_cap is not None and len(earlier) >= self.global_cap):
            self._delete(mine)
            return None
        self._delete(mine - {first.comment_id})
        return Lock(item_id, tuple(groups), holder, nonce, first.comment_id, first.updated_at,
                    lease)

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

    def _sweep(self, others: list[_Found], now: datetime) -> None:
        """Delete up to `SWEEP` dead lock comments of other (killed) pools, oldest first."""
        self._delete({f.comment_id for f in others if f.dead(now)}, limit=SWEEP)

    def _delete(self, ids: set[int], limit: int | None = None) -> None:
        for cid in sorted(ids)[:limit]:
            self.thread.delete_comment(self.key, cid)


class LockedTracker(Tracker):
    """`inner` (a tracker whose adapter is a comment thread) with global caps and conflict
    groups kept by `CommentLocks` on the coordination issue `control` (module notes)."""

    limits = True

    def __init__(self, inner: Any, control: str) -> None:
        self.inner = inner
        self.control = control
        self.name = str(inner.name)
        self.webhook = inner.webhook
        self.spread_claims = bool(getattr(inner, "spread_claims", False))  # type: ignore[misc]
        self.retries = bool(getattr(inner, "retries", False))  # type: ignore[misc]
        self.gates = bool(getattr(inner, "gates", False))  # type: ignore[misc]
        self._locks: dict[str, Lock] = {}
        self._guard = threading.Lock()
        self._engine: CommentLocks | None = None

    def __getattr__(self, name: str) -> Any:  # `changes`, `config`, ... of the inner tracker
        return getattr(self.__dict__["inner"], name)

    @property
    def locks(self) -> CommentLocks:
        if self._engine is None:
            self._engine = CommentLocks(self.inner, self.control, global_cap=self.global_cap)
        return self._engine

    def check(self) -> None:
        """Read the coordination issue's thread once (at start: it exists, we may read it); a
        tracker that guards its writes by scope (Jira) is told the user chose this issue."""
        allow = getattr(self.inner, "allow_control", None)
        if callable(allow):
            allow(self.control)
        self._call(lambda: self.inner.list_comments(self.control))

    def _call(self, fn: Any) -> Any:
        """A call about the coordination issue: its refusal is the source's, not one item's."""
        try:
            return fn()
        except ItemError as exc:
            raise SourceError(f"{self.name}: the coordination issue {self.control} (from "
                              f"--control-issue): {exc}") from None

    def snapshot(self) -> Snapshot:
        result: Snapshot = self.inner.snapshot()
        return result

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        if not item.groups and self.global_cap is None:
            return bool(self.inner.claim(item, holder, lease))
        lock = self._call(lambda: self.locks.acquire(item.id, item.groups, holder, lease))
        if lock is None:
            return False
        try:
            won = bool(self.inner.claim(item, holder, lease))
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
        ok = bool(self.inner.renew(item_id, holder, lease))
        with self._guard:
            lock = self._locks.get(item_id)
        if ok and lock is not None:
            ok = bool(self._call(lambda: self.locks.renew(lock, lease)))
        return ok

    def settle(self, item_id: str, holder: str, outcome: Outcome, *attempt: Any) -> None:
        try:
            self.inner.settle(item_id, holder, outcome, *attempt)
        finally:
            with self._guard:
                lock = self._locks.pop(item_id, None)
            if lock is not None:
                self._call(lambda: self.locks.release(lock))

    def park(self, item_id: str, holder: str, request: Any) -> None:
        """`--gate`: the inner tracker parks the item (its claim released), and the item's
        group and slot locks go as on a settle: a parked item holds no place while it waits,
        and takes them again when it is claimed after its answer."""
        try:
            self.inner.park(item_id, holder, request)
        finally:
            with self._guard:
                lock = self._locks.pop(item_id, None)
            if lock is not None:
                self._call(lambda: self.locks.release(lock))

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        return dict(self.inner.watch(item_ids, holder))

    def dashboard(self, issue: str | int) -> Any:
        """The inner tracker's dashboard issue (`jr2 work --dashboard`)."""
        return self.inner.dashboard(issue)

    def close(self) -> None:
        self.inner.close()
