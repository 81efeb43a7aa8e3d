"""An incremental Ready-set: one snapshot, then deltas, each costing what it touches.

`IncrementalReadySet` keeps the items of the last snapshot and takes `Delta`s (the changed
items, and the ids that left with their state as a blocker). A reverse index (who references
each id) re-evaluates exactly the items touched and their dependents; only references held by
items the delta does not deliver are rewritten (a delivered item is `open` as a blocker unless
`as_blocker` says otherwise). Lease ends and retry times are heaps by time (`advance`), ready
items a heap by run order (`ready_items()`, lazy), conflict groups indexed per group; the global
cap applies when the set is read. `ready_set()` is `compute_ready_set` over the items, for reports;
a property test checks the set's own filing against it. The set rewrites its items' references
in place.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Generator, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime

from jr2_sources.capabilities.approvals.policy import awaiting
from jr2_sources.readyset import (
    BlockerRef,
    BlockerState,
    Claim,
    ReadySet,
    Snapshot,
    SnapshotItem,
    Status,
    _order_key,
    _raise_duplicate,
    _utc,
    capped,
    compute_ready_set,
    stopped,
)

__all__ = ["Delta", "IncrementalReadySet"]

_OrderKey = tuple[bool, int, bool, float, str]


@dataclass(slots=True)
class Delta:
    """What changed since the last snapshot or delta: `items` (changed, as the source sees them
    now, in any order); `left` (ids not in the set now, each with its state as a blocker, maybe
    ids the set never held); `as_blocker` (for a delivered item that is not `open` as a blocker,
    the reference naming it: `state` and `pr`); `done_count` (None: the source cannot say)."""

    items: list[SnapshotItem] = field(default_factory=list)
    left: dict[str, BlockerState] = field(default_factory=dict)
    done_count: int | None = None
    as_blocker: dict[str, BlockerRef] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.items or self.left)


class IncrementalReadySet:
    """The Ready-set of a snapshot kept current by deltas (see the module notes)."""

    def __init__(self, snapshot: Snapshot, *, now: datetime, children_block: bool = True,
                 global_cap: int | None = None) -> None:
        self.children_block = children_block
        self.global_cap = global_cap
        self.source = snapshot.source
        self.reset(snapshot, now=now)

    # -- whole snapshots -----------------------------------------------------------------------

    def reset(self, snapshot: Snapshot, *, now: datetime) -> None:
        """Forget everything and take `snapshot` as the new state (a full resynchronisation)."""
        items = snapshot.items
        self._items: dict[str, SnapshotItem] = {it.id: it for it in items}
        if len(self._items) != len(items):
            _raise_duplicate(snapshot)
        self.source = snapshot.source
        self.done_count = snapshot.done_count
        self._now = _utc(now)
        self._status: dict[str, Status] = {}
        self._keys: dict[str, _OrderKey] = {}
        self._refs_to: dict[str, set[str]] = {}
        self._ready_heap: list[tuple[_OrderKey, str]] = []
        self._expiry: list[tuple[float, str]] = []
        self._claimed: dict[str, Claim] = {}
        # items whose retry time (`SnapshotItem.retry_after`) is ahead: re-evaluated when it comes
        self._retry_heap: list[tuple[float, str]] = []
        self._retrying: dict[str, float] = {}
        self._n_ready = 0
        self._n_blocked = 0
        # conflict groups: their members, the members holding them now, what each item holds,
        # and the blocked items that wait for a group
        self._members: dict[str, set[str]] = {}
        self._group_held: dict[str, set[str]] = {}
        self._holds: dict[str, tuple[str, ...]] = {}
        self._busy: set[str] = set()
        for it in items:
            self._index_refs(it)
            self._index_groups(it)
        for it in items:
            self._evaluate(it.id)

    # -- deltas --------------------------------------------------------------------------------

    def apply(self, delta: Delta, *, now: datetime) -> None:
        """Take `delta` in and re-evaluate what it touched and their dependents, at `now`."""
        delivered: set[str] = set()
        for it in delta.items:
            if it.id in delivered:
                raise ValueError(f"a delta of {self.source} lists item {it.id!r} twice")
            delivered.add(it.id)
        clash = delta.left.keys() & delivered
        if clash:
            raise ValueError(f"a delta of {self.source} both updates and drops {min(clash)!r}")
        stray = delta.as_blocker.keys() - delivered
        if stray:
            raise ValueError(f"a delta of {self.source} gives a state as a blocker for "
                             f"{min(stray)!r}, which it does not deliver (use `left`)")
        touched: set[str] = set()
        for iid, state in delta.left.items():
            if iid in self._items:
                self._drop(iid)
            touched.update(self._set_ref_state(iid, state))
        for it in delta.items:
            old = self._items.get(it.id)
            if old is not None:
                self._unindex_refs(old)
                self._unindex_groups(old)
            self._items[it.id] = it
            self._index_refs(it)
            self._index_groups(it)
        touched |= delivered
        for it in delta.items:  # after all are in: their own references are the source's word
            ref = delta.as_blocker.get(it.id)
            if ref is None:
                touched.update(self._set_ref_state(it.id, "open", None, delivered))
            else:
                touched.update(self._set_ref_state(it.id, ref.state, ref.pr, delivered))
        self.done_count = delta.done_count
        self.advance(now)
        for iid in touched:
            if iid in self._items:
                self._evaluate(iid)

    def advance(self, now: datetime) -> None:
        """Move the clock to `now`: claims whose lease ended are re-evaluated."""
        now = _utc(now)
        if now < self._now:
            self._now = now
            for iid in self._items:
                self._evaluate(iid)
            return
        self._now = now
        ts = now.timestamp()
        heap = self._expiry
        while heap and heap[0][0] <= ts:
            _, iid = heapq.heappop(heap)
            if iid in self._claimed:
                self._evaluate(iid)
        retry = self._retry_heap
        while retry and retry[0][0] <= ts:
            at, iid = heapq.heappop(retry)
            if self._retrying.get(iid) == at:
                self._evaluate(iid)

    def waiting_for_retry(self, outside: Collection[str] = ()) -> int:
        """How many items wait for their retry time now (a pool waits for them), not counting
        the ids in `outside` (items out of the pool's scope)."""
        if not outside:
            return len(self._retrying)
        return sum(1 for iid in self._retrying if iid not in outside)

    def waiting_for_limits(self, outside: Collection[str] = ()) -> int:
        """How many items wait for a conflict group another item holds, or for the global cap
        (every ready item at the cap), not counting the ids in `outside`."""
        busy = sum(1 for iid in self._busy if iid not in outside)
        if self._capped() is None:
            return busy
        # at the cap every ready item waits: O(outside), not O(N), on every poll at the cap
        return busy + self._n_ready - sum(1 for iid in outside
                                          if self._status.get(iid) == "ready")

    def _capped(self) -> tuple[int, int] | None:
        return capped(len(self._claimed), self.global_cap)

    # -- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def item(self, item_id: str) -> SnapshotItem:
        """The current data of one item of the set (KeyError when it is not in the set)."""
        return self._items[item_id]

    def status(self, item_id: str) -> Status:
        """ready / blocked / claimed, as of the last `apply` or `advance`."""
        return self._status[item_id]

    @property
    def counts(self) -> dict[str, int]:
        """How many items are ready, blocked and claimed now (at the global cap, none ready)."""
        if self._capped() is not None:
            return {"ready": 0, "blocked": self._n_blocked + self._n_ready,
                    "claimed": len(self._claimed)}
        return {"ready": self._n_ready, "blocked": self._n_blocked, "claimed": len(self._claimed)}

    def claims(self) -> dict[str, Claim]:
        """The live claims, by item id (a copy)."""
        return dict(self._claimed)

    def ready_items(self) -> Generator[SnapshotItem, None, None]:
        """The ready items in run order, lazily: reading the first k costs O(k log N).

        Do not apply deltas while iterating; closing the iterator (or running it out) puts
        everything back.
        """
        if self._capped() is not None:
            return
        heap = self._ready_heap
        taken: list[tuple[_OrderKey, str]] = []
        seen: set[str] = set()
        try:
            while heap:
                entry = heapq.heappop(heap)
                key, iid = entry
                if (self._status.get(iid) != "ready" or self._keys.get(iid) != key
                        or iid in seen):
                    continue  # stale (the item left the ready list or its order changed), or
                    # a second entry of an item that left the list and came back
                seen.add(iid)
                taken.append(entry)
                yield self._items[iid]
        finally:
            for entry in taken:
                heapq.heappush(heap, entry)

    def snapshot(self) -> Snapshot:
        """The current items as a snapshot (in no particular order)."""
        return Snapshot(source=self.source, items=list(self._items.values()),
                        done_count=self.done_count)

    def ready_set(self) -> ReadySet:
        """The complete Ready-set now, reasons and cycles included (O(N log N): for reports)."""
        return compute_ready_set(self.snapshot(), now=self._now,
                                 children_block=self.children_block, global_cap=self.global_cap)

    # -- internals -----------------------------------------------------------------------------

    def _index_refs(self, it: SnapshotItem) -> None:
        for ref in _refs(it):
            holders = self._refs_to.get(ref)
            if holders is None:
                self._refs_to[ref] = {it.id}
            else:
                holders.add(it.id)

    def _unindex_refs(self, it: SnapshotItem) -> None:
        for ref in _refs(it):
            holders = self._refs_to.get(ref)
            if holders is not None:
                holders.discard(it.id)
                if not holders:
                    del self._refs_to[ref]

    def _set_ref_state(self, ref: str, state: BlockerState, pr: str | None = None,
                       keep: AbstractSet[str] = frozenset()) -> set[str]:
        """Give the references to `ref` the state `state` and pull request `pr`, except those
        held by the items in `keep`; the ids of the items whose references were rewritten."""
        holders = self._refs_to.get(ref)
        if not holders:
            return set()
        rewrite = holders - keep
        for iid in rewrite:
            it = self._items[iid]
            for b in it.blockers:
                if b.id == ref:
                    b.state, b.pr = state, pr
            for c in it.children:
                if c.id == ref:
                    c.state, c.pr = state, pr
        return rewrite

    def _index_groups(self, it: SnapshotItem) -> None:
        for g in it.groups:
            self._members.setdefault(g, set()).add(it.id)

    def _unindex_groups(self, it: SnapshotItem) -> None:
        for g in it.groups:
            members = self._members.get(g)
            if members is not None:
                members.discard(it.id)
                if not members:
                    del self._members[g]

    def _hold(self, iid: str, groups: tuple[str, ...]) -> None:
        """`iid` holds `groups` now (none when it holds no live claim): the other members of
        every group whose holders changed are re-evaluated."""
        old = self._holds.get(iid, ())
        if old == groups:
            return
        if groups:
            self._holds[iid] = groups
        else:
            self._holds.pop(iid, None)
        changed = set(old).symmetric_difference(groups)
        for g in changed:
            held = self._group_held.setdefault(g, set())
            if g in groups:
                held.add(iid)
            else:
                held.discard(iid)
            if not held:
                del self._group_held[g]
        for g in sorted(changed):
            for member in sorted(self._members.get(g, ())):
                if member != iid and member in self._items:
                    self._evaluate(member)

    def _group_busy(self, it: SnapshotItem) -> bool:
        """True when another item holds one of `it`'s groups."""
        for g in it.groups:
            held = self._group_held.get(g)
            if held and (len(held) > 1 or it.id not in held):
                return True
        return False

    def _drop(self, iid: str) -> None:
        it = self._items.pop(iid)
        self._unindex_refs(it)
        self._unindex_groups(it)
        self._file(iid, None)
        self._keys.pop(iid, None)
        self._claimed.pop(iid, None)
        self._retrying.pop(iid, None)
        self._busy.discard(iid)
        self._hold(iid, ())

    def _file(self, iid: str, status: Status | None) -> None:
        """Move `iid` to `status` (None: out of the set), keeping the counters right."""
        old = self._status.pop(iid, None)
        if old == "ready":
            self._n_ready -= 1
        elif old == "blocked":
            self._n_blocked -= 1
        if status is None:
            return
        self._status[iid] = status
        if status == "ready":
            self._n_ready += 1
        elif status == "blocked":
            self._n_blocked += 1

    def _evaluate(self, iid: str) -> None:
        """File one item under ready / blocked / claimed by the rules of `compute_ready_set`."""
        it = self._items[iid]
        key = _order_key(it)
        old_key = self._keys.get(iid)
        self._keys[iid] = key
        claim = it.claim
        self._claimed.pop(iid, None)
        if claim is not None and claim.is_live(self._now):
            self._claimed[iid] = claim
            if claim.lease_expires is not None:
                heapq.heappush(self._expiry, (_utc(claim.lease_expires).timestamp(), iid))
                if len(self._expiry) > 2 * len(self._claimed) + 64:
                    self._expiry = [(_utc(c.lease_expires).timestamp(), i)
                                    for i, c in self._claimed.items()
                                    if c.lease_expires is not None]
                    heapq.heapify(self._expiry)
            self._file(iid, "claimed")
            self._busy.discard(iid)
            self._hold(iid, it.groups)
            return
        self._hold(iid, ())
        self._retrying.pop(iid, None)
        retry_at = _utc(it.retry_after).timestamp() if it.retry_after is not None else None
        if retry_at is not None and retry_at > self._now.timestamp():
            self._retrying[iid] = retry_at
            heapq.heappush(self._retry_heap, (retry_at, iid))
        busy = bool(it.groups) and self._group_busy(it)
        if busy:
            self._busy.add(iid)
        else:
            self._busy.discard(iid)
        waits = busy or any(b.state != "done" for b in it.blockers) or it.failed is not None or (
            iid in self._retrying) or (bool(it.gates) and awaiting(it) is not None) or (
            self.children_block and any(c.state == "open" for c in it.children)) or stopped(it)
        if waits:
            self._file(iid, "blocked")
            return
        if self._status.get(iid) != "ready" or old_key != key:
            heapq.heappush(self._ready_heap, (key, iid))
        self._file(iid, "ready")
        if len(self._ready_heap) > 2 * self._n_ready + 64:
            self._compact()

    def _compact(self) -> None:
        """Drop the stale entries of the ready heap (amortised: it never exceeds 2x + 64)."""
        keys, status = self._keys, self._status
        self._ready_heap = list({(k, i) for k, i in self._ready_heap
                                 if status.get(i) == "ready" and keys.get(i) == k})
        heapq.heapify(self._ready_heap)


def _refs(it: SnapshotItem) -> Iterable[str]:
    """The ids `it` refers to as blockers or children (each once)."""
    if not it.children:
        return {b.id for b in it.blockers}
    return {b.id for b in it.blockers} | {c.id for c in it.children}
