"""Reading a GitLab project into a `Snapshot`: the issues list, links, claims, failure marks.

* One list walk (`GET /projects/:id/issues?state=opened&order_by=created_at&sort=asc`, 100 a
  page, plus one list each for the claim and failure labels when `--label` narrows it), then
  issue links.
* Blockers are issue links (`GET .../links`): `is_blocked_by` blocks the issue read, `blocks`
  makes the linked issue wait; each entry carries its state (`closed` is done). With `detail`
  (the default) every listed issue's links are read; `--no-detail` reads only those with
  `blocking_issues_count` > 0.
* Blockers written in a description (`Depends on #12`, `blocked by group/other#3`) are looked up
  with one GET each: closed done, 404 missing, 401/403 inaccessible; final states cached.
* Only issues carrying the claim label have their notes read; leases are judged in server time.
* Child work items come from GraphQL (one query per 100 issues, with `detail`): `OPEN` an open
  child, `CLOSED` a done one; a GraphQL error or a 404 means no children, with one warning.

Design notes: docs/design/plugins.md.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from jr2_core import SourceError
from jr2_sources import BlockerRef, Claim, Snapshot, SnapshotItem
from jr2_sources.capabilities.approvals.policy import AWAITING_LABEL
from jr2_sources.kit import claims
from jr2_sources.kit.labeltracker import labels_of
from jr2_sources.kit.markers import MarkerTrust

from .approvals import ApprovalReader
from .client import GitLabClient, GitLabHTTPError
from .config import GitLabConfig
from .delta import GitLabChanges
from .refs import (
    body_refs,
    encode_project,
    item_id,
    parse_time,
    project_of_web_url,
    same_project,
    split_id,
)

State = Literal["open", "done", "missing", "inaccessible"]

log = logging.getLogger(__name__)

CHILDREN_QUERY = """\
query($fullPath: ID!, $iids: [String!], $first: Int, $after: String) {
  project(fullPath: $fullPath) {
    workItems(iids: $iids, first: $first) {
      nodes {
        iid
        widgets {
          ... on WorkItemWidgetHierarchy {
            hasChildren
            children(first: 100, after: $after) {
              pageInfo { hasNextPage endCursor }
              nodes { iid state webUrl }
            }
          }
        }
      }
    }
  }
}"""



class IssueReader:
    """Reads one project's issues for a `GitLabTracker` (GET requests only)."""

    def __init__(self, config: GitLabConfig, client: GitLabClient,
                 markers: MarkerTrust) -> None:
        self.config = config
        self.client = client
        self.project = config.target
        self.name = f"gitlab:{config.target}"
        self._priorities = config.priorities()
        self._refs: dict[str, State] = {}
        self._lock = threading.Lock()
        self._graphql = True  # False once /api/graphql answered 404
        self._warned = False
        self.began: datetime | None = None  # the server's time when the last full list began
        self.changes: GitLabChanges | None = None  # set by a tracker that reads deltas
        self.gates = ApprovalReader(client, config.target)  # --gate: who may answer (gates.py)
        self.markers = markers  # whose markers count (jr2's kit.markers): every listing
        self.gates.own = markers.own

    def issues_path(self, project: str | None = None) -> str:
        return f"/projects/{encode_project(project or self.project)}/issues"

    def notes_path(self, iid: int) -> str:
        return f"{self.issues_path()}/{iid}/notes"

    def _list(self) -> dict[int, dict[str, Any]]:
        cfg = self.config
        params: dict[str, Any] = {"state": "opened", "order_by": "created_at", "sort": "asc"}
        if cfg.label:
            params["labels"] = ",".join(cfg.label)
        found, first = self.client.get_all(self.issues_path(), params)
        self.began = first.date
        excluded = set(cfg.exclude_label)
        mine = {cfg.claim_label, cfg.failed_label}
        listed: dict[int, dict[str, Any]] = {}
        for issue in found:
            labels = set(labels_of(issue))
            if excluded & labels and not mine & labels:
                continue
            listed.setdefault(int(issue["iid"]), issue)
        if cfg.label:  # marked issues may be outside the filter
            for lab in (cfg.claim_label, cfg.failed_label):
                marked, _ = self.client.get_all(self.issues_path(),
                                                {"state": "opened", "labels": lab})
                for issue in marked:
                    listed.setdefault(int(issue["iid"]), issue)
        return listed

    def _is_done(self, issue: dict[str, Any]) -> bool:
        return issue.get("state") == "closed" or (
            self.config.done_label is not None and self.config.done_label in labels_of(issue))

    def _link_id(self, link: dict[str, Any], own_project_ids: set[int]) -> str:
        if link.get("project_id") in own_project_ids:
            return item_id(self.project, int(link["iid"]))
        parsed = project_of_web_url(link.get("web_url"))
        if parsed is not None:
            proj = self.project if same_project(parsed[0], self.project) else parsed[0]
            return item_id(proj, parsed[1])
        return f"project-{link.get('project_id')}#{link['iid']}"

    def snapshot(self, skip: set[str] | frozenset[str] = frozenset()) -> Snapshot:
        """The open issues in scope with blockers, claims and failure marks; ids in `skip`
        (done in this process) are left out."""
        if self.changes is not None:
            self.changes.window.begin()  # webhook marks from now on outlive this reading
        listed = self._list()
        own_ids = {int(i["project_id"]) for i in listed.values() if i.get("project_id")}
        blockers: dict[int, dict[str, State]] = {iid: {} for iid in listed}
        blocks: dict[int, list[str]] = {}
        for iid, issue in sorted(listed.items()):
            if not (self.config.detail or int(issue.get("blocking_issues_count") or 0) > 0):
                continue
            links, _ = self.client.get_all(f"{self.issues_path()}/{iid}/links",
                                           need="read issue links")
            me = item_id(self.project, iid)
            for link in links:
                if not isinstance(link, dict) or "iid" not in link:
                    continue
                other = self._link_id(link, own_ids)
                kind = link.get("link_type")
                if kind == "is_blocked_by":
                    blockers[iid][other] = "done" if self._is_done(link) else "open"
                elif kind == "blocks":
                    blocks.setdefault(iid, []).append(other)
                    proj, other_iid = split_id(other)
                    if same_project(proj, self.project) and other_iid in listed:
                        blockers[other_iid][me] = "done" if self._is_done(issue) else "open"
        children = self._children(listed, skip) if self.config.detail else {}
        items: list[SnapshotItem] = []
        for iid, issue in sorted(listed.items()):
            labels = labels_of(issue)
            ident = item_id(self.project, iid)
            if self._is_done(issue) or ident in skip:
                continue
            refs = dict(blockers[iid])
            for ref in body_refs(issue.get("description"), self.project, iid):
                if ref not in refs:
                    refs[ref] = self._ref_state(ref, listed)
            item = self._item(issue, labels, refs, blocks.get(iid, []))
            item.children = [BlockerRef(c, st) for c, st in children.get(iid, {}).items()]
            items.append(item)
        if self.changes is not None:
            self.changes.full_read(self.began, listed, items)
        return Snapshot(source=self.name, items=items, done_count=None)

    def listed(self, issue: dict[str, Any]) -> bool:
        """Would the full reading list this issue (the label filter and no excluded label, or
        one of jr2's marks)?"""
        cfg = self.config
        labels = set(labels_of(issue))
        mine = {cfg.claim_label, cfg.failed_label}
        return bool(mine & labels) or (set(cfg.label) <= labels
                                        and not set(cfg.exclude_label) & labels)

    def is_done(self, issue: dict[str, Any]) -> bool:
        """Closed, or carrying the done label: done as a blocker."""
        return self._is_done(issue)

    def build_items(self, issues: dict[int, dict[str, Any]], known: Mapping[int, dict[str, Any]],
                    skip: set[str] | frozenset[str]) -> list[SnapshotItem]:
        """Items for `issues` (open, listed) as the full reading builds them, each from its own
        links (exact with `detail`, which deltas need), its description's references judged
        against `known` (the open listed issues) and its child work items (one GraphQL query
        per 100 of them)."""
        children = self._children(dict(issues), skip)
        items = []
        for iid, issue in sorted(issues.items()):
            links, _ = self.client.get_all(f"{self.issues_path()}/{iid}/links",
                                           need="read issue links")
            own_ids = {int(issue["project_id"])} if issue.get("project_id") else set()
            refs: dict[str, State] = {}
            blocks: list[str] = []
            for link in links:
                if not isinstance(link, dict) or "iid" not in link:
                    continue
                other = self._link_id(link, own_ids)
                if link.get("link_type") == "is_blocked_by":
                    refs[other] = "done" if self._is_done(link) else "open"
                elif link.get("link_type") == "blocks":
                    blocks.append(other)
            for ref in body_refs(issue.get("description"), self.project, iid):
                if ref not in refs:
                    refs[ref] = self._ref_state(ref, known)
            item = self._item(issue, labels_of(issue), refs, blocks)
            item.children = [BlockerRef(c, st) for c, st in children.get(iid, {}).items()]
            items.append(item)
        return items

    def _warn(self, why: str) -> None:
        with self._lock:
            first, self._warned = not self._warned, True
        if first:
            log.warning("%s: child work items not read (%s); parents do not wait for them",
                        self.name, why)

    def _children(self, listed: dict[int, dict[str, Any]],
                  skip: set[str] | frozenset[str]) -> dict[int, dict[str, State]]:
        """Each listed issue's child work items (GraphQL hierarchy widget), one POST per 100
        issues, plus one per further 100 children of an issue that has more (the connection's
        `pageInfo`: GraphQL gives at most 100 nodes a page); {} for all of them when GraphQL is
        missing or answers an error."""
        out: dict[int, dict[str, State]] = {}
        iids = sorted(listed)
        more: list[tuple[int, str]] = []  # (iid, cursor) of children lists with another page
        batches: list[tuple[list[int], str | None]] = [
            (iids[i:i + 100], None) for i in range(0, len(iids), 100)]
        while batches or more:
            page, after = batches.pop(0) if batches else ([more[0][0]], more.pop(0)[1])
            nodes = self._children_page(page, after)
            if nodes is None:
                return {}
            for node in nodes:
                if not isinstance(node, dict) or not str(node.get("iid", "")).isdigit():
                    continue
                for widget in node.get("widgets") or []:
                    if not isinstance(widget, dict) or "children" not in widget:
                        continue
                    if widget.get("hasChildren") is False:
                        continue
                    kids = out.setdefault(int(node["iid"]), {})
                    conn = widget.get("children") or {}
                    for child in conn.get("nodes") or []:
                        ref = self._child_id(child)
                        if ref is None:
                            continue
                        kids[ref] = self._child_state(ref, child, listed, skip)
                    info = conn.get("pageInfo") or {}
                    if info.get("hasNextPage") and info.get("endCursor"):
                        more.append((int(node["iid"]), str(info["endCursor"])))
        return out

    def _children_page(self, iids: list[int], after: str | None) -> list[Any] | None:
        """The work item nodes of one children query; None (and a warning) when GraphQL is
        missing or answers an error."""
        if not self._graphql:
            return None
        try:
            resp = self.client.graphql(
                CHILDREN_QUERY, {"fullPath": self.project, "iids": [str(i) for i in iids],
                                 "first": len(iids), "after": after})
        except SourceError as exc:
            if isinstance(exc, GitLabHTTPError) and exc.status == 404:
                self._graphql = False
            self._warn(str(exc))
            return None
        data = resp.data if isinstance(resp.data, dict) else {}
        if data.get("errors") or not isinstance(data.get("data"), dict):
            errors = data.get("errors") or [{"message": "no data"}]
            msg = errors[0].get("message") if isinstance(errors[0], dict) else errors[0]
            self._warn(f"GraphQL error: {msg}")
            return None
        project = data["data"].get("project") or {}
        nodes = (project.get("workItems") or {}).get("nodes") or []
        return nodes if isinstance(nodes, list) else []

    def _child_id(self, child: Any) -> str | None:
        if not isinstance(child, dict) or not str(child.get("iid", "")).isdigit():
            return None
        parsed = project_of_web_url(child.get("webUrl"))
        if parsed is not None and not same_project(parsed[0], self.project):
            return item_id(parsed[0], int(child["iid"]))
        return item_id(self.project, int(child["iid"]))

    def _child_state(self, ref: str, child: dict[str, Any], listed: dict[int, dict[str, Any]],
                     skip: set[str] | frozenset[str]) -> State:
        if child.get("state") == "CLOSED" or ref in skip:
            return "done"
        project, iid = split_id(ref)
        if same_project(project, self.project) and iid in listed and self._is_done(listed[iid]):
            return "done"
        return "open"

    def held_item(self, issue: dict[str, Any], prev: SnapshotItem, own: Claim) -> SnapshotItem:
        """An issue this process holds (`own`, its claim as the Ready-set shows it), rebuilt for
        a delta without a request: its links, description references and children as last
        read (`prev`), the rest from the issue object (`delta.py`'s notes say why)."""
        item = self._item(issue, labels_of(issue), {}, list(prev.extra.get("blocks") or []),
                          own=own)
        item.blockers, item.children = list(prev.blockers), list(prev.children)
        item.attempts, item.retry_after = prev.attempts, prev.retry_after
        return item

    def _item(self, issue: dict[str, Any], labels: list[str], refs: dict[str, State],
              blocks: list[str], own: Claim | None = None) -> SnapshotItem:
        cfg = self.config
        iid = int(issue["iid"])
        prios = [self._priorities[lab] for lab in labels if lab in self._priorities]
        extra: dict[str, Any] = {"iid": iid}
        if issue.get("description"):
            extra["body"] = issue["description"]
        if blocks:
            extra["blocks"] = blocks
        tasks = issue.get("task_completion_status")
        if isinstance(tasks, dict) and tasks.get("count"):
            extra["task_completion_status"] = tasks
        failed = None
        claim = None
        comments: list[claims.Comment] | None = None
        now: datetime | None = None
        gated = AWAITING_LABEL in labels
        if own is not None:
            claim = own
        elif cfg.claim_label in labels or gated or (cfg.detail and cfg.failed_label in labels):
            comments, now = self.read_notes(iid)
        if cfg.failed_label in labels:
            reason = claims.last_failure(comments) if comments is not None else None
            failed = reason or f"marked {cfg.failed_label}"
        attempts, retry_after = 0, None
        if cfg.claim_label in labels and comments is not None and now is not None:
            claim = claims.claim_of(comments, now)
            attempts, retry_after = claims.retry_record(claims.markers(comments))
        return SnapshotItem(
            id=item_id(self.project, iid), title=str(issue.get("title") or ""),
            url=issue.get("web_url"), labels=labels,
            priority=min(prios) if prios else None,
            created=parse_time(issue["created_at"]) if issue.get("created_at") else None,
            blockers=[BlockerRef(ref, state) for ref, state in refs.items()],
            failed=failed, claim=claim, attempts=attempts, retry_after=retry_after,
            extra=extra, in_scope=cfg.selects(labels),
            gates=self.gates.of(comments, iid, labels) if gated and comments is not None
            else (),
            ignored=self.markers.ignored_on(item_id(self.project, iid))
            if comments is not None else ())

    def _ref_state(self, ref: str, listed: Mapping[int, dict[str, Any]]) -> State:
        project, iid = split_id(ref)
        if same_project(project, self.project) and iid in listed:
            return "done" if self._is_done(listed[iid]) else "open"
        with self._lock:
            cached = self._refs.get(ref.lower())
        if cached is not None:
            return cached
        state: State
        try:
            resp = self.client.get(f"{self.issues_path(project)}/{iid}")
        except GitLabHTTPError as exc:
            if exc.status in (404, 410):
                state = "missing"
            elif exc.status in (401, 403):
                state = "inaccessible"
            else:
                raise
        else:
            if not isinstance(resp.data, dict):
                state = "missing"
            else:
                state = "done" if self._is_done(resp.data) else "open"
        if state != "open":
            with self._lock:
                self._refs[ref.lower()] = state
        return state

    def read_notes(self, iid: int) -> tuple[list[claims.Comment], datetime]:
        """An issue's user notes (system notes left out) as the protocol's `Comment`s, as the
        pool may trust them (jr2's `kit.markers`: markers by others left out), and the
        server's time of the answer."""
        found, first = self.client.get_all(self.notes_path(iid),
                                           {"sort": "asc", "order_by": "created_at"},
                                           need="read issue notes")
        out = []
        for n in found:
            if not isinstance(n, dict) or n.get("system"):
                continue
            try:
                created = parse_time(n["created_at"])
                author = n.get("author")
                who = author.get("username") if isinstance(author, dict) else None
                if who and isinstance(author, dict) and isinstance(author.get("id"), int):
                    self.gates.ids[str(who)] = author["id"]
                out.append(claims.Comment(int(n["id"]), str(n.get("body") or ""), created,
                                          parse_time(n.get("updated_at") or n["created_at"]),
                                          str(who) if who else None))
            except (KeyError, TypeError, ValueError):
                continue
        return self.markers.read(item_id(self.project, iid), out).comments, (
            first.date or datetime.now(UTC))
