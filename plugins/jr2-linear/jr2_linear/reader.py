"""Reading a Linear team: the Ready-set's snapshot in pages, and the issues a delta rebuilds.

Design notes
------------
* Set-up (`Jr2Setup`, once): the key's own user (`viewer`: the identity jr2 trusts by default)
  and the team with its workflow states (the done state a success moves an issue to).
* A full reading is `Jr2Issues` pages of `PAGE` issues with blockers (`inverseRelations` of
  type `blocks`), sub-issues (`children`, `parent`) and jr2's marker attachments inline: a fresh
  Ready-set of N issues costs 1 + ceil(N / PAGE) requests, plus one `Jr2IssueMore` for an issue
  with more than `INLINE` children or blockers, and one `Jr2Markers` for one with more than
  `MARKERS_INLINE` markers.
* States: a reference whose state type is `completed` is done; `canceled` is done too (it will
  never be completed, so it holds nothing back, as GitHub's "closed as not planned"),
  and the dependent lists it in `extra.canceled_blockers`; a trashed issue is `missing`; any
  other type is open.
* Deltas: `delta.py` (`snapshot` hands it what it listed).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jr2_core import UsageError
from jr2_sources import BlockerRef, BlockerState, Snapshot, SnapshotItem
from jr2_sources.kit import claims
from jr2_sources.kit.markers import Ignored, MarkerTrust

from . import operations as ops
from .client import Answer, LinearClient
from .config import LinearConfig
from .markers import parse_time, split


@dataclass
class Team:
    """The team and the key's own user, read once."""

    id: str
    key: str
    viewer_id: str
    viewer_name: str
    viewer_email: str
    done_state: str | None
    states: dict[str, str] = field(default_factory=dict)


def ref_state(node: dict[str, Any] | None) -> BlockerState:
    """A referenced issue's state as a blocker: `done`, `missing` or `open` (module notes)."""
    if not node or node.get("trashed"):
        return "missing"
    kind = (node.get("state") or {}).get("type")
    return "done" if kind in ("completed", "canceled") else "open"


def _canceled(node: dict[str, Any]) -> bool:
    return (node.get("state") or {}).get("type") == "canceled" and not node.get("trashed")


