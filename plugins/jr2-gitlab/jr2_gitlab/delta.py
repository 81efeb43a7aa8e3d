"""GitLab deltas: after one full reading, only what changed (`GitLabTracker.changes`).

* The question: "List project issues" with `updated_after`, `order_by=updated_at`, `sort=asc`,
  `scope=all`, all states, 100 a page, read by the kit's `SinceReader`. GitLab answers no
  conditional requests: an unchanged poll is one request holding at most the overlap's issues.
* Asked without `--label`: an issue that left the scope is seen and judged as a full reading
  judges it.
* Each changed item is rebuilt as a full reading with `detail` builds it: its links, its
  description's references, its child work items (one GraphQL query per 100). Linking writes a
  note on both issues, which touches both. `--no-detail` keeps full readings.
* This process's own claim is rebuilt without a request (`IssueReader.held_item`).
* Webhooks mark issues for a direct read; a marked issue that is gone (404) is a gap; so is an
  open issue seen closed and moved (`moved_to_id`) when something names it.
* An issue this process settled as a failure to retry is read directly next (`wrote`). A delta
  that fails half-way makes the next reading full.

Design notes: docs/design/plugins.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jr2_sources import BlockerState, Claim, SnapshotItem
from jr2_sources.capabilities.approvals.policy import AWAITING_LABEL
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow, WindowGap, iso_z
from jr2_sources.kit.labeltracker import labels_of

from .client import GitLabHTTPError
from .refs import item_id, parse_time

if TYPE_CHECKING:
    from .reader import IssueReader


def _updated(issue: dict[str, Any]) -> datetime | None:
    stamp = issue.get("updated_at")
    return parse_time(str(stamp)) if stamp else None


class _Known(Mapping[int, dict[str, Any]]):
    """The open listed issues as a mapping (what a description's reference is judged against),
    without copying them: the fresh ones by their new data, the rest as open."""

    def __init__(self, open_iids: set[int], fresh: dict[int, dict[str, Any]]) -> None:
        self._open, self._fresh = open_iids, fresh

    def __getitem__(self, iid: int) -> dict[str, Any]:
        if iid in self._fresh:
            return self._fresh[iid]
        if iid in self._open:
            return {"state": "opened", "labels": []}
        raise KeyError(iid)

    def __contains__(self, iid: object) -> bool:
        return iid in self._fresh or iid in self._open

    def __iter__(self) -> Iterator[int]:
        return iter(self._open | set(self._fresh))

    def __len__(self) -> int:
        return len(self._open | set(self._fresh))


class GitLabChanges(SinceReader[int]):
    """GitLab's queries for the kit's `SinceReader`, and the state a delta needs between
    readings."""

    def __init__(self, reader: IssueReader, *, clock: Callable[[], float] = time.monotonic,
                 window: SinceWindow | None = None,
                 own_claim: Callable[[str], Claim | None] | None = None) -> None:
        super().__init__(window)
        self.reader = reader
        self.clock = clock
        self.own_claim = own_claim  # the tracker's: our claim on an item, or None
        self.open_iids: set[int] = set()  # open and listed
        self.items: dict[str, SnapshotItem] = {}  # the items last delivered, by id

    def full_read(self, began: datetime | None, listed: dict[int, dict[str, Any]],
                  items: list[SnapshotItem]) -> None:
        """Start the window from a full reading (`IssueReader.snapshot` calls it)."""
        self.start(began, listed.items(), items)
        self.open_iids = {iid for iid, i in listed.items() if not self.reader.is_done(i)}
        self.items = {it.id: it for it in items}

    # -- the queries -----------------------------------------------------------------------------

    def page(self, since: datetime) -> Page:
        params = {"updated_after": iso_z(since), "order_by": "updated_at", "sort": "asc",
                  "scope": "all", "per_page": 100}
        try:
            resp = self.reader.client.get(self.reader.issues_path(), params)
        except GitLabHTTPError as exc:
            if exc.status in (400, 422):
                raise WindowGap(f"GitLab refused `updated_after` (HTTP {exc.status})") from None
            raise
        if not isinstance(resp.data, list):
            raise WindowGap(f"the issues list answered HTTP {resp.status}")
        return [i for i in resp.data if isinstance(i, dict) and "iid" in i], resp.date

    def direct(self, key: int) -> dict[str, Any]:
        try:
            resp = self.reader.client.get(f"{self.reader.issues_path()}/{key}")
        except GitLabHTTPError as exc:
            if exc.status in (404, 410):
                raise WindowGap(f"issue #{key} is gone (HTTP {exc.status})") from None
            raise
        if not isinstance(resp.data, dict) or "iid" not in resp.data:
            raise WindowGap(f"issue #{key} answered HTTP {resp.status}")
        return resp.data

    def leaves(self, key: int, obj: Any, skip: set[str]) -> BlockerState | None:
        done = self.reader.is_done(obj)
        if done or self.ident(key) in skip or not self.reader.listed(obj):
            return "done" if done else "open"
        return None

    def key_of(self, obj: Any) -> int:
        return int(obj["iid"])

    def updated_of(self, obj: Any) -> datetime | None:
        return _updated(obj)

    def ident(self, key: int) -> str:
        return item_id(self.reader.project, key)

    def marks(self) -> list[int]:
        return [k for k in sorted(self.window.take_marks(), key=str) if isinstance(k, int)]

    # -- building ------------------------------------------------------------------------------

    def judge(self, fresh: dict[int, dict[str, Any]]) -> None:
        """A moved issue something names is a gap; the open listed issues follow the news."""
        reader = self.reader
        moved = sorted(iid for iid, issue in fresh.items() if issue.get("moved_to_id"))
        if moved:  # closed, but not done: its links now name an open issue elsewhere
            named = self._named()  # a blocker outside the filter is no listed issue
            for iid in moved:
                if iid in self.open_iids or item_id(reader.project, iid) in named:
                    raise WindowGap(f"issue #{iid} was moved to another project")
        for iid, issue in fresh.items():
            if reader.is_done(issue) or not reader.listed(issue):
                self.open_iids.discard(iid)
            else:
                self.open_iids.add(iid)

    def item_of(self, key: int, obj: Any, delta: object) -> SnapshotItem | None:
        held = self._held(self.ident(key), obj)
        if held is not None:
            self.items[held.id] = held
        return held

    def items_of(self, objs: dict[int, Any], fresh: dict[int, Any],
                 skip: set[str]) -> list[SnapshotItem]:
        built = self.reader.build_items(objs, _Known(self.open_iids, fresh), skip)
        for item in built:
            self.items[item.id] = item
        return built

    def dropped(self, ident: str, *, settled: bool) -> None:
        self.items.pop(ident, None)

    def _named(self) -> set[str]:
        """The ids the items in the set name (as a blocker or a child)."""
        return {ref.id for it in self.items.values() for ref in (*it.blockers, *it.children)}

    def _held(self, ident: str, issue: dict[str, Any]) -> SnapshotItem | None:
        """`issue` rebuilt without a request when its change is our own claim (module notes);
        None when it must be read whole."""
        prev = self.items.get(ident)
        if prev is None or self.own_claim is None or ident not in self.in_set:
            return None
        cfg = self.reader.config
        labels = set(labels_of(issue))
        if cfg.claim_label not in labels or {cfg.failed_label, AWAITING_LABEL} & labels:
            return None
        own = self.own_claim(ident)
        return None if own is None else self.reader.held_item(issue, prev, own)
