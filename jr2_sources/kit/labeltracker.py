"""`LabelCommentTracker`: the base of a tracker whose claims are comments and whose marks are
labels (GitHub, GitLab, Redmine), so such a tracker writes only its HTTP calls (the abstract
methods), as the `CommentThread` of `kit.comment_claims`.

* Winning re-reads the issue (`still_to_do`): one settled just before our listing, or that left
  the filter, is lost. Settling re-checks our claim, changes the issue (close, done or failed
  label), removes the claim label and edits the claim comment into its outcome.
* `on_success=nothing` leaves the issue open: counted done here, others lose to its `jr2:done`.
* Deltas: `read_changes(skip)`, the tracker's "updated since" question; None: a full snapshot.
* `watch` reads each held issue (one conditional GET), its comments only when it changed; its
  reads serve the settle right after it (`CommentClaims.saw`, `fresh_issue`).
* Every listing passes through `markers`; every body jr2 writes is sealed.
* Gates: `park` adds `jr2:awaiting-approval` and edits the claim comment into a `jr2:gate`
  marker; the awaiting label leaves once the answered item is settled.
"""

from __future__ import annotations

import threading
import time
from abc import abstractmethod
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from jr2_core import Outcome
from jr2_core.errors import SourceHTTPError
from jr2_sources.capabilities.approvals.comments import record_answer
from jr2_sources.capabilities.approvals.policy import (
    AWAITING_LABEL,
    ApprovalRequest,
    ApprovalStatus,
)
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.capabilities.deltas import ReadsDeltas
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.limits import ReadsBodies
from jr2_sources.capabilities.trust import TrustsMarkers
from jr2_sources.capabilities.webhooks import DeliveryDeduper

from ..readyset import Claim, Snapshot, SnapshotItem
from ..registry import SourceEnv
from ..tracker import CLAIM_REMOVED, GONE, OUT_OF_SCOPE
from . import claims
from .comment_claims import REUSE_LISTING, ClaimsByComment, CommentClaims
from .labeloptions import LabelOptions
from .markers import Ignored, MarkerTrust, marker_key


def parse_time(value: str) -> datetime:
    """An ISO-8601 time as GitHub and GitLab write it (`...Z`, or with an offset), in UTC."""
    text = value.strip()
    dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def labels_of(issue: dict[str, Any]) -> list[str]:
    """The label names of an issue object: strings (GitLab), or objects with a `name` (GitHub;
    GitLab with `with_labels_details=true`)."""
    out = []
    for lab in issue.get("labels") or []:
        name = lab.get("name") if isinstance(lab, dict) else lab
        if name:
            out.append(str(name))
    return out


