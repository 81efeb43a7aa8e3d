"""GitHub deltas: after one full reading, only what changed (`GitHubTracker.changes`).

* The issues list with `since`, `state=all`, `sort=updated`, conditional, read by the kit's
  `SinceReader`, without the user's filters (an issue that left the scope is judged, `selects`).
* When an issue's state as a blocker changes, the issues it blocks are read directly
  (`dependencies/blocking`), and a sub-issue's parent too. Another pool's claim is read again
  when its lease seems to end; outside blockers at most every `OUTSIDE_EVERY` s.
* Webhooks mark what the list cannot see (links, deletions, transfers); a marked issue gone is a
  gap, as is a delivery that may change the scope (`scopehooks.py`). `--done-when merged` adds
  `mergedelta.py` and `linkevents.py`.
* A server without the summaries or `dependencies/blocking` reads in full when a change needs
  chasing. An issue of the filter seen closed with the awaiting label is noted
  (`closed_awaiting`) for the tracker to take the label off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jr2_sources.capabilities.approvals.policy import AWAITING_LABEL
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import (
    PER_PAGE,
    Page,
    SinceWindow,
    WindowGap,
    iso_z,
)
from jr2_sources.kit.labeltracker import labels_of
from jr2_sources.readyset import BlockerState, SnapshotItem

from .client import GitHubHTTPError
from .linkevents import LinkEvents
from .mergedelta import MergeDelta
from .refs import id_of_issue_url, item_id, parse_time, repo_of_api_url, same_repo, split_id

if TYPE_CHECKING:
    from .reader import IssueReader

OUTSIDE_EVERY = 60.0
"""Seconds between two direct readings of open blockers in other repositories."""


def _updated(issue: dict[str, Any]) -> datetime | None:
    stamp = issue.get("updated_at")
    return parse_time(str(stamp)) if stamp else None


class GitHubChanges(SinceReader[int]):
    """GitHub's queries for the kit's `SinceReader`, and the state a delta needs between
    readings."""

    def __init__(self, reader: IssueReader, *, clock: Callable[[], float] = time.monotonic,
                 window: SinceWindow | None = None, detail: bool = False) -> None:
        super().__init__(window)
        self.reader = reader
        self.detail = detail  # `--detail`: rebuilt items name their blockers (module notes)
        self.config = reader.config
        self.clock = clock
        self.state: dict[int, BlockerState] = {}  # issues of this repository seen: as blockers
        self.open_numbers: set[int] = set()  # open, listed, not done-labelled
        self.outside: set[str] = set()  # open references to other repositories
        self.leases: dict[int, datetime] = {}  # other pools' claims: when their lease ends
        self.closed_awaiting: list[int] = []  # closed with the awaiting label on (notes)
        self._outside_at = 0.0
        self.merges = MergeDelta(self) if reader.pulls is not None else None  # merged
        self.links = (LinkEvents(reader.client, reader.repo, clock)  # sidebar links: merged
                      if reader.pulls is not None else None)

    # -- scope as the full reading's filters judge it --------------------------------------------

    def selects(self, issue: dict[str, Any]) -> bool:
        """Whether the user's filter selects `issue` (`--label` all of them, `--milestone`,
        `--assignee`, no `--exclude-label`), as the full reading's list parameters would;
        jr2's own assignee does not count (`IssueReader.own_login`, ISSUE-NOTES 2)."""
        cfg = self.config
        have = cfg.label_set(labels_of(issue))
        if not cfg.label_set(cfg.label) <= have or cfg.label_set(cfg.exclude_label) & have:
            return False
        if cfg.milestone:
            want = self.reader.milestone_param(cfg.milestone)
            ms = issue.get("milestone")
            number = ms.get("number") if isinstance(ms, dict) else None
            if (want == "none") != (number is None) or (want.isdigit()
                                                       and number != int(want)):
                return False
        if cfg.assignee:
            logins = self.reader.assignees(issue)  # less jr2's own (`--assignee none --assign`)
            who = cfg.assignee.casefold()
            if (who == "none") != (not logins) or (who not in ("none", "*")
                                                  and who not in logins):
                return False
        return True

    def marked(self, labels: list[str]) -> bool:
        """Does an issue carry one of jr2's marks (listed even outside the filter)?"""
        return any(self.config.has_label(labels, lab) for lab in self.reader.mark_labels())

    def _as_blocker(self, issue: dict[str, Any]) -> BlockerState:
        done = issue.get("state") == "closed" or self.config.has_label(
            labels_of(issue), self.config.done_label)
        return "done" if done else "open"

    # -- after a full reading -----------------------------------------------------------------

    def full_read(self, began: datetime | None, listed: dict[int, dict[str, Any]],
                  items: list[SnapshotItem]) -> None:
        """Start the window from a full reading (`IssueReader.snapshot` calls it)."""
        self.start(began, listed.items(), items)
        self.state = {n: self._as_blocker(i) for n, i in listed.items()}
        self.open_numbers = {n for n, s in self.state.items() if s == "open"}
        self.outside = {b.id for it in items for b in it.blockers
                        if b.state == "open" and self._foreign(b.id)}
        self._outside_at = self.clock()
        self.leases = {}
        for it in items:
            self._lease(it)
        if self.merges is not None:
            self.merges.full_read(listed, items)
        if self.links is not None:
            self.links.reset(began)

    def _lease(self, item: SnapshotItem) -> None:
        """Remember when another pool's claim of `item` ends: a renewal edits its comment,
        which need not move `updated_at`, so the issue is read again when the lease seems to
        end (rather than offered as free and lost to a live claim on every poll)."""
        number = split_id(item.id)[1]
        claim = item.claim
        if claim is None or claim.lease_expires is None or (
                self.reader.own_claim is not None and self.reader.own_claim(item.id)):
            self.leases.pop(number, None)
        else:
            self.leases[number] = claim.lease_expires

    def _foreign(self, ref: str) -> bool:
        try:
            repo, _ = split_id(ref)
        except ValueError:
            return False  # a count ("2 open GitHub dependencies"), not an issue
        return not same_repo(repo, self.reader.repo)

    # -- one delta: the queries and hooks of `SinceReader` -----------------------------------

    def prepare(self) -> None:
        """Another pool's claim whose lease seems to end is read directly (`_lease`)."""
        now = datetime.now(UTC)
        self.window.mark(n for n, end in self.leases.items() if end <= now)

    def after_listing(self, fresh: dict[int, dict[str, Any]]) -> None:
        if self.links is not None:  # PRs linked from the sidebar (linkevents.py)
            self.window.mark(self.links.read())

    def follow(self, fresh: dict[int, dict[str, Any]], marked: set[int],
               skip: set[str]) -> None:
        self._chase(fresh)
        if self.merges is not None:
            self.merges.read(fresh, marked, {split_id(i)[1] for i in skip & self.in_set})

    def finish(self, delta: Delta) -> None:
        self._outside_refs(delta)
        if delta:
            self.reader.forget_pages()

    def page(self, since: datetime) -> Page:
        params = {"state": "all", "sort": "updated", "direction": "asc",
                  "since": iso_z(since), "per_page": PER_PAGE}
        try:
            resp = self.reader.client.get(self.reader.issues_path(), params)
        except GitHubHTTPError as exc:
            if exc.status == 422:
                raise WindowGap("GitHub refused `since` (HTTP 422)") from None
            raise
        if resp.status not in (200, 304) or not isinstance(resp.data, list):
            raise WindowGap(f"the issues list answered HTTP {resp.status}")
        return [i for i in resp.data if isinstance(i, dict) and "number" in i], resp.date

    def key_of(self, obj: Any) -> int:
        return int(obj["number"])

    def updated_of(self, obj: Any) -> datetime | None:
        return _updated(obj)

    def ident(self, key: int) -> str:
        return item_id(self.reader.repo, key)

    def marks(self) -> list[int]:
        return sorted(n for n in self.window.take_marks() if isinstance(n, int))

    def take(self, fresh: dict[int, dict[str, Any]], obj: Any) -> None:
        """An issue read directly (not listed: it does not move the window)."""
        if isinstance(obj, dict) and "number" in obj:
            super().take(fresh, obj)

    def direct(self, key: int) -> dict[str, Any]:
        """One issue read directly (conditional); gone -> a gap."""
        try:
            resp = self.reader.client.get(f"{self.reader.issues_path()}/{key}")
        except GitHubHTTPError as exc:
            if exc.status in (404, 410):
                self.window.forget(key)
                raise WindowGap(f"issue #{key} is gone (HTTP {exc.status})") from None
            raise
        if resp.status not in (200, 304) or not isinstance(resp.data, dict):
            self.window.forget(key)
            raise WindowGap(f"issue #{key} moved (HTTP {resp.status})")
        return resp.data

    def _chase(self, fresh: dict[int, dict[str, Any]]) -> None:
        """Issues whose state as a blocker changed: read what they block and their parent."""
        todo = list(fresh)
        chased: set[int] = set()
        while todo:
            number = todo.pop()
            issue = fresh[number]
            if number in chased or "pull_request" in issue:
                continue
            chased.add(number)
            state = self._as_blocker(issue)
            if self.state.get(number) == state or (self.detail and state == "done"):
                continue  # with --detail its dependents name it: their references follow
            summary = issue.get("issue_dependencies_summary")
            if not isinstance(summary, dict):
                raise WindowGap("issue objects carry no issue_dependencies_summary")
            before = set(fresh)
            if int(summary.get("blocking") or 0) > 0:  # open dependents: their counts moved
                for dep in self._blocking(number):
                    if self._mine(repo_of_api_url(dep.get("repository_url")) or self.reader.repo):
                        self.take(fresh, dep)
            parent = id_of_issue_url(issue.get("parent_issue_url"))
            if parent is not None:
                repo, pn = split_id(parent)
                if self._mine(repo) and pn not in fresh:
                    self.take(fresh, self.direct(pn))
            todo += [n for n in fresh if n not in before]

    def _mine(self, repo: str) -> bool:
        """Is `repo`, as an object GitHub returned names it, this source's repository? After a
        rename or transfer GitHub names the new one (`repository_url`, `parent_issue_url`),
        while item ids keep the target's spelling (`IssueReader.local`)."""
        return same_repo(self.reader.local(repo), self.reader.repo)

    def _blocking(self, number: int) -> list[dict[str, Any]]:
        path = f"{self.reader.issues_path()}/{number}/dependencies/blocking"
        try:
            found, _ = self.reader.client.get_all(path, need="read issue dependencies")
        except GitHubHTTPError as exc:
            if exc.status in (404, 410):
                raise WindowGap(f"cannot list what #{number} blocks (HTTP {exc.status})") from None
            raise
        return [d for d in found if isinstance(d, dict) and "number" in d]

    def judge(self, fresh: dict[int, dict[str, Any]]) -> None:
        """States first: body references read them."""
        for number, issue in fresh.items():
            state = self._as_blocker(issue)
            self.state[number] = state
            if state == "open" and ("pull_request" in issue or self.listed(issue)):
                self.open_numbers.add(number)
            else:
                self.open_numbers.discard(number)

    def leaves(self, key: int, obj: Any, skip: set[str]) -> BlockerState | None:
        """A pull request, a done issue, one out of the filter, one settled here, or one landed
        (`--done-when merged`: `mergedelta.py`) leaves with its state."""
        labels = labels_of(obj)
        landed = self.merges is not None and self.reader.landed(key, labels)
        if (obj.get("state") == "closed" and "pull_request" not in obj
                and self.config.has_label(labels, AWAITING_LABEL) and self.selects(obj)):
            self.closed_awaiting.append(key)
        if ("pull_request" in obj or self.state[key] == "done" or self.ident(key) in skip
                or not self.listed(obj) or landed):
            return "done" if landed else self.state[key]
        return None

    def dropped(self, ident: str, *, settled: bool) -> None:
        number = split_id(ident)[1]
        if not settled:
            self.leases.pop(number, None)
        self.reader.stacked.pop(number, None)
        if not settled and self.merges is not None:
            self.merges.dropped(number)

    def item_of(self, key: int, obj: Any, delta: Delta) -> SnapshotItem:
        """The issue as an item; one whose state as a blocker is not `open` (`--done-when
        merged`) with that state (`Delta.as_blocker`)."""
        item = self.reader.build_item(obj, labels_of(obj), self.open_numbers, self.detail)
        item.in_scope = self.selects(obj)
        self._lease(item)
        if self.merges is not None:
            self.merges.built(item)
            if self.reader.state_of(key) != "open":
                delta.as_blocker[item.id] = self.reader.listed_ref(key)
        self.outside.update(b.id for b in item.blockers
                            if b.state == "open" and self._foreign(b.id))
        return item

    def listed(self, issue: dict[str, Any]) -> bool:
        """Would the full reading list `issue` (the user's filter, or one of jr2's marks)?"""
        return self.selects(issue) or self.marked(labels_of(issue))

    def _outside_refs(self, delta: Delta) -> None:
        """Every `OUTSIDE_EVERY` s: the open references to other repositories, read again."""
        if not self.outside or self.clock() - self._outside_at < OUTSIDE_EVERY:
            return
        self._outside_at = self.clock()
        for ref in sorted(self.outside):
            state = self.reader.ref_state(ref)
            if state != "open":
                self.outside.discard(ref)
                delta.left.setdefault(ref, state)
