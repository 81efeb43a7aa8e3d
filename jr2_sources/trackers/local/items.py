"""How the local source turns its backlog and claim store into `SnapshotItem`s, one item at a time:
the one set of rules of the full snapshot and of the deltas (`changes.py`), so the two agree.
`ItemView` holds what the rules read (the parsed backlog with its items and children indexed once
per file version, the claim, outcome, retry and gate rows, the label filter); a view holding the
rows of a few items only is right about those items, not about their blockers' states.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from jr2_sources.capabilities.approvals.policy import Approval
from jr2_sources.readyset import BlockerRef, BlockerState, Claim, Snapshot, SnapshotItem

from .store import ClaimRow, GateRow, OutcomeRow

if TYPE_CHECKING:
    from .backlog import Backlog, BacklogItem


def _ts(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


class ItemView:
    """The rules that make one backlog item a snapshot item (see the module notes)."""

    by_id: Mapping[str, BacklogItem]
    kids: dict[str, list[str]]

    def __init__(self, backlog: Backlog, claims: dict[str, ClaimRow],
                 outcomes: dict[str, OutcomeRow], wanted: set[str],
                 retries: dict[str, tuple[int, float]] | None = None,
                 gates: dict[str, tuple[GateRow, ...]] | None = None,
                 index: ItemView | None = None) -> None:
        """`index`: a view of the same backlog whose items by id and children by parent are
        reused (building them is O(n))."""
        self.backlog = backlog
        if index is not None and index.backlog is backlog:
            self.by_id, self.kids = index.by_id, index.kids
        else:
            self.by_id = backlog.by_id()
            self.kids = backlog.children()
        self.claims = claims
        self.outcomes = outcomes
        self.wanted = wanted
        self.retries = {} if retries is None else retries
        self.gates = {} if gates is None else gates

    def done(self, item_id: str) -> bool:
        """Done in the file, or settled done in the store."""
        it = self.by_id.get(item_id)
        if it is not None and it.status == "done":
            return True
        out = self.outcomes.get(item_id)
        return out is not None and out.status == "done"

    def selected(self, it: BacklogItem) -> bool:
        """The label filter picks `it`."""
        return not self.wanted or self.wanted.issubset(it.labels)

    def counted(self, item_id: str) -> bool:
        """Counts towards `done_count`: a done item the filter picks."""
        it = self.by_id.get(item_id)
        return it is not None and self.done(item_id) and self.selected(it)

    def state(self, item_id: str) -> BlockerState:
        """The id's state as a blocker."""
        if item_id not in self.by_id:
            return "missing"
        return "done" if self.done(item_id) else "open"

    def item(self, item_id: str) -> SnapshotItem | None:
        """The snapshot item of `item_id`, or None when the snapshot does not list it (done,
        gone, or outside the filter with no claim and no outcome of jr2's on it). An item
        outside the filter that carries jr2's claim or outcome is listed with `in_scope=False`:
        shown, never offered."""
        it = self.by_id.get(item_id)
        if it is None or self.done(item_id):
            return None
        claim = self.claims.get(item_id)
        out = self.outcomes.get(item_id)
        if not self.selected(it) and claim is None and out is None and item_id not in self.gates:
            return None
        return SnapshotItem(
            id=it.id, title=it.title, labels=list(it.labels), priority=it.priority,
            created=it.created, parent=it.parent,
            children=[BlockerRef(c, "done" if self.done(c) else "open")
                      for c in self.kids.get(it.id, ())],
            blockers=[BlockerRef(n, self.state(n)) for n in it.needs],
            failed=(out.reason or "failed") if out is not None and out.status == "failed"
            else None,
            attempts=self.retries[item_id][0] if item_id in self.retries else 0,
            retry_after=_ts(self.retries[item_id][1]) if item_id in self.retries else None,
            claim=Claim(claim.holder, _ts(claim.since), _ts(claim.lease_expires),
                        lapsed=claim.attempt - 1)  # each takeover follows a lapsed lease
            if claim is not None else None,
            branch=it.branch, extra={"body": it.body} if it.body else {},
            in_scope=self.selected(it),
            gates=tuple(Approval(g.name, g.status, _ts(g.at), g.reason, g.by)  # type: ignore[arg-type]
                        for g in self.gates.get(item_id, ())),
        )

    def done_count(self) -> int:
        """How many done items the filter picks."""
        return sum(1 for it in self.backlog.items if self.done(it.id) and self.selected(it))

    def snapshot(self, source: str) -> Snapshot:
        """Every item the snapshot lists, in file order."""
        items = [si for si in map(self.item, self.by_id) if si is not None]
        return Snapshot(source=source, items=items, done_count=self.done_count())
