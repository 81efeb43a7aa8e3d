"""`LinearTracker`: the `Tracker` of `linear:TEAM`, claims by marker attachments.

Claim protocol (Linear has no compare-and-set on an issue's fields)
-------------------------------------------------------------------
`jr2_sources.kit.claims`, run by `CommentClaims`, over the issue's marker attachments
(`markers.py`): look at the markers first (`Jr2Markers`) and give up when a live claim holds
the issue; else create a claim marker (`attachmentCreate`, metadata `{"jr2": "claim", holder,
lease, nonce}`), read the markers again with the server's `Date`, and hold the issue only if
ours is the live claim that sorts first by (`createdAt`, id); a loser deletes its marker.
A winner re-reads the issue (`Jr2Check`: still open, still in the scope, not settled by a pool
just before). Renewing updates the marker (its `updatedAt` moves, server time); a renewal after
the lease ran out has lost the issue. Settling re-checks the claim, moves the issue to the
team's first `completed` state (`issueUpdate`; only if it is still open: a state a person set
is never overwritten), and turns the marker into `done` or `failed` (the failed mark itself: a
person deletes that attachment to offer the issue again). A released claim's marker is deleted,
so an issue keeps few markers. Markers are read through the kit's marker reader (`markers`):
only those created by a trusted user count (the key's own, Linear's `viewer`, and `--trust`),
with `JR2_MARKER_KEY` only signed ones (jr2 signs what it writes); a stranger's changes nothing
and shows on the item's entry as reason `ignored_marker`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from jr2_core import Outcome, UsageError
from jr2_sources import (
    Attempt,
    Delta,
    ItemError,
    ReadsDeltas,
    Snapshot,
    SnapshotItem,
    SourceEnv,
    TakesWebhooks,
    TrustsMarkers,
)
from jr2_sources.capabilities.webhooks import DeliveryDeduper, Verdict
from jr2_sources.kit import claims
from jr2_sources.kit.comment_claims import ClaimsByComment, CommentClaims
from jr2_sources.kit.markers import MarkerTrust, marker_key
from jr2_sources.kit.retry import RetryPolicy

from . import operations as ops
from .client import Answer, LinearClient, LinearHTTPError, api_url, resolve_auth
from .config import LinearConfig
from .delta import LinearChanges
from .markers import comment_id, from_body, metadata, parse_time, split
from .reader import IssueReader, ref_state
from .webhook import receive

GONE = "a person closed, removed or moved it"
OUT_OF_SCOPE = "it was moved out of this pool's scope"
CLAIM_REMOVED = "jr2's claim mark was removed"

class LinearTracker(ReadsDeltas, TakesWebhooks, TrustsMarkers, ClaimsByComment):
    """A `Tracker` over one Linear team's issues (see the module notes)."""

    tracker: ClassVar[str] = "Linear"
    spread_claims: ClassVar[bool] = True

    def __init__(self, config: LinearConfig, env: SourceEnv, *,
                 client: LinearClient | None = None) -> None:
        self.config = config
        self.name = f"linear:{config.target}"
        self.read_only = env.read_only
        if client is None:
            credential, bearer = resolve_auth()
            client = LinearClient(api_url(), credential, bearer=bearer, label=self.name,
                                  write_spacing=config.write_spacing,
                                  policy=RetryPolicy(budget=config.retry_budget))
        self.client = client
        self.markers = MarkerTrust(self.name, self.identity, also=config.trust,
                                   key=marker_key(), warn=not env.read_only)
        self.reader = IssueReader(config, client, markers=self.markers, name=self.name)
        self.deltas = LinearChanges(self.reader)
        self.claims = CommentClaims(self, look_first=True, spread=1.0)
        self._lock = threading.Lock()
        self._done_here: set[str] = set()
        self._deliveries = DeliveryDeduper()
        self._nonces: set[str] = set()

    # -- trust ------------------------------------------------------------------------------------

    def identity(self) -> list[str]:
        """The accounts of the key's own user (Linear's `viewer`): its email and its id, the
        forms a marker's author takes (`markers.py`)."""
        team = self.reader.team()
        return [a for a in (team.viewer_email, team.viewer_id) if a]

    # -- reading ----------------------------------------------------------------------------------

    def _ids(self, key: str) -> tuple[str, str]:
        """The Linear id and URL of an issue of this team (read once if not seen yet)."""
        team = key.rsplit("-", 1)[0] if "-" in key else ""
        if team.upper() != self.config.target or not key.rsplit("-", 1)[-1].isdigit():
            raise UsageError(f"{self.name}: {key} is not an issue of team {self.config.target}")
        known = self.reader.ids.get(key)
        if known is None:
            self._check(key)
            known = self.reader.ids[key]
        return known

    def _check(self, key: str) -> tuple[dict[str, Any] | None, bool]:
        """The issue now (None: deleted) and whether the scope selects it (one request: the
        issue by its identifier, which Linear's `issue(id:)` takes, and the scope narrowed to
        the issue's number)."""
        number = float(key.rsplit("-", 1)[-1])
        scoped = {"and": [self.config.scope(), {"number": {"eq": number}}]}
        try:
            ans = self.client.run("Jr2Check", ops.CHECK, {"id": key, "scoped": scoped})
        except LinearHTTPError as exc:
            if "not found" in str(exc).lower():
                return None, False
            raise
        issue = ans.data["issue"]
        if issue is None or issue.get("trashed"):
            return None, False
        self.reader.remember(issue)
        return issue, bool(ans.data["issues"]["nodes"])

    def done_here(self) -> set[str]:
        with self._lock:
            return set(self._done_here)

    def snapshot(self) -> Snapshot:
        self.deltas.window.begin()  # webhook marks from now on outlive this reading
        snap, began, listed = self.reader.snapshot(self.done_here())
        self.deltas.start(began, listed.items(), snap.items)
        return snap

    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """One full snapshot, then deltas (`delta.py`); `full`: a resync."""
        if not full:
            delta = self.deltas.read(self.done_here())
            if delta is not None:
                return delta
        return self.snapshot()

    def wrote(self, key: str) -> None:
        """A write of this process about `key`: read it by id in the next delta."""
        known = self.reader.ids.get(key)
        if known is not None:
            self.deltas.window.mark([known[0]])

    # -- the comment thread of the claim protocol (markers as attachments) -------------------

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        lid, _url = self._ids(key)
        nodes, now = self.reader.read_markers(lid)
        comments, ids, _ignored = split(nodes, self.markers, key.upper())
        self.reader.keep(ids)
        return comments, now

    def post_comment(self, key: str, body: str) -> int | None:
        lid, url = self._ids(key)
        kind, fields, text = from_body(body)
        fields = self.markers.sign(key.upper(), kind, fields)  # when a marker key is set
        nonce = str(fields.get("nonce") or "")
        self._nonces.add(nonce)
        ans = self._write(key, "Jr2MarkerCreate", ops.CREATE_MARKER, {"input": {
            "issueId": lid, "url": f"{url}{ops.MARKER_TAG}{nonce}", "title": text,
            "metadata": metadata(kind, fields)}})
        node = ans.data["attachmentCreate"]["attachment"]
        cid = comment_id(parse_time(node["createdAt"]), node["id"])
        self.reader.keep({cid: node["id"]})
        return cid

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        aid = self.reader.marker_ids.get(comment_id)
        if aid is None:
            return None
        kind, fields, text = from_body(body)
        fields = self.markers.sign(key.upper(), kind, fields)
        try:
            if kind == "released":  # a released claim says nothing: delete it
                gone: Answer = self._write(key, "Jr2MarkerDelete", ops.DELETE_MARKER,
                                           {"id": aid})
                return gone.date
            ans = self._write(key, "Jr2MarkerUpdate", ops.UPDATE_MARKER, {
                "id": aid, "input": {"title": text, "metadata": metadata(kind, fields)}})
        except LinearHTTPError as exc:
            if "not found" in str(exc).lower():
                return None
            raise
        return parse_time(ans.data["attachmentUpdate"]["attachment"]["updatedAt"])

    def delete_comment(self, key: str, comment_id: int) -> None:
        aid = self.reader.marker_ids.get(comment_id)
        if aid is None:
            return
        try:
            self._write(key, "Jr2MarkerDelete", ops.DELETE_MARKER, {"id": aid})
        except LinearHTTPError as exc:
            if "not found" not in str(exc).lower():
                raise

    def still_to_do(self, key: str, found: list[claims.Marker]) -> bool:
        """Still open, in scope, and not settled by a pool just before (`found`)."""
        issue, in_scope = self._check(key)
        if issue is None or (issue["state"] or {}).get("type") not in self.config.state_type:
            self.wrote(key)
            return False
        if not in_scope:
            self.wrote(key)
            return False
        for mk in reversed(found):
            if mk.kind == "done":
                with self._lock:  # done before and left open on purpose: not work any more
                    self._done_here.add(key)
                return False
            if mk.kind == "failed":
                return bool(mk.fields.get("retry_after"))
        return True

    def parked(self, key: str) -> bool:
        return False  # no approval gates on this tracker

    def mark_claimed(self, key: str) -> None:
        """Nothing more: the claim marker is the visible mark."""

    def unmark(self, key: str) -> None:
        """Nothing: the marker itself becomes the outcome."""

    def _write(self, key: str, name: str, document: str, variables: dict[str, Any]) -> Any:
        try:
            return self.client.run(name, document, variables, need="write issues")
        except LinearHTTPError as exc:
            if exc.code in ("INVALID_INPUT", "FORBIDDEN"):
                raise ItemError(f"{self.name}: {key}: {exc}") from None
            raise

    # -- settle ---------------------------------------------------------------------------------

    def mark_done(self, key: str) -> None:
        """Move the issue to the team's first completed state, unless a person already moved
        it out of the open states (never overwrite what a person set)."""
        if self.config.on_success != "complete":
            return
        issue, _ = self._check(key)
        if issue is None or (issue["state"] or {}).get("type") in ("completed", "canceled"):
            return
        done = self.reader.team().done_state
        if done is None:
            raise ItemError(f"{self.name}: team {self.config.target} has no completed state")
        self._write(key, "Jr2IssueMove", ops.MOVE, {"id": issue["id"],
                                                    "input": {"stateId": done}})

    def finish(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        self._writable()
        self._ids(item_id)
        try:
            if self.claims.finish(item_id, holder, outcome,
                                  on_done=lambda: self.mark_done(item_id),
                                  on_failed=lambda: None,
                                  retry_hint="Delete this attachment to offer it again.",
                                  attempt=attempt):
                with self._lock:
                    self._done_here.add(item_id)
        finally:
            self.wrote(item_id)

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        """The claim protocol (module notes); a lost claim's issue is read again by the next
        delta (another pool's marker need not move the issue's `updatedAt`)."""
        won = super().claim(item, holder, lease)
        if not won:
            self.wrote(item.id)
        return won

    def release(self, item_id: str, holder: str) -> None:
        try:
            super().release(item_id, holder)
        finally:
            self.wrote(item_id)

    # -- people win -----------------------------------------------------------------------------

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        """Which held issues a person took back: one `Jr2Held` per 25 held issues."""
        out: dict[str, str] = {}
        keys = [k for k in item_ids if k in self.reader.ids]
        for start in range(0, len(keys), ops.HELD_FIRST):
            chunk = keys[start:start + ops.HELD_FIRST]
            lids = [self.reader.ids[k][0] for k in chunk]
            ans = self.client.run("Jr2Held", ops.HELD, {
                "ids": lids, "scoped": {"and": [self.config.scope(), {"id": {"in": lids}}]}})
            now = ans.date or datetime.now().astimezone()
            held = {n["identifier"]: n for n in ans.data["held"]["nodes"]}
            scoped = {n["id"] for n in ans.data["scoped"]["nodes"]}
            for key, lid in zip(chunk, lids, strict=True):
                why = self._taken_back(held.get(key), lid in scoped, holder, now)
                if why is not None:
                    out[key] = why
        return out

    def _taken_back(self, node: dict[str, Any] | None, in_scope: bool, holder: str,
                    now: datetime) -> str | None:
        if node is None or ref_state(node) != "open":
            return GONE
        if not in_scope:
            return OUT_OF_SCOPE
        comments, _ignored = self.reader.markers_of(node)
        found = claims.markers(comments)
        for mk in reversed(found):
            if mk.kind == "failed" and not mk.fields.get("retry_after"):
                return "it was marked failed"
            if mk.kind in ("done", "failed", "claim"):
                break
        live = claims.holder_of(comments, now)
        if live is None:
            return CLAIM_REMOVED
        if live.holder != holder:
            return "another pool holds it now"
        return None

    # -- webhooks -------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Check a Linear delivery and say whether it can change this team's Ready-set."""
        verdict = receive(headers, body, secret, team_id=self._team_id(),
                          deduper=self._deliveries, own=self._nonces)
        if verdict.wake and verdict.touched:
            self.deltas.window.mark(verdict.touched)
        if verdict.wake and verdict.full:
            self.deltas.window.want_full(verdict.reason)
        return verdict

    def _team_id(self) -> str | None:
        try:
            return self.reader.team().id
        except Exception:
            return None

    def close(self) -> None:
        self.client.close()
