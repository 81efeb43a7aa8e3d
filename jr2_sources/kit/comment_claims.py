"""The claim protocol of `jr2_sources.kit.claims`, run against any tracker's comment thread.

A tracker implements `CommentThread` (post, list, edit, delete a comment; what "still to do" and
"mark as claimed" mean) and delegates `claim` / `renew` / `release` and its settle's claim check
to `CommentClaims`:

* claim (after a look, with `look_first`): post a claim with a fresh nonce, list, and win only if
  ours is the live claim with the lowest id and the item is still to do; a loser deletes every
  comment with its nonce. A winner marks the item (if that fails: unmarked, released, raised).
  With retries the listing's attempt record must be the one the item was chosen by, its backoff
  over; a `jr2:gate` request the snapshot did not know, on an item still parked, loses.
* renew edits our comment; settle, only while our claim holds, applies the outcome, unmarks and
  edits the comment into its outcome (`released` when the claim was lost meanwhile).
* The settle's check reuses the watch's listing just before it (`saw`) when under
  `REUSE_LISTING` old; a look lists no thread the item's read says is empty (`unread`).
"""

from __future__ import annotations

import contextlib
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from jr2_core import Outcome
from jr2_core.errors import SourceError, UsageError
from jr2_sources.capabilities.attempts import KeepsAttempts

from ..tracker import Tracker
from .bounds import NO_BOUNDS, Bounds, bounded
from .claims import Comment, Kind, Marker, holder_of, markers, render_marker, retry_record
from .retry import abort_retries_when

if TYPE_CHECKING:
    from jr2_sources.capabilities.approvals.policy import Approval
    from jr2_sources.capabilities.attempts import Attempt
    from jr2_sources.readyset import SnapshotItem


class Thread(Protocol):
    """A tracker's comment calls, by item key (what lock comments need too)."""

    def post_comment(self, key: str, body: str) -> int | None:
        """Post a comment; its id (None if the response did not say)."""
        ...

    def list_comments(self, key: str) -> tuple[list[Comment], datetime]:
        """Every comment of the item, and the server's time of the listing."""
        ...

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        """Replace a comment's body; its new server `updated_at`, or None if it is gone."""
        ...

    def delete_comment(self, key: str, comment_id: int) -> None:
        """Delete a comment (a comment that is already gone is fine)."""
        ...


class CommentThread(Thread, Protocol):
    """What a tracker provides for `CommentClaims`, by item key."""

    def still_to_do(self, key: str, found: list[Marker]) -> bool:
        """After winning: is the item still open, unmarked, claimable? (may read the tracker)"""
        ...

    def parked(self, key: str) -> bool:
        """Whether the item carries, now, the mark of an item parked awaiting approval (asked
        only when the thread holds a gate request the claimer's snapshot did not know)."""
        ...

    def mark_claimed(self, key: str) -> None:
        """Make the claim visible (a label, an assignee, a transition)."""
        ...

    def unmark(self, key: str) -> None:
        """Remove only jr2's own claim mark."""
        ...


@dataclass
class Held:
    """A claim this process holds: its comment, last server `updated_at`, lease and nonce;
    `lock` keeps a renewal and the settle apart (a late renewal must not revive a settled
    claim); `seen`: the watch's last listing (`saw`), its server time and monotonic time."""

    key: str
    holder: str
    comment_id: int
    updated_at: datetime
    lease: float
    nonce: str
    attempt: int = 1
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    settled: bool = False
    seen: tuple[list[Comment], datetime, float] | None = field(default=None, repr=False,
                                                               compare=False)


REUSE_LISTING = 1.0
"""Seconds a listing the watch took stays good for the settle's claim check (module notes)."""


def parked_since(found: list[Marker], gates: tuple[Approval, ...]) -> bool:
    """Whether a `jr2:gate` marker in `found` was asked after the snapshot that knew `gates`
    (a gate it did not know, or knew only from before this request)."""
    known = {g.name: g.at for g in gates}
    for mk in found:
        name = mk.fields.get("gate")
        if mk.kind == "gate" and isinstance(name, str):
            at = known.get(name.lower())
            if at is None or at < mk.updated_at:
                return True
    return False