class LabelCommentTracker(ReadsDeltas, ReadsBodies, TrustsMarkers, ClaimsByComment):
    """A tracker whose claims are comments and whose marks are labels. A subclass sets `kind`
    (as in `kind:target`), `tracker`, the issue object's `open_state`, the comment paths, the
    `need_*` hints (what a refusal says the token lacks), and implements the HTTP calls."""

    kind: ClassVar[str] = "tracker"
    open_state: ClassVar[str] = "open"
    edit_method: ClassVar[str] = "PATCH"
    comments_segment: ClassVar[str] = "comments"
    need_comments: ClassVar[str] = "write issue comments"
    need_issues: ClassVar[str] = "write issues"
    comments_count: ClassVar[str | None] = None
    """The issue object's count of comments (GitHub `comments`), if any: a look before a claim
    lists no thread the issue says is empty."""

    config: Any  # a LabelOptions model with `target`
    client: Any  # a jr2_sources.kit.rest.RestClient

    def __init__(self, config: LabelOptions, env: SourceEnv, client: Any, *,
                 look_first: bool = False, spread: float = 0.0) -> None:
        """`look_first` and `spread`: as `CommentClaims` takes them."""
        self.config = config
        self.name = f"{self.kind}:{self.config.target}"
        self.read_only = env.read_only
        self.client = client
        self.claims = CommentClaims(self, who=lambda h: f"`{h}`", look_first=look_first,
                                    spread=spread,
                                    unread=self._unread if self.comments_count else None)
        self.markers = MarkerTrust(self.name, self.identity, also=config.trust,
                                   key=marker_key(), warn=not env.read_only)
        self._done_here: set[str] = set()
        self._gated: set[str] = set()  # claimed here with gates recorded: awaiting label on
        self._deliveries = DeliveryDeduper()
        self._lock = threading.Lock()
        self._watched: dict[str, str] = {}  # held key -> `updated_at` when its comments were read
        self._issue_seen: dict[str, tuple[float, dict[str, Any]]] = {}  # held key -> watch's read
        self._peeked: dict[str, dict[str, Any]] = {}  # key -> the look's read, for its still_to_do

    # -- the tracker's own calls -------------------------------------------------------------

    @abstractmethod
    def read_snapshot(self, skip: set[str]) -> Snapshot:
        """The open issues in scope (ids in `skip`, done in this process, left out)."""

    @abstractmethod
    def issue_path(self, key: str) -> str:
        """The API path of one issue (refusing an id of another project)."""

    @abstractmethod
    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        """Every comment of the issue as `trusted` reads it, and the server's time of it."""

    @abstractmethod
    def identity(self) -> list[str]:
        """The accounts of the pool's own credentials, as comment authors name them."""

    def ignored_markers(self, key: str) -> tuple[Ignored, ...]:
        """The markers the latest listing of `key`'s thread left out (for the report)."""
        return self.markers.ignored_on(self.canonical(key))

    def trusted(self, key: str, comments: list[claims.Comment]) -> list[claims.Comment]:
        """A listing of `key`'s thread as the protocols may read it (`kit.markers`)."""
        return self.markers.read(key, comments).comments

    def labels_of(self, issue: dict[str, Any]) -> list[str]:
        """The label names of an issue object."""
        return labels_of(issue)

    @abstractmethod
    def add_label(self, key: str, label: str) -> None: ...

    @abstractmethod
    def remove_label(self, key: str, label: str) -> None:
        """Remove one label; a label that is not there is fine."""

    @abstractmethod
    def close_issue(self, key: str) -> None:
        """Close the issue as completed."""

    def read_issue(self, key: str) -> Any:
        """One issue as the watch, a claim's check and `parked` read it (a `RestResponse`)."""
        return self.client.get(self.issue_path(key))

    def comments_path(self, key: str) -> str:
        return f"{self.issue_path(key)}/{self.comments_segment}"

    def comment_path(self, key: str, comment_id: int) -> str:
        """The API path of one comment (GitHub's live outside the issue's path)."""
        return f"{self.comments_path(key)}/{comment_id}"

    def refused(self, key: str, exc: SourceHTTPError) -> Exception:
        """The error for a refused write about `key`: a subclass makes those that concern that
        one issue (locked, deleted) an `ItemError`."""
        return exc

    def write(self, key: str, method: str, path: str, body: Any = None, *,
              need: str | None = None) -> Any:
        """A write about one issue; a refusal raises `refused(key, exc)`."""
        self.forget_issue(key)
        try:
            return self.client.write(method, path, body, need=need or self.need_issues)
        except SourceHTTPError as exc:
            raise self.refused(key, exc) from None

    # -- reading ------------------------------------------------------------------------------

    def done_here(self) -> set[str]:
        """The items this process settled as done: never offered again in this run."""
        with self._lock:
            return set(self._done_here)

    def snapshot(self) -> Snapshot:
        return self.read_snapshot(self.done_here())

    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """One full snapshot, then deltas (see the module notes); `full`: a resync."""
        if not full:
            delta = self.read_changes(self.done_here())
            if delta is not None:
                return delta
        return self.snapshot()

    def read_changes(self, skip: set[str]) -> Delta | None:
        """What changed since the last reading (ids in `skip` leave), or None: read in full."""
        return None

    def own_claim(self, key: str) -> Claim | None:
        """The claim this process holds on `key`, as the Ready-set shows one: a delta need not
        read the comments of an issue whose change is our own claim (none can win over it)."""
        held = self.claims.held(key)
        if held is None:
            return None
        return Claim(holder=held.holder, since=held.updated_at,
                     lease_expires=held.updated_at + timedelta(seconds=held.lease))

    def issue_in_scope(self, issue: dict[str, Any]) -> bool:
        """Whether the user's filter selects an issue object (ignoring jr2's own labels)."""
        return bool(self.config.selects(self.labels_of(issue)))

    # -- people win ---------------------------------------------------------------------------

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        """Which held items a person took back: one conditional GET of each (module notes)."""
        out: dict[str, str] = {}
        for key in item_ids:
            why = self._taken_back(key, holder)
            if why is not None:
                out[key] = why
        with self._lock:  # a watch of some held items keeps what it knows of the others
            for seen in (self._watched, self._issue_seen):
                for key in [k for k in seen if self.claims.held(k) is None]:
                    del seen[key]
        return out

    def fresh_issue(self, key: str) -> dict[str, Any] | None:
        """The issue object the last watch read of `key`, once, if under `REUSE_LISTING` seconds
        old and no write of ours about it came since (as good as a read now)."""
        with self._lock:
            seen = self._issue_seen.pop(key, None)
        if seen is None or not 0 <= time.monotonic() - seen[0] < REUSE_LISTING:
            return None
        return seen[1]

    def forget_issue(self, key: str) -> None:
        """A write of ours about `key`: what the watch read of it is out of date."""
        with self._lock:
            self._issue_seen.pop(key, None)

    def _taken_back(self, key: str, holder: str) -> str | None:
        cfg = self.config
        try:
            resp = self.read_issue(key)
        except SourceHTTPError as exc:
            if exc.status in (404, 410):
                return GONE
            raise
        issue = resp.data
        if resp.status not in (200, 304) or not isinstance(issue, dict) or (
                issue.get("state") != self.open_state):
            return GONE
        with self._lock:
            self._issue_seen[key] = (time.monotonic(), issue)
        labels = self.labels_of(issue)
        if cfg.has_label(labels, cfg.done_label):
            return GONE
        if not self.issue_in_scope(issue):
            return OUT_OF_SCOPE
        if cfg.has_label(labels, cfg.failed_label):
            return "it was marked failed"
        if not cfg.has_label(labels, cfg.claim_label):
            return CLAIM_REMOVED
        stamp = str(issue.get("updated_at") or "")
        with self._lock:
            if stamp and self._watched.get(key) == stamp:
                return None  # unchanged since its comments were read: our claim stands
        comments, now = self.list_comments(key)
        self.claims.saw(key, comments, now)
        claim = claims.claim_of(comments, now)
        if claim is None:
            return CLAIM_REMOVED
        if claim.holder != holder:
            return "another pool holds it now"
        with self._lock:
            self._watched[key] = stamp
        return None

    # -- the comment thread (for jr2_sources.comment_claims) ----------------------------------

    def canonical(self, key: str) -> str:
        """The item id of `key` as the snapshot spells it (what a marker is signed for)."""
        return key

    def author_of(self, comment: Any) -> str | None:
        """The author a comment object of the tracker names."""
        return None

    def post_comment(self, key: str, body: str) -> int | None:
        with self._lock:  # the claim's own check reads the issue after this post, never before
            self._peeked.pop(key, None)
        posted = self.write(key, "POST", self.comments_path(key),
                            {"body": self.markers.seal(self.canonical(key), body)},
                            need=self.need_comments)
        if not isinstance(posted.data, dict):
            return None
        self.markers.posted_by(self.author_of(posted.data))
        return int(posted.data["id"])

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        try:
            resp = self.client.write(self.edit_method, self.comment_path(key, comment_id),
                                     {"body": self.markers.seal(self.canonical(key), body)},
                                     need=self.need_comments)
        except SourceHTTPError as exc:
            if exc.status in (404, 410):
                return None
            raise self.refused(key, exc) from None
        return parse_time(str(resp.data["updated_at"]))

    def delete_comment(self, key: str, comment_id: int) -> None:
        try:
            self.client.write("DELETE", self.comment_path(key, comment_id),
                              need=self.need_comments)
        except SourceHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def still_to_do(self, key: str, found: list[claims.Marker]) -> bool:
        """Whether the issue is still open, unsettled and in the user's scope (read now): a
        change of scope a delta missed (a label renamed) is refused here, and the next delta
        reads the issue directly (`wrote`)."""
        with self._lock:
            issue = self._peeked.pop(key, None)
        if issue is None:
            issue = self.read_issue(key).data
        if not isinstance(issue, dict) or issue.get("state") != self.open_state:
            return False
        if not self.issue_in_scope(issue):
            self.wrote(key)
            return False
        settled = self.config.settled_by(self.labels_of(issue), found)
        if settled == "done":
            with self._lock:  # done before and left open on purpose: not work, from now on
                self._done_here.add(key)
        return settled is None

    def _unread(self, key: str) -> bool:
        """`CommentClaims.unread`: read the issue (kept for the look's `still_to_do`) and say
        whether it counts no comment at all."""
        try:
            issue = self.read_issue(key).data
        except SourceHTTPError as exc:
            raise self.refused(key, exc) from None
        if not isinstance(issue, dict):
            return False
        with self._lock:
            self._peeked[key] = issue
        count = issue.get(self.comments_count or "")
        return isinstance(count, int) and count == 0

    def mark_claimed(self, key: str) -> None:
        self.add_label(key, self.config.claim_label)

    def unmark(self, key: str) -> None:
        self.remove_label(key, self.config.claim_label)

    # -- settle -------------------------------------------------------------------------------

    def mark_done(self, key: str) -> None:
        """Apply a success as `on_success` says (close, or the done label)."""
        cfg = self.config
        if cfg.on_success == "close":
            self.close_issue(key)
        elif cfg.on_success == "label" and cfg.done_label:
            self.add_label(key, cfg.done_label)

    def mark_failed(self, key: str) -> None:
        """Apply a failure: the failed label."""
        self.add_label(key, self.config.failed_label)

    # -- approval gates ------------------------------------------------------------------------

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        with self._lock:  # a stamp of an earlier claim of ours tells nothing of this one
            self._watched.pop(item.id, None)
        try:
            won = super().claim(item, holder, lease)
        finally:
            with self._lock:  # a look that gave up early left its read unused
                self._peeked.pop(item.id, None)
        if won and item.gates:
            with self._lock:
                self._gated.add(item.id)
        return won

    def mark_parked(self, key: str) -> None:
        """Park: the awaiting label (the claim label goes after this, as on settle)."""
        self.add_label(key, AWAITING_LABEL)

    def parked(self, key: str) -> bool:
        """The issue carries the awaiting label now (a conditional read)."""
        issue = self.read_issue(key).data
        return isinstance(issue, dict) and self.config.has_label(self.labels_of(issue),
                                                                 AWAITING_LABEL)

    def take_off_awaiting(self, key: str) -> None:
        """After a done or failed settle of an issue that carried gates: its awaiting label
        goes."""
        with self._lock:
            gated = key in self._gated
            self._gated.discard(key)
        if gated:
            self.remove_label(key, AWAITING_LABEL)

    def can_answer(self, who: str) -> bool | None:
        """Whether `who` may answer a gate (write access; by default nobody may)."""
        return False

    def answer_approval(self, item_id: str, name: str, status: ApprovalStatus,
                    reason: str | None = None, by: str | None = None) -> bool:
        """Record an answer given through jr2 as a `jr2:answer` comment, when the gate awaits
        one; False otherwise."""
        self._writable()
        self.issue_path(item_id)
        return record_answer(self, item_id, name, status, reason, by, self.can_answer)

    def park(self, item_id: str, holder: str, request: ApprovalRequest) -> None:
        """Park the issue awaiting approval (see the module notes)."""
        self._writable()
        self.issue_path(item_id)  # a foreign id is refused before anything is written
        held = self.claims.take(item_id, holder)
        if held is None:
            return
        with self._lock:
            self._gated.discard(item_id)
        name, why = request.name, f": {request.reason}" if request.reason else ""
        text = (f"jr2: awaiting approval of `{name}`{why}\n\nSomeone with write access "
                f"answers with a comment `/jr2 approve {name}` or `/jr2 reject {name} REASON`.")
        self.claims.settle(held, "gate", {"gate": name, "reason": request.reason}, text,
                           lambda: self.mark_parked(item_id))

    def finish(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        self._writable()
        cfg = self.config

        def done() -> None:
            self.mark_done(item_id)
            self.take_off_awaiting(item_id)

        def failed() -> None:
            self.mark_failed(item_id)
            self.take_off_awaiting(item_id)

        if self.claims.finish(item_id, holder, outcome, on_done=done, on_failed=failed,
                              retry_hint=f"Remove the `{cfg.failed_label}` label to offer it "
                                         "again.", attempt=attempt):
            with self._lock:
                self._done_here.add(item_id)

    def settle(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        settled = False
        try:
            super().settle(item_id, holder, outcome, attempt)
            settled = True
        finally:
            # a retry record is only a comment edit (the claim label stays), which need not
            # move the issue's `updated_at`; a settle that failed half-way left it unknown
            if not settled or (attempt is not None and attempt.retry_after is not None):
                self.wrote(item_id)
            # the claim ended: what the client kept of the issue would stay until the cache is full
            self.client.forget(self.issue_path(item_id), self.comments_path(item_id))

    def wrote(self, key: str) -> None:
        """A write of ours about `key` that its `updated_at` may not show: deltas read it next."""

    def close(self) -> None:
        self.client.close()