class IssueReader:
    """Reads one team's issues into Snapshot items (module notes)."""

    def __init__(self, config: LinearConfig, client: LinearClient, *,
                 markers: MarkerTrust, name: str) -> None:
        self.config = config
        self.client = client
        self.markers = markers
        self.name = name
        self._team: Team | None = None
        self._lock = threading.Lock()
        self.ids: dict[str, tuple[str, str]] = {}  # identifier -> (Linear id, URL)
        self.marker_ids: dict[int, str] = {}  # the protocol's comment id -> attachment id
        self.teams: set[str] = {config.target}  # teams whose changes a delta asks for

    # -- set-up ---------------------------------------------------------------------------------

    def team(self) -> Team:
        """The team and the viewer (one request, the first time)."""
        if self._team is None:
            ans = self.client.run("Jr2Setup", ops.SETUP, {"team": self.config.target})
            nodes = ans.data["teams"]["nodes"]
            if not nodes:
                raise UsageError(f"{self.name}: no team with the key {self.config.target} "
                                 "(or the key cannot see it)")
            t = nodes[0]
            states = sorted(t["states"]["nodes"], key=lambda s: s["position"])
            done = next((s["id"] for s in states if s["type"] == "completed"), None)
            viewer = ans.data["viewer"]
            self._team = Team(t["id"], t["key"], viewer["id"], viewer["name"],
                              viewer.get("email") or "", done,
                              {s["id"]: s["type"] for s in states})
        return self._team

    # -- one issue ------------------------------------------------------------------------------

    def remember(self, node: dict[str, Any]) -> None:
        with self._lock:
            self.ids[node["identifier"]] = (node["id"], node["url"])

    def keep(self, marker_ids: dict[int, str]) -> None:
        """Remember the attachment ids of markers by the protocol's comment ids."""
        with self._lock:
            self.marker_ids.update(marker_ids)

    def markers_of(self, node: dict[str, Any]
                   ) -> tuple[list[claims.Comment], list[Ignored]]:
        """The issue's markers that count (all of them: read again when more than fit
        inline), and the ones `markers` ignored."""
        conn = node.get("attachments") or {}
        nodes = conn.get("nodes") or []
        if (conn.get("pageInfo") or {}).get("hasNextPage"):
            nodes = self.read_markers(node["id"])[0]
        comments, ids, ignored = split(nodes, self.markers, node["identifier"])
        self.keep(ids)
        return comments, ignored

    def read_markers(self, issue_id: str) -> tuple[list[dict[str, Any]], datetime]:
        """Every marker attachment of one issue, and the server's time of the reading."""
        ans = self.client.run("Jr2Markers", ops.MARKERS, {"id": issue_id})
        return ans.data["issue"]["attachments"]["nodes"], answer_time(ans)

    def item(self, node: dict[str, Any], now: datetime) -> SnapshotItem:
        """One issue node as a Snapshot item, at server time `now`."""
        self.remember(node)
        children_nodes = node["children"]["nodes"]
        relations = node["inverseRelations"]["nodes"]
        if (node["children"]["pageInfo"]["hasNextPage"]
                or node["inverseRelations"]["pageInfo"]["hasNextPage"]):
            more = self.client.run("Jr2IssueMore", ops.MORE, {"id": node["id"]}).data["issue"]
            children_nodes = more["children"]["nodes"]
            relations = more["inverseRelations"]["nodes"]
        blockers, canceled = [], []
        for rel in relations:
            if rel["type"] != "blocks":
                continue
            src = rel["issue"]
            blockers.append(BlockerRef(src["identifier"], ref_state(src)))
            if _canceled(src):
                canceled.append(src["identifier"])
            team = src["identifier"].rsplit("-", 1)[0]
            if team != self.config.target:
                with self._lock:
                    self.teams.add(team)
        children = [BlockerRef(c["identifier"], ref_state(c)) for c in children_nodes]
        comments, _ignored = self.markers_of(node)
        found = claims.markers(comments)
        spent, after = claims.retry_record(found)
        failed = _final_failure(found)
        extra: dict[str, Any] = {"linear_id": node["id"]}
        if canceled:
            extra["canceled_blockers"] = canceled
        priority = int(node["priority"])
        return SnapshotItem(
            id=node["identifier"], title=node["title"], url=node["url"],
            labels=[lb["name"] for lb in node["labels"]["nodes"]],
            priority=priority if priority and self.config.priority_order else None,
            created=parse_time(node["createdAt"]),
            parent=(node.get("parent") or {}).get("identifier"),
            children=children, blockers=blockers, failed=failed,
            claim=claims.claim_of(comments, now), branch=node.get("branchName"),
            extra=extra, attempts=spent, retry_after=after,
            ignored=self.markers.ignored_on(node["identifier"]))

    # -- whole readings ---------------------------------------------------------------------------

    def snapshot(self, skip: set[str]
                 ) -> tuple[Snapshot, datetime, dict[str, dict[str, Any]]]:
        """Every issue in scope, in pages of `PAGE` (module notes); the server's time when the
        reading began, and every issue listed by identifier (what a delta starts from)."""
        self.team()
        started: datetime | None = None
        items: list[SnapshotItem] = []
        after: str | None = None
        listed: dict[str, dict[str, Any]] = {}
        while True:
            ans = self.client.run("Jr2Issues", ops.ISSUES, {
                "filter": self.config.scope(), "first": ops.PAGE, "after": after})
            conn = ans.data["issues"]
            now = answer_time(ans)
            started = started or now
            for node in conn["nodes"]:
                listed[node["identifier"]] = node
                if node["identifier"] not in skip:
                    items.append(self.item(node, now))
            if not conn["pageInfo"]["hasNextPage"]:
                break
            after = conn["pageInfo"]["endCursor"]
        return Snapshot(source=self.name, items=items), started, listed


def _final_failure(found: list[claims.Marker]) -> str | None:
    """The failure of the newest settled marker when it is final (not an attempt to retry)."""
    for mk in reversed(found):
        if mk.kind == "done":
            return None
        if mk.kind == "failed":
            if mk.fields.get("retry_after"):
                return None
            return str(mk.fields.get("reason") or "failed")
    return None


def answer_time(ans: Answer) -> datetime:
    """The server's time of an answer (this machine's when it has no `Date`)."""
    return ans.date or datetime.now(UTC)