def _now_text() -> str:
    """Local time for people reading a renewed marker (never used to judge a lease)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CommentClaims:
    """Claims, renewals and settles of one tracker's items by comment history."""

    def __init__(self, thread: CommentThread, *, who: Callable[[str], str] = str,
                 look_first: bool = False, spread: float = 0.0,
                 sleep: Callable[[float], None] = time.sleep,
                 unread: Callable[[str], bool] | None = None) -> None:
        """`who`: a holder as the line for people writes it; `unread(key)`: read the item, True
        when its thread holds no comment at all (the look need not list it)."""
        self.thread = thread
        self.unread = unread
        self.who = who
        self.look_first = look_first
        self.spread = spread
        self._sleep = sleep
        self._raced = False  # the last claim posted and lost: pause once before the next
        self._held: dict[str, Held] = {}
        self._lock = threading.Lock()
        self.bounds: Bounds = NO_BOUNDS
        """The pool's own settings (`Tracker.bound`): every marker it reads is held within."""

    def _listing(self, key: str) -> tuple[list[Comment], datetime]:
        """The item's comments, each marker's fields within `bounds` (`kit.bounds`)."""
        comments, now = self.thread.list_comments(key)
        return [bounded(c, self.bounds) for c in comments], now

    def held(self, key: str) -> Held | None:
        """This process's live claim of `key` (None once settled or released)."""
        with self._lock:
            held = self._held.get(key)
        return None if held is None or held.settled else held

    def _look(self, key: str, gates: tuple[Approval, ...] = ()) -> bool:
        """With `look_first`: list the comments before posting and give up when another live
        claim holds the item or it is no longer to do, so no comment (no notification) is posted
        for a claim that cannot win; after a lost race, first wait a random part of `spread`
        seconds, once. True: go on and post."""
        if not self.look_first:
            return True
        with self._lock:
            pause, self._raced = self._raced, False
        if pause and self.spread > 0:
            self._sleep(random.uniform(0.0, self.spread))
        if self.unread is not None and self.unread(key):
            return self.thread.still_to_do(key, [])
        comments, now = self._listing(key)
        found = markers(comments)
        return (holder_of(comments, now) is None and not self._parked(key, found, gates)
                and self.thread.still_to_do(key, found))

    def _parked(self, key: str, found: list[Marker], gates: tuple[Approval, ...]) -> bool:
        """Parked since the claimer's snapshot (see the module's note on gates)."""
        return parked_since(found, gates) and self.thread.parked(key)

    def claim(self, key: str, holder: str, lease: float, attempts: int = 0,
              gates: tuple[Approval, ...] = ()) -> bool:
        """Claim `key` for `holder`; True when won. `attempts`, `gates`: as the snapshot the
        item was chosen by knew them."""
        if not self._look(key, gates):
            return False
        nonce = secrets.token_hex(8)
        body = render_marker("claim", {"holder": holder, "lease": lease, "attempt": 1,
                                       "nonce": nonce},
                             f"jr2: claimed by {self.who(holder)} (lease {lease:.0f}s).")
        posted = self.thread.post_comment(key, body)
        mine = {posted} if posted is not None else set()
        comments, now = self._listing(key)
        found = markers(comments)
        mine |= {mk.comment_id for mk in found if mk.nonce == nonce}
        winner = holder_of(comments, now)
        spent, after = retry_record(found)
        if winner is None or winner.nonce != nonce or spent != attempts or (
                after is not None and after > now) or self._parked(key, found, gates) or (
                not self.thread.still_to_do(key, found)):
            with self._lock:
                self._raced = True
            for cid in sorted(mine):
                self.thread.delete_comment(key, cid)
            return False
        held = Held(key, holder, winner.comment_id, winner.updated_at, lease, nonce)
        with self._lock:
            self._held[key] = held
        for cid in sorted(mine - {winner.comment_id}):  # a retried POST's copies
            self.thread.delete_comment(key, cid)
        try:
            self.thread.mark_claimed(key)
        except Exception:
            # whatever failed (the label, the assignee, a bug), no claim mark stays behind
            with contextlib.suppress(SourceError):
                self.thread.unmark(key)
            with contextlib.suppress(SourceError):
                self._edit(held, "released", {}, "jr2: released (the claim could not be marked).")
            self.take(key, holder)
            raise
        return True

    def renew(self, key: str, holder: str, lease: float) -> bool:
        """Extend `holder`'s claim; False when it is gone or its lease had run out."""
        with self._lock:
            held = self._held.get(key)
        if held is None or held.holder != holder:
            return False
        with held.lock:
            if held.settled:
                return False
            with abort_retries_when(lambda: held.settled):
                return self._renew(held, key, holder, lease)

    def _renew(self, held: Held, key: str, holder: str, lease: float) -> bool:
        held.attempt += 1
        body = render_marker("claim", {"holder": holder, "lease": lease,
                                       "attempt": held.attempt, "nonce": held.nonce,
                                       "renewed_at": _now_text()},
                             f"jr2: claimed by {self.who(holder)} (lease {lease:.0f}s, renewed).")
        updated = self.thread.edit_comment(key, held.comment_id, body)
        if updated is None:
            self.take(key, holder)
            return False
        if (updated - held.updated_at).total_seconds() >= held.lease:
            # the lease had run out before this renewal: another pool may hold the item now
            self._edit(held, "released", {},
                       f"jr2: {self.who(holder)} lost this claim (its lease ran out).")
            self.take(key, holder)
            return False
        held.updated_at = updated
        held.lease = lease
        held.seen = None  # a listing from before this edit shows the old lease (`saw`)
        return True

    def saw(self, key: str, comments: list[Comment], now: datetime) -> None:
        """The tracker listed held `key`'s thread at server time `now`: the settle's claim
        check may use that listing."""
        held = self.held(key)
        if held is None:
            return
        listed = [bounded(c, self.bounds) for c in comments]
        ours = [mk for mk in markers(listed) if mk.nonce == held.nonce and mk.kind == "claim"]
        # only a listing that shows our last renewal: an older one would judge an older lease
        if ours and ours[0].updated_at >= held.updated_at:
            held.seen = (listed, now, time.monotonic())

    def _check(self, held: Held) -> tuple[list[Comment], datetime]:
        """The listing the settle judges our claim by: the watch's when fresh (its server time
        moved on by the seconds since), else a new one."""
        seen, held.seen = held.seen, None
        if seen is not None:
            comments, now, at = seen
            age = time.monotonic() - at
            if 0 <= age < REUSE_LISTING:
                return comments, now + timedelta(seconds=age)
        return self._listing(held.key)

    def take(self, key: str, holder: str) -> Held | None:
        """Forget `holder`'s claim on `key` and return it (None if this process has none)."""
        with self._lock:
            held = self._held.get(key)
            if held is None or held.holder != holder:
                return None
            return self._held.pop(key)

    def release(self, key: str, holder: str) -> None:
        """Drop the claim with no outcome."""
        held = self.take(key, holder)
        if held is not None:
            self.settle(held, "released", {}, f"jr2: released by {self.who(holder)}.", None)

    def finish(self, key: str, holder: str, outcome: Outcome, *, on_done: Callable[[], None],
               on_failed: Callable[[], None], retry_hint: str,
               attempt: Attempt | None = None) -> bool:
        """Settle `holder`'s claim with a worker's outcome: `cancelled` releases it, `done` and
        `failed` run `on_done` / `on_failed` while the claim holds, a failure to retry
        (`attempt.retry_after`) is only recorded. True when a `done` was settled here."""
        if outcome.status == "cancelled":
            self.release(key, holder)
            return False
        held = self.take(key, holder)
        if held is None:
            return False
        who = self.who(holder)
        counted: dict[str, Any] = {} if attempt is None else {"attempts": attempt.number}
        if outcome.status == "done":
            self.settle(held, "done", counted, f"jr2: done by {who}.", on_done)
            return True
        reason = outcome.failure.reason if outcome.failure is not None else "failed"
        reason = " ".join(str(reason).split())[:500] or "failed"
        if attempt is not None and attempt.retry_after is not None:
            at = attempt.retry_after.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            self.settle(held, "failed", {"reason": reason, **counted, "retry_after": at},
                        f"jr2: attempt {attempt.number} failed under {who}: {reason}\n\n"
                        f"It will be offered again after {at}.", None, keep_mark=True)
            return False
        self.settle(held, "failed", {"reason": reason, **counted},
                    f"jr2: failed under {who}: {reason}\n\n{retry_hint}", on_failed)
        return False

    def settle(self, held: Held, kind: Kind, fields: dict[str, Any], text: str,
               action: Callable[[], None] | None, *, keep_mark: bool = False) -> None:
        """Apply `action` and unmark (unless `keep_mark`) only while our claim still holds, then
        edit the claim comment into its outcome (`released` if lost meanwhile); a renewal in
        flight is waited for, or gives up when retrying."""
        held.settled = True
        with held.lock:
            self._settle(held, kind, fields, text, action, keep_mark)

    def _settle(self, held: Held, kind: Kind, fields: dict[str, Any], text: str,
                action: Callable[[], None] | None, keep_mark: bool = False) -> None:
        comments, now = self._check(held)
        winner = holder_of(comments, now)
        if winner is not None and winner.nonce == held.nonce:
            if action is not None:
                action()
            if not keep_mark:
                self.thread.unmark(held.key)
        else:
            kind, fields = "released", {}
            text = f"jr2: {self.who(held.holder)} lost this claim before settling it."
        self._edit(held, kind, fields, text)

    def _edit(self, held: Held, kind: Kind, fields: dict[str, Any], text: str) -> None:
        body = render_marker(kind, {"holder": held.holder, "nonce": held.nonce, **fields}, text)
        self.thread.edit_comment(held.key, held.comment_id, body)


class ClaimsByComment(KeepsAttempts, Tracker):
    """`claim` / `renew` / `settle` of a tracker whose claims are comments, delegated to its
    `claims` and refused on a read-only one. The class sets `name`, `read_only`,
    `claims` and `tracker`, and implements `finish` (done or failed)."""

    tracker: ClassVar[str] = "the tracker"
    name: str
    read_only: bool
    claims: CommentClaims

    def _writable(self) -> None:
        if self.read_only:
            raise UsageError(f"{self.name}: read-only here (a report never writes to "
                             f"{self.tracker})")

    def bound(self, bounds: Bounds) -> None:
        """Claims, retries and gates read back within the pool's own settings."""
        self.claims.bounds = bounds

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        self._writable()
        return self.claims.claim(item.id, holder, lease, item.attempts, item.gates)

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        self._writable()
        return self.claims.renew(item_id, holder, lease)

    def release(self, item_id: str, holder: str) -> None:
        self._writable()
        self.claims.release(item_id, holder)

    def finish(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        """Record a `done` or `failed` outcome (and the attempt) and drop the claim."""
        raise NotImplementedError

    def settle(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        if outcome.status == "cancelled":
            self.release(item_id, holder)
        else:
            self.finish(item_id, holder, outcome, attempt)
