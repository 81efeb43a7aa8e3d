"""Reading a repository into a `Snapshot`: the issues list, blockers, sub-issues, claims.

* A full reading is ceil(N/100) conditional list pages (and the first again when there are
  more: `GitHubClient.get_open`), plus one list each for the claim and the failure label when
  a filter narrows the list (marked issues are always in the snapshot).
* Native blockers and sub-issues come as summaries; with `detail` (`jr2 ready`) each blocked
  issue's are read to name them. Blockers in bodies (`refs.body_refs`) outside the set are
  looked up (closed or `done_label`: done; 404/410/301 missing; 403 inaccessible).
* `--done-when merged` (`pulls.py`): an issue names jr2's branch for it and hands its blockers
  over (`extra.blockers`); `--stack` starts an item on an open, green blocker's PR head
  (`extra.stack_on`). `--on-success review`: `review_moves` settles ended reviews.
* Only issues with the claim label have their comments read; leases judged in server time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jr2_core.errors import ConfigError
from jr2_sources.capabilities.approvals.policy import AWAITING_LABEL
from jr2_sources.kit import claims
from jr2_sources.kit.labeltracker import labels_of
from jr2_sources.kit.markers import MarkerTrust
from jr2_sources.kit.rest import RestResponse
from jr2_sources.readyset import BlockerRef, BlockerState, Claim, Snapshot, SnapshotItem

from .approvals import ApprovalReader
from .client import GitHubClient, GitHubHTTPError
from .config import GitHubConfig
from .delta import GitHubChanges
from .feedback import FeedbackLoop
from .pulls import Links, PullReader, PullRequest, item_branch, judge
from .refs import (
    body_refs,
    id_of_issue_url,
    item_id,
    parse_time,
    repo_of_api_url,
    same_repo,
    split_id,
)

_FINAL: tuple[BlockerState, ...] = ("done", "missing")
log = logging.getLogger("jr2.github")


@dataclass(frozen=True)
class _Link:
    """One kind of native link: its endpoint under an issue, its summary field, its words."""

    path: str
    summary: str
    need: str
    one: str
    many: str
    fallback: str


_BLOCKED_BY = _Link("dependencies/blocked_by", "issue_dependencies_summary",
                    "read issue dependencies", "open GitHub dependency",
                    "open GitHub dependencies",
                    "blocked issues wait on the count in their summary, unnamed")
_SUB_ISSUES = _Link("sub_issues", "sub_issues_summary", "read sub-issues", "open sub-issue",
                    "open sub-issues", "parents wait on the count in their summary, unnamed")



def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


class IssueReader:
    """Reads one repository's issues for a `GitHubTracker` (GET requests only)."""

    def __init__(self, config: GitHubConfig, client: GitHubClient,
                 markers: MarkerTrust) -> None:
        self.config = config
        self.client = client
        self.repo = config.target
        self.name = f"github:{config.target}"
        self._priorities = config.priorities()
        self._refs: dict[str, BlockerState] = {}
        self._milestone: str | None = None
        self._milestone_stale = False  # a milestone delivery: look the title up again
        self._absent: set[str] = set()  # link endpoints this server answered 404
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        self.pulls = PullReader(client, config.target) if config.done_when == "merged" else None
        self._merge: dict[int, tuple[BlockerState, str | None]] = {}
        self._judged: dict[int, PullRequest] = {}
        self.review_moves: dict[int, str] = {}  # number -> "close" | "reopen" (module notes)
        self._blockers_of: dict[int, list[int]] = {}  # dependent -> its judged blockers
        self._blocking: dict[int, list[int]] = {}  # judged blocker -> what it blocks
        self.asked: set[int] = set()  # the issues whose pull requests are judged
        self.pulls_of: dict[int, list[int]] = {}  # judged issue -> every PR linked to it
        self.stacked: dict[int, int] = {}  # --stack: item -> the one blocker its start rests on
        self.began: datetime | None = None  # the server's time when the last full list began
        self.changes: GitHubChanges | None = None  # set by a tracker that reads deltas
        self.own_claim: Callable[[str], Claim | None] | None = None  # the tracker's, for deltas
        # `--assignee none --assign`: the token's login, whose assignment is jr2's own and does
        # not take an issue out of scope (ISSUE-NOTES 2); set by the tracker (`_list`)
        self.own_login: Callable[[], str] | None = None
        self.gates = ApprovalReader(client, config.target)  # --gate: who may answer (gates.py)
        self.markers = markers  # whose markers count (kit/markers.py): every listing goes through
        self.gates.own = markers.own
        self.feedback: FeedbackLoop | None = None  # --on-feedback rerun (feedback.py)
        self.comment_counts: dict[int, int] = {}  # issue in review -> its listed comment count
        self.walked: list[dict[str, Any]] = []  # the lists the last full reading walked

    def issues_path(self, repo: str | None = None) -> str:
        return f"/repos/{repo or self.repo}/issues"

    def comments_path(self, number: int) -> str:
        return f"/repos/{self.repo}/issues/{number}/comments"

    def _list_params(self) -> dict[str, Any]:
        cfg = self.config
        params: dict[str, Any] = {"state": "open"}
        if cfg.label:
            params["labels"] = ",".join(cfg.label)
        if cfg.milestone:
            params["milestone"] = self.milestone_param(cfg.milestone)
        if cfg.assignee:
            params["assignee"] = cfg.assignee
        return params

    def milestone_param(self, value: str) -> str:
        """A milestone number, `*` or `none`; a title is looked up once per process, and again
        after a `milestone` delivery naming it (`milestone_changed`). When no milestone has the
        title any more, the one it named before is kept (with a warning): the run goes on."""
        if value.isdigit() or value in ("*", "none"):
            return value
        if self._milestone is None or self._milestone_stale:
            self._milestone_stale = False
            found, _ = self.client.get_all(f"/repos/{self.repo}/milestones", {"state": "all"},
                                           need="read milestones")
            for m in found:
                if m.get("title") == value:
                    self._milestone = str(m["number"])
                    break
            else:
                if self._milestone is None:
                    raise ConfigError(f"{self.name}: no milestone titled {value!r}")
                log.warning("%s: no milestone is titled %r any more; still reading milestone "
                            "#%s", self.name, value, self._milestone)
        return self._milestone

    def milestone_changed(self) -> None:
        """A delivery says a milestone the filter may name changed: a title is looked up again
        at its next use (the full reading that follows)."""
        self._milestone_stale = True

    def assignees(self, issue: dict[str, Any]) -> set[str]:
        """The logins assigned to `issue` (casefolded), less jr2's own (`own_login`)."""
        logins = {str(u.get("login", "")).casefold() for u in issue.get("assignees") or []
                  if isinstance(u, dict)}
        if self.own_login is not None:
            logins.discard(self.own_login().casefold())
        return logins

    def mark_labels(self) -> list[str]:
        """jr2's marks: an open issue carrying one is listed even outside the user's filter."""
        cfg = self.config
        marks = [cfg.claim_label, cfg.failed_label]
        if cfg.on_success == "review":
            marks.append(cfg.review_label)
        return marks

    def _list(self) -> tuple[dict[int, dict[str, Any]], set[int]]:
        """The open issues in scope (PRs included, for ref lookups) plus jr2-marked ones, and
        the numbers the user's filter selects (the rest are listed only for jr2's marks)."""
        cfg = self.config
        params = self._list_params()
        self.walked = []
        found, first = self._open(params)
        self.began = first.date
        if self.own_login is not None:  # also those only jr2 itself is assigned to (one list)
            own, _ = self._open({**params, "assignee": self.own_login()})
            found = [*found, *(issue for issue in own if not self.assignees(issue))]
        listed: dict[int, dict[str, Any]] = {}
        excluded = cfg.label_set(cfg.exclude_label)
        for issue in found:
            if excluded and excluded & cfg.label_set(labels_of(issue)):
                continue
            listed.setdefault(int(issue["number"]), issue)
        scoped = set(listed)
        if cfg.label or cfg.milestone or cfg.assignee:  # marked issues may be outside the filter
            for lab in self.mark_labels():
                marked, _ = self._open({"state": "open", "labels": lab})
                for issue in marked:
                    listed.setdefault(int(issue["number"]), issue)
        elif excluded:
            mine = cfg.label_set(self.mark_labels())
            for issue in found:
                if mine & cfg.label_set(labels_of(issue)):
                    listed.setdefault(int(issue["number"]), issue)
        return listed, scoped

    def _open(self, params: dict[str, Any]) -> tuple[list[Any], RestResponse]:
        self.walked.append(params)
        return self.client.get_open(self.issues_path(), params)

    def forget_pages(self) -> None:
        """The lists changed since the full reading: their cached later pages, a copy of every
        open issue that would answer 200 at the next full reading anyway, are dropped."""
        for params in self.walked:
            self.client.forget_open(self.issues_path(), params)
        self.walked = []

    def closed_awaiting(self) -> list[dict[str, Any]]:
        """The closed issues (no pull requests) carrying the awaiting label and the filter's
        labels: one list (paged), which a writing pool reads once at start."""
        labels = ",".join([*self.config.label, AWAITING_LABEL])
        found, _ = self.client.get_all(self.issues_path(), {"state": "closed", "labels": labels})
        return [i for i in found if isinstance(i, dict) and "pull_request" not in i
                and i.get("state") == "closed" and self.config.has_label(labels_of(i),
                                                                         AWAITING_LABEL)]

    def snapshot(self, detail: bool, skip: set[str] | frozenset[str] = frozenset()) -> Snapshot:
        """The open issues in scope with blockers, sub-issues, claims and failure marks;
        ids in `skip` (done in this process) are left out."""
        if self.changes is not None:
            self.changes.window.begin()  # webhook marks from now on outlive this reading
        listed, scoped = self._list()
        done_label = self.config.done_label
        open_numbers = {n for n, issue in listed.items()
                        if not self.config.has_label(labels_of(issue), done_label)}
        if self.pulls is not None:
            self._read_pulls(listed)
            self._read_outside(listed, scoped)
        items: list[SnapshotItem] = []
        for number, issue in sorted(listed.items()):
            if "pull_request" in issue:
                continue
            labels = labels_of(issue)
            iid = item_id(self.repo, number)
            if self.config.has_label(labels, self.config.done_label) or iid in skip:
                continue
            if self.landed(number, labels):
                continue
            item = self._item(issue, labels, open_numbers, detail)
            item.in_scope = number in scoped
            items.append(item)
        if self.changes is not None:
            self.changes.full_read(self.began, listed, items)
        return Snapshot(source=self.name, items=items, done_count=None)

    def landed(self, number: int, labels: list[str]) -> bool:
        """Has issue `number` landed: its pull request merged into the base (--done-when
        merged)? It is then left out. One jr2 still holds stays listed until its holder settles
        it: its own worker's merge is not a person taking the item back (people win,
        `Tracker.watch`)."""
        return (self._merge.get(number, ("open",))[0] == "done"
                and not self.config.has_label(labels, self.config.claim_label))

    def state_of(self, number: int) -> BlockerState:
        """An open issue's state as a blocker by its pull requests (`open` when not judged)."""
        return self._merge.get(number, ("open", None))[0]

    def build_item(self, issue: dict[str, Any], labels: list[str],
                   open_numbers: set[int], detail: bool = False) -> SnapshotItem:
        """One listed issue as an item, its body references judged against `open_numbers`
        (for deltas: `delta.GitHubChanges`); `detail` names its blockers and sub-issues."""
        return self._item(issue, labels, open_numbers, detail, self.own_claim)

    def asks(self, issue: dict[str, Any]) -> bool:
        """Are an issue's pull requests judged on its own account (it blocks something, or it is
        held in review)? Issues a listed body names are asked about too (`_read_pulls`)."""
        if "pull_request" in issue:
            return False
        blocking = int((issue.get("issue_dependencies_summary") or {}).get("blocking") or 0)
        return blocking > 0 or self.in_review(labels_of(issue))

    def _read_pulls(self, listed: dict[int, dict[str, Any]]) -> None:
        """Judge, by their pull requests, the listed issues that block something."""
        asked: set[int] = set()
        for number, issue in listed.items():
            if "pull_request" in issue:
                continue
            if self.asks(issue):
                asked.add(number)
            for ref in body_refs(issue.get("body"), self.repo, number):
                repo, other = split_id(ref)
                if same_repo(repo, self.repo) and other in listed:
                    asked.add(other)
        self.asked = {n for n in asked if "pull_request" not in listed[n]}
        self._merge, self._judged, self.review_moves = {}, {}, {}
        self._blocking, self._blockers_of, self.pulls_of, self.stacked = {}, {}, {}, {}
        review = {n for n in self.asked if self.in_review(labels_of(listed[n]))}
        self.comment_counts = {n: listed[n]["comments"] for n in review
                               if isinstance(listed[n].get("comments"), int)}
        self.judge([(n, str(listed[n]["node_id"])) for n in sorted(self.asked)
                    if listed[n].get("node_id")], review)

    def _read_outside(self, listed: dict[int, dict[str, Any]], scoped: set[int]) -> None:
        """Judge by their pull requests too the open blockers of this repository that the list
        left out (outside the filter: another label, milestone or assignee): a merged PR makes
        them done as it makes a listed one. Found from the scoped items' bodies (one GET each,
        as `ref_state` reads them anyway) and, for an item whose native blockers are not all
        named by the judged ones, its `dependencies/blocked_by` (one conditional GET)."""
        wanted: dict[int, str] = {}
        for number in sorted(scoped):
            issue = listed[number]
            if "pull_request" in issue:
                continue
            for ref in body_refs(issue.get("body"), self.repo, number):
                repo, other = split_id(ref)
                if same_repo(repo, self.repo) and other not in listed and other not in wanted:
                    self._want(self._outside_issue(other), listed, wanted)
            for blocker in self.unnamed_blockers(issue):
                self._want(blocker, listed, wanted)
        if wanted:
            self.judge(sorted(wanted.items()), set())

    def unnamed_blockers(self, issue: dict[str, Any]) -> list[dict[str, Any]]:
        """The blockers of `issue` (its `dependencies/blocked_by`, one conditional GET) when its
        summary counts more open ones than the judged issues' `blocking` lists name; none
        asked when all are named or the server has no such endpoint (the count stands)."""
        summary = issue.get("issue_dependencies_summary")
        count = int(summary.get("blocked_by") or 0) if isinstance(summary, dict) else 0
        number = int(issue["number"])
        if count <= len(self._blockers_of.get(number, [])):
            return []
        try:
            found, _ = self.client.get_all(
                f"/repos/{self.repo}/issues/{number}/{_BLOCKED_BY.path}", need=_BLOCKED_BY.need)
        except GitHubHTTPError as exc:
            if exc.status != 404:
                raise
            return []
        return [b for b in found if isinstance(b, dict)]

    def _outside_issue(self, number: int) -> dict[str, Any] | None:
        """Issue `number` of this repository read directly (None: not there or not readable)."""
        try:
            resp = self.client.get(f"{self.issues_path()}/{number}")
        except GitHubHTTPError as exc:
            if exc.status in (401, 403, 404, 410):
                return None
            raise
        return resp.data if resp.status in (200, 304) and isinstance(resp.data, dict) else None

    def _want(self, issue: dict[str, Any] | None, listed: dict[int, dict[str, Any]],
              wanted: dict[int, str]) -> None:
        """Add an open, unlisted issue of this repository (no PR) to `wanted` (number -> node)."""
        if (issue is None or issue.get("state") != "open" or "pull_request" in issue
                or not issue.get("node_id")
                or self.local(repo_of_api_url(issue.get("repository_url")) or self.repo)
                != self.repo):
            return
        number = int(issue["number"])
        if number not in listed:
            wanted[number] = str(issue["node_id"])

    def judge(self, pairs: list[tuple[int, str]], review: set[int],
              links: Links | None = None) -> set[int]:
        """Judge issues ((number, node id) pairs: open, not pull requests; `review`: those held
        in review) by their pull requests (ceil(len/100) GraphQL queries), replacing what was
        known of them: their state as a blocker, the PR that says so, every PR linked to them,
        the issues each blocks, and a review move for one held in review. Returns the numbers
        whose state, PR or `blocking` list changed (deltas: `mergedelta.py`). `links`: what a
        read of these issues already found (a settle's own; then no query is sent)."""
        assert self.pulls is not None
        if links is None:
            links = self.pulls.read(pairs)
        base = self.config.base or links.default_branch or "main"
        changed: set[int] = set()
        for number, _ in pairs:
            before = (self._merge.get(number), self._judged.get(number),
                      self._blocking.get(number))
            self.forget_pulls(number)
            state, pr = judge(links.prs.get(number, []), base, self.config.require_checks)
            if pr is not None:
                self._merge[number] = (state, pr.url or f"#{pr.number}")
                self._judged[number] = pr
            self.pulls_of[number] = [p.number for p in links.prs.get(number, [])]
            if number in review:
                held = self.feedback is not None and self.feedback.judged(
                    number, state, pr, links.prs.get(number, []))
                if state == "done":
                    self.review_moves[number] = "close"
                elif state == "open" and not held:
                    self.review_moves[number] = "reopen"
            dependents = links.blocking.get(number, [])
            self._blocking[number] = dependents
            for dependent in dependents:
                named = self._blockers_of.setdefault(dependent, [])
                named.append(number)
                named.sort()
            if (self._merge.get(number), self._judged.get(number), dependents) != before:
                changed.add(number)
        return changed

    def waiting_for_checks(self) -> set[int]:
        """The judged issues whose PR merged with checks not green (`--require-checks`), and
        with `--stack` those whose open PR an item would start on (`stacked`): checks finishing
        move nothing a delta lists, so these are judged again at every delta
        (`mergedelta.py`)."""
        out = {n for n, (state, _) in self._merge.items() if state == "not_green"}
        if self.feedback is not None:  # checks and reviews on a PR in review move no issue
            out |= {n for n in self.feedback.watched if self.state_of(n) == "unmerged"}
        return out | {n for n in self.stacked.values() if self.state_of(n) == "unmerged"}

    def blocks(self, number: int) -> list[int]:
        """The issues a judged issue blocks (its GraphQL `blocking` list, this repository)."""
        return self._blocking.get(number, [])

    def blockers_named(self, number: int) -> list[int]:
        """The judged issues that block issue `number`."""
        return self._blockers_of.get(number, [])

    def forget_pulls(self, number: int) -> None:
        """Drop what was judged of issue `number` (closed, or about to be judged again)."""
        self._merge.pop(number, None)
        self._judged.pop(number, None)
        self.pulls_of.pop(number, None)
        self.review_moves.pop(number, None)
        for dependent in self._blocking.pop(number, []):
            named = self._blockers_of.get(dependent)
            if named is not None and number in named:
                named.remove(number)
                if not named:
                    del self._blockers_of[dependent]

    def in_review(self, labels: list[str]) -> bool:
        """Does an issue carry the review label (`--on-success review`)?"""
        cfg = self.config
        return cfg.on_success == "review" and cfg.has_label(labels, cfg.review_label)

    def _hand_off(self, item: int, blockers: list[BlockerRef],
                  extra: dict[str, Any]) -> list[BlockerRef]:
        """`extra.blockers` (what a worker's `JR2_BLOCKERS_JSON` lists) and, with `--stack`, a
        single blocker with an open green PR handed off (`extra.stack_on`: its head) rather than
        waited for: it leaves the item's blockers (deltas deliver the blocker's own item with
        its state, which must not set the reference back). Issue `item`'s single blocker with
        an open PR, green or not, is kept in `stacked` (judged again at every delta)."""
        self.stacked.pop(item, None)
        listed = []
        for b in blockers:
            try:
                repo, number = split_id(b.id)
            except ValueError:
                continue  # a summary ("2 other open GitHub dependencies"), not an issue
            pr = self._judged.get(number) if same_repo(repo, self.repo) else None
            listed.append({"id": b.id, "state": b.state,
                           "pr": None if pr is None else pr.number,
                           "pr_url": None if pr is None else pr.url,
                           "head_branch": None if pr is None else pr.head,
                           "merge_commit": None if pr is None else pr.merge_sha})
        extra["blockers"] = listed
        if self.config.stack and len(blockers) == 1 and blockers[0].state == "unmerged":
            pr = self._judged.get(split_id(blockers[0].id)[1]) if listed else None
            if pr is not None:
                self.stacked[item] = split_id(blockers[0].id)[1]
            if pr is not None and pr.green(self.config.require_checks, merged=False):
                extra["stack_on"] = pr.head
                return []  # handed off: no reference a Ready-set could set back to waiting
        return blockers

    def listed_ref(self, number: int) -> BlockerRef:
        """A blocker that is an open listed issue (how the items naming it refer to it:
        `Delta.as_blocker`): `open`, or its state by its pull requests."""
        state, pr = self._merge.get(number, ("open", None))
        return BlockerRef(item_id(self.repo, number), state, pr)

    def _item(self, issue: dict[str, Any], labels: list[str], open_numbers: set[int],
              detail: bool,
              own_claim: Callable[[str], Claim | None] | None = None) -> SnapshotItem:
        cfg = self.config
        number = int(issue["number"])
        iid = item_id(self.repo, number)
        prios = [self._priorities[key] for key in cfg.label_set(labels)
                 if key in self._priorities]
        extra: dict[str, Any] = {"number": number}
        if issue.get("body"):
            extra["body"] = issue["body"]
        blockers = self._native_blockers(issue, detail)
        not_planned: list[str] = []
        for ref in body_refs(issue.get("body"), self.repo, number):
            state = self.ref_state(ref, open_numbers, not_planned)
            if state == "open" and self._merge and same_repo(split_id(ref)[0], self.repo):
                blockers.append(self.listed_ref(split_id(ref)[1]))
            else:
                blockers.append(BlockerRef(ref, state))
        if not_planned:
            extra["closed_not_planned"] = not_planned
        if self.pulls is not None:
            blockers = self._hand_off(number, blockers, extra)
            state, pr = self._merge.get(number, ("open", None))
            if self.in_review(labels) and state in ("unmerged", "not_green"):
                extra["in_review"] = pr  # held: it waits for the merge of its own PR
                blockers.append(BlockerRef(pr or iid, state, pr))
            stopped = self.feedback.stopped.get(number) if self.feedback is not None else None
            if stopped is not None and self.in_review(labels):
                extra["feedback_stopped"] = stopped
        children = [] if cfg.ignore_sub_issues else self._children(issue, detail)
        failed = None
        claim = None
        comments: list[claims.Comment] | None = None
        now: datetime | None = None
        claimed = cfg.has_label(labels, cfg.claim_label)
        failed_mark = cfg.has_label(labels, cfg.failed_label)
        gated = cfg.has_label(labels, AWAITING_LABEL)
        own = own_claim(iid) if own_claim is not None and claimed and not failed_mark else None
        if own is not None:  # a delta: our own claim, held and renewed by this process
            claim = own
        elif claimed or gated or (detail and failed_mark):
            comments, now = self.read_comments(number)
        if failed_mark:
            reason = claims.last_failure(comments) if comments is not None else None
            failed = reason or f"marked {cfg.failed_label}"
        attempts, retry_after = 0, None
        if claimed and comments is not None and now is not None:
            claim = claims.claim_of(comments, now)
            attempts, retry_after = claims.retry_record(claims.markers(comments))
        return SnapshotItem(
            id=iid, title=str(issue.get("title") or ""), url=issue.get("html_url"),
            labels=labels,
            priority=min(prios) if prios else None,
            created=parse_time(issue["created_at"]) if issue.get("created_at") else None,
            parent=self._local_id(id_of_issue_url(issue.get("parent_issue_url"))),
            children=children, blockers=blockers, failed=failed, claim=claim,
            attempts=attempts, retry_after=retry_after, extra=extra,
            gates=self.gates.of(comments, number, labels) if gated and comments is not None
            else (),
            ignored=self.markers.ignored_on(iid) if comments is not None else (),
            branch=item_branch(number) if self.pulls is not None else None)

    def _native_blockers(self, issue: dict[str, Any], detail: bool) -> list[BlockerRef]:
        summary = issue.get("issue_dependencies_summary")
        if not isinstance(summary, dict):  # an older server or recording: never fail open
            return self._links(issue, _BLOCKED_BY, detail, None)
        count = int(summary.get("blocked_by") or 0)
        if count <= 0:
            return []
        if not detail and self.pulls is not None:  # named from the blockers' `blocking` lists
            named = [self.listed_ref(b) for b in self._blockers_of.get(int(issue["number"]), [])]
            rest = count - len(named)
            if rest > 0:
                named.append(BlockerRef(_plural(rest, "other open GitHub dependency",
                                                "other open GitHub dependencies"), "open"))
            return named
        return self._links(issue, _BLOCKED_BY, detail, count)

    def _children(self, issue: dict[str, Any], detail: bool) -> list[BlockerRef]:
        summary = issue.get("sub_issues_summary")
        if not isinstance(summary, dict):
            return self._links(issue, _SUB_ISSUES, detail, None)
        open_count = int(summary.get("total") or 0) - int(summary.get("completed") or 0)
        return self._links(issue, _SUB_ISSUES, detail, open_count) if open_count > 0 else []

    def _links(self, issue: dict[str, Any], link: _Link, detail: bool,
               open_count: int | None) -> list[BlockerRef]:
        """An issue's blockers or sub-issues: counted from its summary (`open_count`), named
        from the link's endpoint with `detail`, read from the endpoint when the summary is
        missing (`open_count` None). A server without the endpoint (404: Enterprise Server
        3.17-3.19) is warned about once; then the summary's count stands, and without a
        summary the server has no such links."""
        counted = [BlockerRef(_plural(open_count, link.one, link.many), "open")] if (
            open_count) else []
        if open_count is not None and not detail:
            return counted
        if open_count is None:
            self._warn(link.summary, f"issue objects carry no `{link.summary}`: reading "
                       f"`{link.path}` of every listed issue instead (one request each)")
        number = int(issue["number"])
        with self._lock:
            absent = link.path in self._absent
        if not absent:
            try:
                found, _ = self.client.get_all(f"/repos/{self.repo}/issues/{number}/{link.path}",
                                               need=link.need)
            except GitHubHTTPError as exc:
                if exc.status != 404:
                    raise
                with self._lock:
                    self._absent.add(link.path)
                self._warn(link.path, f"this GitHub has no `{link.path}` endpoint (HTTP 404; "
                           f"Enterprise Server before it): {link.fallback}")
            else:
                refs = [self._ref_of(b) for b in found]
                # the summary and the endpoint may disagree (one is stale): blocked when
                # either says so, the summary's open ones the endpoint does not name counted
                rest = (open_count or 0) - sum(1 for b in found if b.get("state") == "open")
                if rest > 0:
                    refs.append(BlockerRef(_plural(rest, f"other {link.one}",
                                                   f"other {link.many}"), "open"))
                return refs
        return counted

    def _warn(self, key: str, text: str) -> None:
        with self._lock:
            first = key not in self._warned
            self._warned.add(key)
        if first:
            log.warning("%s: %s", self.name, text)

    def _ref_of(self, issue: dict[str, Any]) -> BlockerRef:
        """A reference to a listed issue object (a blocker or a sub-issue)."""
        repo = self.local(repo_of_api_url(issue.get("repository_url")) or self.repo)
        done = issue.get("state") == "closed" or self.config.has_label(labels_of(issue),
                                                                        self.config.done_label)
        number = int(issue["number"])
        if not done and repo == self.repo and number in self._merge:
            return self.listed_ref(number)
        return BlockerRef(item_id(repo, number), "done" if done else "open")

    def local(self, repo: str) -> str:
        """`repo` as this source spells its own repository (also under a name it moved to)."""
        mine = same_repo(repo, self.repo) or same_repo(repo, self.client.repo_name(self.repo))
        return self.repo if mine else repo

    def _local_id(self, iid: str | None) -> str | None:
        if iid is None:
            return None
        repo, number = split_id(iid)
        return item_id(self.local(repo), number)

    def ref_state(self, ref: str, open_numbers: AbstractSet[int] = frozenset(),
                  not_planned: list[str] | None = None) -> BlockerState:
        """The state of body reference `ref`: `open` when in `open_numbers`, else read directly
        (once when final); a closed not-planned one is added to `not_planned`."""
        repo, number = split_id(ref)
        if same_repo(repo, self.repo) and number in open_numbers:
            return "open"
        with self._lock:
            cached = self._refs.get(ref.lower())
        if cached in _FINAL:
            return cached
        try:
            resp = self.client.get(f"{self.issues_path(repo)}/{number}")
        except GitHubHTTPError as exc:
            if exc.status in (404, 410):
                state: BlockerState = "missing"
            elif exc.status in (401, 403):
                state = "inaccessible"
            else:
                raise
        else:
            if resp.status not in (200, 304) or not isinstance(resp.data, dict):
                state = "missing"  # 301: transferred to another repository
            else:
                state = self._ref_of(resp.data).state
                if (state == "done" and resp.data.get("state_reason") == "not_planned"
                        and not_planned is not None):
                    not_planned.append(ref)
        with self._lock:
            self._refs[ref.lower()] = state
        return state

    def read_comments(self, number: int) -> tuple[list[claims.Comment], datetime]:
        """An issue's comments (documented issue-comment objects, as the protocol's `Comment`)
        as the pool may trust them (`kit.markers`: markers by others left out), and the
        server's time of the answer."""
        found, first = self.client.get_all(self.comments_path(number), need="read issue comments")
        out = []
        for c in found:
            try:
                created = parse_time(c["created_at"])
                user = c.get("user")
                out.append(claims.Comment(int(c["id"]), str(c.get("body") or ""), created,
                                          parse_time(c.get("updated_at") or c["created_at"]),
                                          user.get("login") if isinstance(user, dict) else None))
            except (KeyError, TypeError, ValueError):
                continue
        return self.markers.read(item_id(self.repo, number), out).comments, (
            first.date or datetime.now(UTC))
