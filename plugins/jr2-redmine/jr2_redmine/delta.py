"""Redmine deltas: after one full reading, only what changed (`RedmineTracker.changes`).

Design notes
------------
* What moved: `GET /issues.json?project_id=P&status_id=*&updated_on=>=T&include=relations
  &sort=updated_on,id`, 100 a page (Redmine's REST docs, "Filtering with timestamp"), read by
  the kit's `SinceReader` (watermark from the full reading's `Date`, overlap, digests, pages
  walked by time, signs of a gap). An unchanged poll asks the same URL again: a 304.
* What `updated_on` does not show: adding or removing a relation writes a journal on both
  issues and touches neither (Redmine's `IssueRelationsController`, checked against the real
  server by `tests/test_redmine_deltas.py`). So each sweep (every `SWEEP_EVERY`, 5 s) also
  asks, conditionally, the open issues of the project that have a blocker: `blocked=*` (and
  `follows=*` with `--precedes-blocks`), relations inline. A relation added or removed changes
  that answer: its issues whose object changed are rebuilt, and an issue that left it (its last
  blocker gone) is read again. One conditional request per 100 blocked open issues a sweep;
  other deltas are one list. A relation added between sweeps is caught by the claim, whose
  read of the issue carries its relations (`RedmineTracker.still_to_do`).
* Subtasks: setting or clearing a parent saves the child and recalculates the parent, so both
  are listed; an item whose child's parent changed is read again anyway.
* A blocker outside the project (another project's issue) closing moves nothing here: the open
  ones are asked as one conditional list per 100 (`issue_id=...&status_id=closed`).
* Issues this process wrote without moving `updated_on` (a journal edit: a retry record) are
  read directly next (`wrote` marks them). An issue a direct read does not find (deleted,
  moved, hidden) is a sign of a gap: a full reading. So is a refused time filter (422).
* A delta that fails half-way forgets nothing: the next reading is full.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jr2_sources import BlockerState, SnapshotItem
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow, WindowGap, iso_z

from .client import RedmineHTTPError, parse_time
from .reader import item_id

if TYPE_CHECKING:
    from jr2_sources import Delta

    from .reader import IssueReader


def _updated(issue: dict[str, Any]) -> datetime | None:
    stamp = issue.get("updated_on")
    return parse_time(str(stamp)) if stamp else None


def _closed(issue: dict[str, Any]) -> bool:
    return bool((issue.get("status") or {}).get("is_closed"))


def _parent(issue: dict[str, Any]) -> int | None:
    parent = (issue.get("parent") or {}).get("id")
    return None if parent is None else int(parent)


class RedmineChanges(SinceReader[int]):
    """Redmine's queries for the kit's `SinceReader`, and the state a delta needs between
    readings."""

    def __init__(self, reader: IssueReader, *, window: SinceWindow | None = None) -> None:
        super().__init__(window)
        self.reader = reader
        self.open: set[int] = set()  # the open issues of the project, listed or not
        self.parent: dict[int, int] = {}  # open issue -> its parent
        self.kids: dict[int, set[int]] = {}  # issue -> its open subtasks
        self.blocked: set[int] = set()  # open issues with a blocker, as last known
        self.outside: set[int] = set()  # open blockers outside the project's open issues
        self._sweep = False  # the delta being read is a sweep

    # -- the full reading ---------------------------------------------------------------------

    def full_read(self, began: datetime | None, issues: dict[int, dict[str, Any]],
                  items: list[SnapshotItem]) -> None:
        """Start the window from a full reading (`IssueReader.snapshot` calls it)."""
        self.start(began, issues.items(), items)
        self.open = set(issues)
        self.parent, self.kids = {}, {}
        for n, issue in issues.items():
            self._set_parent(n, _parent(issue))
        self.blocked = {n for n, bs in self.reader.relation_blockers(issues).items()
                        if n in self.open and bs}
        self.outside = set()
        self._outside_of(items)

    def _outside_of(self, items: Iterable[SnapshotItem]) -> None:
        """Remember the open blockers of `items` that are not open issues of the project."""
        for item in items:
            for ref in item.blockers:
                n = int(ref.id.removeprefix("#"))
                if ref.state == "open" and n not in self.open:
                    self.outside.add(n)

    def _set_parent(self, n: int, parent: int | None) -> None:
        old = self.parent.pop(n, None)
        if old is not None:
            self.kids.get(old, set()).discard(n)
        if parent is not None:
            self.parent[n] = parent
            self.kids.setdefault(parent, set()).add(n)

    # -- the queries ----------------------------------------------------------------------------

    def _scope(self) -> dict[str, Any]:
        params: dict[str, Any] = {"project_id": self.reader.config.project,
                                  "include": "relations"}
        if not self.reader.config.subprojects:
            params["subproject_id"] = "!*"
        return params

    def page(self, since: datetime) -> Page:
        params = {**self._scope(), "status_id": "*", "updated_on": ">=" + iso_z(since),
                  "sort": "updated_on,id", "limit": 100, "offset": 0}
        try:
            resp = self.reader.client.get("/issues.json", params)
        except RedmineHTTPError as exc:
            if exc.status in (400, 422):
                raise WindowGap(f"Redmine refused `updated_on` (HTTP {exc.status})") from None
            raise
        data = resp.data if isinstance(resp.data, dict) else {}
        return [i for i in data.get("issues") or [] if isinstance(i, dict) and "id" in i
                ], resp.date

    def direct(self, key: int) -> dict[str, Any]:
        return self._direct([key])[key]

    def _direct(self, numbers: list[int]) -> dict[int, dict[str, Any]]:
        """Up to 100 issues read directly in one list; one not found is a sign of a gap."""
        issues, _ = self._pages({"issue_id": ",".join(map(str, numbers)), "status_id": "*",
                                 "include": "relations", "sort": "id"})
        got = {int(x["id"]): x for x in issues}
        for n in numbers:
            if n not in got:
                self.window.forget(n)
                raise WindowGap(f"issue #{n} is gone (deleted, moved or hidden)")
        return got

    def _here(self, issue: dict[str, Any]) -> bool:
        """Whether `issue` is of the project (a new subproject's issue joins it)."""
        reader = self.reader
        project = (issue.get("project") or {}).get("id")
        here = not reader.project_ids or project in reader.project_ids
        if reader.config.subprojects and project is not None and not here:
            reader.project_ids.add(int(project))
            here = True
        return here

    def leaves(self, key: int, obj: Any, skip: set[str]) -> BlockerState | None:
        if _closed(obj) or not self._here(obj):
            self.open.discard(key)
            self.blocked.discard(key)
            return "done" if _closed(obj) else "open"
        self.open.add(key)
        self.outside.discard(key)
        if self.reader.relation_blockers({key: obj}).get(key):
            self.blocked.add(key)
        else:
            self.blocked.discard(key)
        if self.ident(key) in skip or not self.reader.listed(obj):
            return "open"
        return None

    def key_of(self, obj: Any) -> int:
        return int(obj["id"])

    def updated_of(self, obj: Any) -> datetime | None:
        return _updated(obj)

    def ident(self, key: int) -> str:
        return item_id(key)

    def marks(self) -> list[int]:
        return sorted({int(str(k)) for k in self.window.take_marks()})

    # -- the steps of a delta ---------------------------------------------------------------------

    def prepare(self) -> None:
        self._sweep = self.window.sweep_due()

    def after_listing(self, fresh: dict[int, Any]) -> None:
        if self._sweep:
            self._relations(fresh)

    def read_marked(self, fresh: dict[int, Any]) -> set[int]:
        """The marked issues the listing did not bring, read as one list per 100."""
        marked = set(self.marks())
        todo = marked - set(fresh)
        for n in todo:
            self.window.forget(n)  # rebuilt even when the issue is unchanged
        self._read_again(fresh, todo)
        return marked

    def follow(self, fresh: dict[int, Any], marked: set[int], skip: set[str]) -> None:
        """Follow the parents: an item whose subtasks changed is read again."""
        parents: set[int] = set()
        for n, issue in sorted(fresh.items()):
            parents |= self._reparent(n, issue)
        again = {p for p in parents if item_id(p) in self.in_set and p not in fresh}
        if again:
            more: dict[int, dict[str, Any]] = {}
            for p in again:
                self.window.forget(p)
            self._read_again(more, again)
            for n, issue in sorted(more.items()):
                self._reparent(n, issue)
            fresh.update(more)

    def _reparent(self, n: int, issue: dict[str, Any]) -> set[int]:
        """Note the parent `issue` has now; the parents whose subtasks changed."""
        parent = None if _closed(issue) or not self._here(issue) else _parent(issue)
        old = self.parent.get(n)
        self._set_parent(n, parent)
        return set() if old == parent else {p for p in (old, parent) if p is not None}

    def items_of(self, objs: dict[int, Any], fresh: dict[int, Any],
                 skip: set[str]) -> list[SnapshotItem]:
        items = self.reader.build_items(objs, self.open.__contains__, self.kids, skip)
        self._outside_of(items)
        return items

    def finish(self, delta: Delta) -> None:
        self._outside(delta)

    # -- what the list does not show ----------------------------------------------------------

    def _pages(self, params: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        """Every issue of a paged list, and whether any page changed (not a 304)."""
        out: list[dict[str, Any]] = []
        changed, offset = False, 0
        while True:
            resp = self.reader.client.get("/issues.json", {**params, "limit": 100,
                                                           "offset": offset})
            changed = changed or not resp.cached
            data = resp.data if isinstance(resp.data, dict) else {}
            page = [i for i in data.get("issues") or [] if isinstance(i, dict) and "id" in i]
            out.extend(page)
            offset += 100
            total = data.get("total_count")
            if not page or not isinstance(total, int) or offset >= total:
                return out, changed

    def _relations(self, fresh: dict[int, dict[str, Any]]) -> None:
        """The open issues that have a blocker (module notes): news into `fresh`; those that
        no longer have one are read again."""
        kinds = ["blocked", "follows"] if self.reader.config.precedes_blocks else ["blocked"]
        listed: dict[int, dict[str, Any]] = {}
        changed = False
        for kind in kinds:
            issues, moved = self._pages({**self._scope(), "status_id": "open", kind: "*",
                                         "sort": "id"})
            changed = changed or moved
            listed.update((int(i["id"]), i) for i in issues)
        if not changed:
            return
        for n, issue in listed.items():
            if n not in fresh:
                self.take(fresh, issue)
        lost = self.blocked - set(listed) - set(fresh)
        self.blocked = set(listed)
        self._read_again(fresh, lost)

    def _read_again(self, fresh: dict[int, dict[str, Any]], numbers: Iterable[int]) -> None:
        """Read `numbers` directly (one list per 100) into `fresh` when they are news."""
        todo = sorted(set(numbers))
        for i in range(0, len(todo), 100):
            got = self._direct(todo[i:i + 100])
            for n in todo[i:i + 100]:
                self.take(fresh, got[n])

    def _outside(self, delta: Delta) -> None:
        """Open blockers outside the project that closed: `done` in `delta.left`."""
        todo = sorted(self.outside)
        for i in range(0, len(todo), 100):
            chunk = todo[i:i + 100]
            closed, _ = self._pages({"issue_id": ",".join(map(str, chunk)),
                                     "status_id": "closed", "sort": "id"})
            for issue in closed:
                n = int(issue["id"])
                self.outside.discard(n)
                delta.left[item_id(n)] = "done"
