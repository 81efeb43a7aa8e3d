"""`MemoryTracker`: an in-memory tracker for jr2's own tests, with items a test (or a "person")
edits directly."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jr2_core import Outcome
from jr2_core.errors import ItemError
from jr2_sources.readyset import BlockerRef, BlockerState, Claim, Snapshot, SnapshotItem
from jr2_sources.tracker import Tracker


@dataclass
class MemoryItem:
    """One item of a `MemoryTracker`: what a person sees and edits."""

    id: str
    title: str = ""
    labels: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    parent: str | None = None
    priority: int | None = None
    open: bool = True
    failed: str | None = None


@dataclass
class _Held:
    holder: str
    since: float
    expires: float


class MemoryTracker(Tracker):
    """An in-memory tracker for tests: items a test (or a "person") edits directly, exclusive
    claims with leases on `clock`, a write counter, and hooks to make one item refuse a claim or
    a settle (`ItemError`). `label` scopes it like `--label`: an item outside it that carries a
    claim or a failure is listed with `in_scope=False`, the way every tracker must."""

    def __init__(self, items: list[MemoryItem] | None = None, *, label: list[str] | None = None,
                 name: str = "memory:test", clock: Callable[[], float] = time.time) -> None:
        self.name = name
        self.items: dict[str, MemoryItem] = {i.id: i for i in items or []}
        self.label = list(label or [])
        self.clock = clock
        self.claims: dict[str, _Held] = {}
        self.writes = 0
        self.settled: list[tuple[str, str, str]] = []
        """(item id, holder, outcome status) of every settle, in order."""
        self.refuse_claim: dict[str, str] = {}
        """Item id -> reason: `claim` raises `ItemError` (a locked or deleted issue)."""
        self.refuse_settle: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, iid: str, **fields: Any) -> MemoryItem:
        """Add (or replace) an item."""
        item = MemoryItem(iid, **fields)
        with self._lock:
            self.items[iid] = item
        return item

    def _in_scope(self, item: MemoryItem) -> bool:
        return set(self.label).issubset(item.labels)

    def snapshot(self) -> Snapshot:
        with self._lock:
            state: dict[str, BlockerState] = {
                i.id: ("open" if i.open else "done") for i in self.items.values()}
            kids: dict[str, list[str]] = {}
            for i in self.items.values():
                if i.parent is not None:
                    kids.setdefault(i.parent, []).append(i.id)
            out: list[SnapshotItem] = []
            for i in self.items.values():
                if not i.open:
                    continue
                held = self.claims.get(i.id)
                in_scope = self._in_scope(i)
                if not in_scope and held is None and i.failed is None:
                    continue
                claim = None
                if held is not None:
                    claim = Claim(held.holder, datetime.fromtimestamp(held.since, UTC),
                                  datetime.fromtimestamp(held.expires, UTC))
                out.append(SnapshotItem(
                    id=i.id, title=i.title, labels=list(i.labels), priority=i.priority,
                    parent=i.parent, in_scope=in_scope, failed=i.failed, claim=claim,
                    blockers=[BlockerRef(n, state.get(n, "missing")) for n in i.needs],
                    children=[BlockerRef(c, state[c]) for c in kids.get(i.id, [])]))
            return Snapshot(source=self.name, items=out)

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        with self._lock:
            if item.id in self.refuse_claim:
                raise ItemError(f"{self.name}: {item.id}: {self.refuse_claim[item.id]}")
            now = self.clock()
            it = self.items.get(item.id)
            held = self.claims.get(item.id)
            if it is None or not it.open or it.failed is not None:
                return False
            if held is not None and held.expires > now and held.holder != holder:
                return False
            self.writes += 1
            self.claims[item.id] = _Held(holder, now, now + lease)
            return True

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        with self._lock:
            held = self.claims.get(item_id)
            if held is None or held.holder != holder:
                return False
            self.writes += 1
            held.expires = self.clock() + lease
            return True

    def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
        with self._lock:
            if item_id in self.refuse_settle:
                raise ItemError(f"{self.name}: {item_id}: {self.refuse_settle[item_id]}")
            held = self.claims.get(item_id)
            if held is None or held.holder != holder:
                return  # lost meanwhile: the new holder's settle is the one that counts
            self.writes += 1
            del self.claims[item_id]
            self.settled.append((item_id, holder, outcome.status))
            it = self.items.get(item_id)
            if it is None:
                return
            if outcome.status == "done":
                it.open = False
            elif outcome.status == "failed":
                it.failed = outcome.failure.reason if outcome.failure is not None else "failed"

    # -- what a person does --------------------------------------------------------------------

    def person_closes(self, item_id: str) -> None:
        with self._lock:
            self.items[item_id].open = False

    def person_removes_claim(self, item_id: str) -> None:
        with self._lock:
            self.claims.pop(item_id, None)

    def person_relabels(self, item_id: str, labels: list[str]) -> None:
        with self._lock:
            self.items[item_id].labels = list(labels)
