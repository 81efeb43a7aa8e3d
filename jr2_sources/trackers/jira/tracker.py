"""`JiraTracker`: the `Tracker` of `jira:SERVER` (snapshot, claim, renew, settle, wake).

* A snapshot is one search with exactly the user's JQL narrowed to open issues, never widened; a
  report adds the marked issues outside it as `in_scope=False`. A write to an issue no snapshot
  had in scope is refused (`ItemError`) unless a search shows the filter selects it now.
* Blockers: `issuelinks` of the configured type carrying an `inwardIssue`. Done is status
  category `done`. An issue assigned to someone else is a person's, unless it carries jr2's marks.
* Claims by comment (`kit.comment_claims`); the winner adds the claim label, optionally the
  assignee and a transition. Without `--on-success-transition` a done issue stays open, its
  `jr2:done` marker counting for every pool. jr2 never removes an assignee.
* Markers live in the body on Data Center, in a comment property on Cloud (`markers.py`);
  renewals pass `notifyUsers=false`. A running pool reads by deltas (`deltas.py`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from jr2_core import Outcome
from jr2_core.errors import ItemError, SourceError, SourceHTTPError
from jr2_sources.capabilities.approvals import KeepsApprovals
from jr2_sources.capabilities.approvals.comments import record_answer
from jr2_sources.capabilities.approvals.policy import ApprovalRequest, ApprovalStatus
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.capabilities.dashboard.mixin import HasDashboard
from jr2_sources.capabilities.deltas import ReadsDeltas
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.limits import LocksByComment, ReadsBodies
from jr2_sources.capabilities.trust import TrustsMarkers
from jr2_sources.capabilities.webhooks import (
    DeliveryDeduper,
    TakesWebhooks,
    Verdict,
    header,
    verify_signature,
)
from jr2_sources.kit.claims import Comment, Marker, claim_of, last_failure, retry_record
from jr2_sources.kit.claims import markers as markers_of
from jr2_sources.kit.comment_claims import ClaimsByComment, CommentClaims
from jr2_sources.kit.markers import Ignored, MarkerTrust, marker_key
from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.readyset import BlockerRef, BlockerState, Claim, Snapshot, SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.tracker import GONE, OUT_OF_SCOPE, taken_back

from . import markers
from .approvals import ApprovalReader
from .board import JiraBoard
from .client import FIELDS, JiraClient, JiraHTTPError, parse_jira_time
from .config import JiraConfig, resolve_auth, server_url
from .deltas import JiraChanges
from .description import description_text
from .jql import (
    MAX_KEYS,
    keys_clause,
    marked_outside_jql,
    moves_with_time,
    quote,
    scope_jql,
    scope_where,
    split_order_by,
)
from .webhook import Echoes, marked_by, project_of, wakes

log = logging.getLogger("jr2.jira")

_W_COMMENTS = "add or edit comments (claims need Add Comments and Edit Own Comments)"
_W_ISSUES = "edit issues (labels need Edit Issues)"
_FINAL: tuple[BlockerState, ...] = ("done", "missing")
DONE_WORDS = "jr2 done"  # the words of a done marker's text for people (`jr2: done by ...`)


def _comment(raw: Mapping[str, Any]) -> Comment | None:
    try:
        created = parse_jira_time(str(raw["created"]))
        updated = parse_jira_time(str(raw.get("updated") or raw["created"]))
        body = markers.join(str(raw.get("body") or ""), raw.get("properties"))
        author = raw.get("author")
        who = (author.get("accountId") or author.get("name")) if isinstance(author, dict) else None
        return Comment(int(raw["id"]), body, created, updated, str(who) if who else None)
    except (KeyError, TypeError, ValueError):
        return None


class JiraTracker(LocksByComment, ReadsDeltas, ReadsBodies, KeepsApprovals, HasDashboard,
                  TakesWebhooks, TrustsMarkers, ClaimsByComment):
    """A `Tracker` over the issues a JQL filter selects on one Jira site."""

    tracker = "Jira"

    def __init__(self, config: JiraConfig, env: SourceEnv, *,
                 client: JiraClient | None = None) -> None:
        self.config = config
        self.read_only = env.read_only
        if client is None:
            server = server_url(config)
            client = JiraClient(server, resolve_auth(), label=f"jira:{server}",
                                write_spacing=config.write_spacing,
                                policy=RetryPolicy(budget=config.retry_budget),
                                read_only=env.read_only)
        self.client = client
        self.name = f"jira:{client.server}"
        self.claims = CommentClaims(self)
        self.markers = MarkerTrust(self.name, self.identity, also=config.trust,
                                   key=marker_key(), warn=not env.read_only)
        self._categories: dict[str, str] = {}
        self._refs: dict[str, BlockerState] = {}
        self._done_here: set[str] = set()
        self._me: dict[str, Any] | None = None
        self._order = {n.lower(): i for i, n in enumerate(config.priority_order)}
        self._deduper = DeliveryDeduper()
        self._lock = threading.Lock()
        self._scoped: set[str] = set()  # every key a snapshot of this process had in scope
        self._projects: frozenset[str] = frozenset()  # the projects the last results named
        self._echoes = Echoes()
        self._gates = ApprovalReader(  # --gate: who may answer (gates.py)
            client, lambda who: self._is_me({"accountId": who, "name": who}))
        self._deltas = JiraChanges(self, overlap=config.delta_overlap)
        # a filter with functions or relative dates can drop an issue that never changes, which
        # no delta sees: a claim then judges the scope again first (`claim`)
        self._moving = moves_with_time(config.jql)

    # -- reading --------------------------------------------------------------------------------

    def want_bodies(self) -> None:
        """`--exclusive-by touches` (`jr2_sources.capabilities.limits.policy`): every search from
        now on also reads the description (`description.py`), so items carry their body."""
        self.client.fields = (*FIELDS, "description")

    def scope(self) -> str:
        """The JQL jr2 sends: the user's filter, open issues only."""
        return scope_jql(self.config.jql)

    def snapshot(self) -> Snapshot:
        """The open issues in scope with blockers, sub-tasks, claims and failure marks (and,
        read-only, jr2's marked issues beside the filter, `in_scope=False`)."""
        return self.read_scope()[0]

    def read_scope(self) -> tuple[Snapshot, list[dict[str, Any]], datetime | None]:
        """A full reading: the snapshot, the issues the search returned, and the server's time
        when it began answering (None when it sent no `Date`)."""
        items: list[SnapshotItem] = []
        found, at = self.client.search_at(self.scope())
        keys = {str(issue["key"]) for issue in found}
        with self._lock:
            self._scoped |= keys
            if keys:
                self._projects = frozenset(project_of(k) for k in keys)
        if self.read_only and not self.config.on_success_transition and found:
            self._find_done_left_open()
        for issue in found:
            item = self.item_of(issue)
            if item is not None:
                items.append(item)
        if self.read_only:
            items += self._marked_outside(keys)
        return Snapshot(source=self.name, items=items, done_count=None), found, at

    def _find_done_left_open(self) -> None:
        """A report, with no success transition: the open issues in scope a pool settled as
        done (its `jr2:done` marker; the issue stays open) count as done, as they do for the
        pool that settled them. One search finds the candidates (a phrase search of the
        comments for the marker's words, `jr2: done by ...`); each unmarked one's comments are
        read to confirm the marker, as a claim would (`still_to_do`)."""
        cfg = self.config
        phrase = quote('"' + DONE_WORDS + '"')  # a quoted phrase inside the JQL string
        candidates = self.client.search(f"{scope_where(cfg.jql)} AND comment ~ {phrase}",
                                        ("labels",))
        for issue in candidates:
            key = str(issue["key"])
            labels = (issue.get("fields") or {}).get("labels") or []
            if cfg.claim_label in labels or cfg.failed_label in labels:
                continue  # held or failed: the marks say more than an old outcome
            comments, _ = self.comments(key)
            if any(mk.kind == "done" for mk in markers_of(comments)):
                with self._lock:
                    self._done_here.add(key)

    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """What changed since the last reading (`deltas.py`): a `Delta` from at most two
        searches, or a full `Snapshot` (the first time, when `full`, on any sign of a gap)."""
        reader = self._deltas
        delta = None if full else reader.read(set())
        if delta is None:
            if reader.window.last_gap:
                log.info("%s: reading in full: %s", self.name, reader.window.last_gap)
                reader.window.last_gap = None
            reader.window.begin()  # webhook marks from now on outlive this reading
            snap, found, at = self.read_scope()
            reader.full_read(snap, found, at)
            return snap
        with self._lock:
            self._scoped |= {it.id for it in delta.items}
        return delta

    def done_here(self, key: str) -> bool:
        """Did this process settle `key` as done (with no success transition)?"""
        with self._lock:
            return key in self._done_here

    def is_missing(self, key: str) -> bool:
        """A direct read says `key` does not exist (any more)."""
        try:
            self.client.get(f"/issue/{key}", {"fields": "status"})
        except JiraHTTPError as exc:
            if exc.status in (404, 410):
                return True
            raise
        return False

    def _marked_outside(self, keys: set[str]) -> list[SnapshotItem]:
        cfg = self.config
        jql = marked_outside_jql(cfg.jql, (cfg.claim_label, cfg.failed_label),
                                 {project_of(k) for k in keys})
        out: list[SnapshotItem] = []
        for issue in self.client.search(jql) if jql else []:
            if str(issue["key"]) not in keys and (item := self.item_of(issue)) is not None:
                item.in_scope = False
                out.append(item)
        return out

    def allow_control(self, key: str) -> None:
        """`--control-issue`: the coordination issue the user named takes jr2's lock comments
        (`kit.comment_locks`) although the JQL does not select it: the user chose it for that.
        No other write goes to it (it is never an item of the pool)."""
        with self._lock:
            self._scoped.add(key)

    def _guard(self, key: str) -> None:
        """The second guard of the scope: no write to an issue outside the user's JQL. A key no
        snapshot of this process had in scope is checked with one search (`key = K AND
        (filter)`) before the first write."""
        with self._lock:
            if key in self._scoped:
                return
        if self._selects_now(key):
            return
        raise ItemError(f"{self.name}: {key} is outside the JQL scope; jr2 does not write to it")

    def _selects_now(self, key: str) -> bool:
        """Does the user's filter select `key` now? One search, `key = K AND (filter)`, read
        consistently on Cloud when the issue's id is known (`reconcileIssues`)."""
        where, _ = split_order_by(self.config.jql)
        jql = f"key = {quote(key)} AND ({where})" if where else f"key = {quote(key)}"
        known = self._deltas.id_of(key)
        found, _ = self.client.search_at(jql, ("labels",),
                                         reconcile=() if known is None else (known,))
        selected = any(str(i.get("key")) == key for i in found)
        if selected:  # never dropped: what was in scope may have its claim released (`_guard`)
            with self._lock:
                self._scoped.add(key)
        return selected

    def item_of(self, issue: Mapping[str, Any], *, own: bool = False) -> SnapshotItem | None:
        """One searched issue as a snapshot item (None: a person's, or settled here). `own`:
        an issue this process holds is not listed for its comments (its claim is ours)."""
        cfg = self.config
        key = str(issue["key"])
        f: Mapping[str, Any] = issue.get("fields") or {}
        labels = [str(x) for x in f.get("labels") or []]
        marked = cfg.claim_label in labels or cfg.failed_label in labels
        assignee = f.get("assignee")
        if key in self._done_here or (assignee and not marked and not self._is_me(assignee)):
            return None
        blockers = [BlockerRef(str(other["key"]), self.state_of(other))
                    for link in f.get("issuelinks") or []
                    if self._is_type(link.get("type"))
                    and isinstance(other := link.get("inwardIssue"), dict) and other.get("key")]
        children = [] if cfg.ignore_subtasks else [
            BlockerRef(str(s["key"]), self.state_of(s)) for s in f.get("subtasks") or []
            if isinstance(s, dict) and s.get("key")]
        parent = f.get("parent")
        comments: list[Comment] | None = None
        now: datetime | None = None
        held = self.claims.held(key) if own and cfg.claim_label in labels else None
        if held is None and (cfg.claim_label in labels
                             or (self.read_only and cfg.failed_label in labels)):
            comments, now = self.comments(key)
        failed = None
        if cfg.failed_label in labels:
            failed = (last_failure(comments) if comments is not None else None) or \
                f"marked {cfg.failed_label}"
        claim = None
        attempts, retry_after = 0, None
        if cfg.claim_label in labels and comments is not None and now is not None:
            claim = claim_of(comments, now)
            attempts, retry_after = retry_record(markers_of(comments))
        elif held is not None:
            claim = Claim(held.holder, since=held.updated_at)
        return SnapshotItem(
            id=key, title=str(f.get("summary") or ""), url=f"{self.client.server}/browse/{key}",
            labels=labels,
            priority=self._priority(f.get("priority")),
            created=parse_jira_time(str(f["created"])) if f.get("created") else None,
            parent=str(parent["key"]) if isinstance(parent, dict) and parent.get("key") else None,
            children=children, blockers=blockers, failed=failed, claim=claim,
            attempts=attempts, retry_after=retry_after,
            gates=self._gates.of(key, comments, labels) if comments is not None else (),
            ignored=self.markers.ignored_on(key.upper()) if comments is not None else (),
            extra=self._extra(key, f))

    @staticmethod
    def _extra(key: str, f: Mapping[str, Any]) -> dict[str, Any]:
        """The item's `extra`: its key, status name and (`want_bodies`) description text."""
        extra: dict[str, Any] = {"key": key, "status": str((f.get("status") or {}).get("name")
                                                           or "")}
        body = description_text(f.get("description"))
        if body:
            extra["body"] = body
        return extra

    def _is_type(self, link_type: Any) -> bool:
        if not isinstance(link_type, dict):
            return False
        want = self.config.link_type.strip().lower()
        return want in (str(link_type.get("name") or "").lower(), str(link_type.get("id") or ""))

    def _priority(self, priority: Any) -> int | None:
        if not isinstance(priority, dict):
            return None
        if self._order:
            return self._order.get(str(priority.get("name") or "").lower(), len(self._order))
        pid = str(priority.get("id") or "")
        return int(pid) if pid.isdigit() else None

    def state_of(self, other: Mapping[str, Any]) -> BlockerState:
        """Done or open from a linked issue's inline status; looked up when it is missing. An
        issue this process settled as done (with no success transition) is done."""
        with self._lock:
            if str(other.get("key")) in self._done_here:
                return "done"
        status = (other.get("fields") or {}).get("status")
        if isinstance(status, dict):
            cat = (status.get("statusCategory") or {}).get("key")
            if cat is None and status.get("id") is not None:
                cat = self._category(str(status["id"]))
            if cat is not None:
                return "done" if cat == "done" else "open"
        return self._lookup(str(other["key"]))

    def _category(self, status_id: str) -> str | None:
        with self._lock:
            if status_id in self._categories:
                return self._categories[status_id]
        data = self.client.get(f"/status/{status_id}", need="read statuses").data
        cat = ((data or {}).get("statusCategory") or {}).get("key")
        if cat is not None:
            with self._lock:
                self._categories[status_id] = str(cat)
        return str(cat) if cat is not None else None

    def _lookup(self, key: str) -> BlockerState:
        with self._lock:
            cached = self._refs.get(key)
        if cached in _FINAL:
            return cached
        try:
            data = self.client.get(f"/issue/{key}", {"fields": "status"}).data
        except JiraHTTPError as exc:
            if exc.status == 404:
                state: BlockerState = "missing"
            elif exc.status in (401, 403):
                state = "inaccessible"
            else:
                raise
        else:
            status = ((data or {}).get("fields") or {}).get("status")
            state = self.state_of({"key": key, "fields": {"status": status}}) \
                if isinstance(status, dict) and status else "open"
        with self._lock:
            self._refs[key] = state
        return state

    def comments(self, key: str) -> tuple[list[Comment], datetime]:
        """An issue's comments (oldest first) as the pool may trust them (`kit.markers`:
        markers by others left out), and the server's time of the listing."""
        out: list[Comment] = []
        start = 0
        now: datetime | None = None
        while True:
            reply = self.client.get(f"/issue/{key}/comment",
                                    {"orderBy": "created", "startAt": start, "maxResults": 100},
                                    need="read comments")
            now = now or reply.date
            data = reply.data or {}
            page = data.get("comments") or []
            if page and self.client.is_cloud:  # the markers are comment properties there
                page, listed = self._with_properties(page)
                now = listed or now
            out.extend(c for raw in page if (c := _comment(raw)) is not None)
            start += len(data.get("comments") or [])
            total = data.get("total")
            if not page or not isinstance(total, int) or start >= total:
                return self.markers.read(key.upper(), out).comments, now or datetime.now(UTC)

    def _with_properties(self, page: list[Any]) -> tuple[list[Any], datetime | None]:
        """The same comments with their properties (`POST /comment/list?expand=properties`, up
        to 1,000 ids a call), and the server time of that answer."""
        ids = [int(c["id"]) for c in page if isinstance(c, dict) and str(c.get("id")).isdigit()]
        reply = self.client.request("POST", "/comment/list", params={"expand": "properties"},
                                    body={"ids": ids}, need="read comments")
        values = (reply.data or {}).get("values") if isinstance(reply.data, dict) else None
        if not isinstance(values, list):
            return page, None
        values.sort(key=lambda c: (str(c.get("created")), int(c.get("id") or 0)))
        return values, reply.date

    def myself(self, *, fresh: bool = False) -> dict[str, Any]:
        """jr2's own account (`GET /myself`, once; `fresh`: read again, e.g. for its time
        zone, which a person may change while a pool runs)."""
        if fresh:
            with self._lock:
                self._me = None
        return self._myself()

    def _myself(self) -> dict[str, Any]:
        if self._me is None:
            data = self.client.get("/myself", need="read its own account").data
            self._me = data if isinstance(data, dict) else {}
        return self._me

    def ignored_markers(self, key: str) -> tuple[Ignored, ...]:
        """The markers the latest listing of `key`'s thread left out (`kit.markers`)."""
        return self.markers.ignored_on(key.upper())

    def identity(self) -> list[str]:
        """The pool's own account as comment authors name it (`GET /myself`, once): its
        `accountId` (Cloud) or `name` (Data Center)."""
        me = self._myself()
        return [str(me[k]) for k in ("accountId", "name") if me.get(k)]

    def _is_me(self, person: Any) -> bool:
        if not isinstance(person, dict):
            return False
        me = self._myself()
        return any(person.get(k) is not None and person.get(k) == me.get(k)
                   for k in ("accountId", "name", "key"))

    # -- claims ---------------------------------------------------------------------------------

    def _claimable(self, key: str) -> bool:
        """After winning: is the issue still open, not failed, and not a person's?"""
        data = self.client.get(f"/issue/{key}", {"fields": "status,labels,assignee"}).data
        f = (data or {}).get("fields") or {}
        cat = ((f.get("status") or {}).get("statusCategory") or {}).get("key")
        if cat == "done" or self.config.failed_label in (f.get("labels") or []):
            return False
        assignee = f.get("assignee")
        return not assignee or self._is_me(assignee)

    def parked(self, key: str) -> bool:
        """A parked issue keeps the claim label (see `park`): is it there now?"""
        data = self.client.get(f"/issue/{key}", {"fields": "labels"}).data
        return self.config.claim_label in (((data or {}).get("fields") or {}).get("labels") or [])

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        """People win, in one search (`key in (<held keys>)` inside the scope; an issue this
        process holds is judged without listing its comments). An issue missing from it is
        confirmed first (Jira search is eventually consistent: a missing issue is no proof it
        left): a direct read (done, failed, a person's?), then, when it is still open and ours,
        one search of that key in the filter, read consistently (`_selects_now`): a person may
        have edited it out of the filter."""
        keys = set(item_ids)
        if not keys:
            return {}
        found: list[dict[str, Any]] | None = None
        if len(keys) <= MAX_KEYS:
            try:
                found = self.client.search(f"{scope_where(self.config.jql)} AND "
                                           f"{keys_clause(keys)}")
            except JiraHTTPError as exc:  # refused (a held issue deleted?): read in full
                if exc.status != 400:
                    raise
        if found is None:
            taken = super().watch(item_ids, holder)
        else:
            by_id = {it.id: it for issue in found if (it := self.item_of(issue, own=True))}
            taken = {k: why for k in item_ids if (why := taken_back(by_id.get(k), holder))}
        for key in [k for k, why in taken.items() if why == GONE]:
            try:
                if not self._claimable(key):
                    continue
                if self._selects_now(key):
                    del taken[key]  # open, not failed, not a person's, in scope: the search lagged
                else:  # a person edited it out of the filter (relabelled, moved, ...)
                    taken[key] = OUT_OF_SCOPE
            except SourceHTTPError as exc:
                if exc.status not in (404, 410):
                    raise
        return taken

    def settle(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        try:
            super().settle(item_id, holder, outcome, attempt)
        finally:
            self._deltas.note(item_id)

    def finish(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        self._writable()
        name = self.config.on_success_transition
        label = self.config.failed_label

        def finish() -> None:
            if name:
                self._transition(item_id, name, strict=True)

        done = self.claims.finish(
            item_id, holder, outcome, on_done=finish,
            on_failed=lambda: self._labels(item_id, add=label),
            retry_hint=f"Remove the label {label} to offer it again.", attempt=attempt)
        if done and not name:
            with self._lock:
                self._done_here.add(item_id)

    def park(self, item_id: str, holder: str, request: ApprovalRequest) -> None:
        """Park the issue awaiting approval (`jr2_sources.capabilities.approvals.policy`): the claim
        comment becomes a `jr2:gate` marker saying how to answer, and the claim label stays (as
        while a retry waits): that is how every pool finds the gate again. One write."""
        self._writable()
        self._guard(item_id)
        held = self.claims.take(item_id, holder)
        if held is None:
            return
        name, why = request.name, f": {request.reason}" if request.reason else ""
        text = (f"jr2: awaiting approval of {name}{why}\n\nSomeone who may edit this issue "
                f"answers with a comment /jr2 approve {name} or /jr2 reject {name} REASON.")
        try:
            self.claims.settle(held, "gate", {"gate": name, "reason": request.reason}, text,
                               None, keep_mark=True)
        finally:  # a comment edit need not move `updated`: the next delta reads it again
            self._deltas.note(item_id)

    def answer_approval(self, item_id: str, name: str, status: ApprovalStatus,
                    reason: str | None = None, by: str | None = None) -> bool:
        """Record an answer given through jr2 (`jr2_sources.capabilities.approvals.policy.answer`:
        the dashboard) as a `jr2:answer` comment, when the gate awaits one; False otherwise."""
        self._writable()
        self._guard(item_id)
        try:
            return record_answer(self, item_id, name, status, reason, by,
                                 lambda who: self._gates.can_edit(who, item_id))
        finally:
            self._deltas.note(item_id)

    # -- writes ---------------------------------------------------------------------------------

    # -- the comment thread (for jr2_sources.kit.comment_claims) -----------------------------------

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        self._writable()
        if not item.in_scope:
            raise ItemError(f"{self.name}: {item.id} is outside the JQL scope; not claimed")
        try:
            if self._moving and not self._selects_now(item.id):
                # the filter stopped selecting it without a change a delta could see: lost,
                # and the next delta reads it again (`note`) and drops it from the Ready-set
                log.info("%s: %s left the JQL scope since it was read; not claimed",
                         self.name, item.id)
                return False
            self._guard(item.id)
            return self.claims.claim(item.id, holder, lease, item.attempts, item.gates)
        finally:
            self._deltas.note(item.id)

    def _comment_body(self, key: str, body: str) -> dict[str, Any]:
        """A comment's JSON: the marker (signed with a marker key) in the body (Data Center)
        or in a property (Cloud)."""
        body = self.markers.seal(key.upper(), body)
        if not self.client.is_cloud:
            return {"body": body}
        text, props = markers.split(body)
        return {"body": text, "properties": props} if props else {"body": text}

    def post_comment(self, key: str, body: str) -> int | None:
        self._guard(key)
        posted = self.client.request("POST", f"/issue/{key}/comment",
                                     body=self._comment_body(key, body), need=_W_COMMENTS)
        return int(posted.data["id"]) if isinstance(posted.data, dict) else None

    def list_comments(self, key: str) -> tuple[list[Comment], datetime]:
        return self.comments(key)

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        """Renewals and outcome markers: watchers are not notified (`notifyUsers=false`)."""
        self._guard(key)
        try:
            reply = self.client.request("PUT", f"/issue/{key}/comment/{comment_id}",
                                        params={"notifyUsers": "false"},
                                        body=self._comment_body(key, body),
                                        need=_W_COMMENTS)
        except JiraHTTPError as exc:
            if exc.status == 404:
                return None
            raise
        return parse_jira_time(str(reply.data["updated"]))

    def still_to_do(self, key: str, found: list[Marker]) -> bool:
        if not self.config.on_success_transition and any(mk.kind == "done" for mk in found):
            with self._lock:  # done before and left open on purpose: not work, from now on
                self._done_here.add(key)
            return False
        return self._claimable(key)

    def mark_claimed(self, key: str) -> None:
        self._labels(key, add=self.config.claim_label)
        if self.config.assign:
            self._assign(key)
        if self.config.in_progress_transition:
            self._transition(key, self.config.in_progress_transition, strict=False)

    def unmark(self, key: str) -> None:
        self._labels(key, remove=self.config.claim_label)

    def _labels(self, key: str, *, add: str | None = None, remove: str | None = None) -> None:
        self._guard(key)
        ops = [{"add": add}] if add else [{"remove": remove}]
        self._echoes.expect(key, "labels", f"+{add}" if add else f"-{remove}")
        self.client.request("PUT", f"/issue/{key}", body={"update": {"labels": ops}},
                            need=_W_ISSUES)

    def _assign(self, key: str) -> None:
        self._guard(key)
        me = self._myself()
        self._echoes.expect(key, "assignee", "*")
        who = {"accountId": me["accountId"]} if me.get("accountId") else {"name": me.get("name")}
        self.client.request("PUT", f"/issue/{key}/assignee", body=who,
                            need="assign issues (Assign Issues)")

    def _transition(self, key: str, name: str, *, strict: bool) -> None:
        data = self.client.get(f"/issue/{key}/transitions", need="read transitions").data or {}
        options = data.get("transitions") or []
        want = name.strip().lower()
        match = next((t for t in options
                      if str(t.get("name", "")).lower() == want
                      or str((t.get("to") or {}).get("name", "")).lower() == want), None)
        if match is None:
            names = ", ".join(str(t.get("name")) for t in options) or "none"
            msg = f"{self.name}: {key} has no transition {name!r} now (available: {names})"
            if strict:
                raise SourceError(msg)
            log.warning("%s", msg)
            return
        self._guard(key)
        self._echoes.expect(key, "status", str((match.get("to") or {}).get("name") or ""))
        self.client.request("POST", f"/issue/{key}/transitions",
                            body={"transition": {"id": str(match["id"])}},
                            need="transition issues (Transition Issues)")

    def delete_comment(self, key: str, comment_id: int) -> None:
        self._guard(key)
        try:
            self.client.request("DELETE", f"/issue/{key}/comment/{comment_id}",
                                need=_W_COMMENTS)
        except JiraHTTPError as exc:
            if exc.status != 404:
                raise

    # -- the dashboard issue -------------------------------------------------------------------

    def dashboard(self, issue: str | int) -> Any:
        """The issue `issue` (a key) as the dashboard (`board.py`; read-only on Data Center)."""
        return JiraBoard(self, issue)

    # -- wake -----------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Verify a Jira webhook delivery and say whether it can change the Ready-set."""
        if secret and not verify_signature(secret, body, header(headers, "X-Hub-Signature")):
            return Verdict(401, False, "missing or bad X-Hub-Signature")
        try:
            data = json.loads(body)
        except ValueError:
            return Verdict(400, False, "the body is not JSON")
        if not isinstance(data, dict):
            return Verdict(400, False, "the body is not a JSON object")
        if self._deduper.seen(header(headers, "X-Atlassian-Webhook-Identifier")):
            return Verdict(200, False, "duplicate delivery")
        with self._lock:
            projects = self._projects
        wake, why = wakes(data, projects=projects, echoes=self._echoes)
        marks = marked_by(data)
        if wake or any(self._deltas.knows(i) for i in (*marks["ids"], *marks["deleted_ids"])):
            self._deltas.mark(**marks)  # (an issue moved to another project: read it again)
        return Verdict(200, wake, why)

    def close(self) -> None:
        self.client.close()
