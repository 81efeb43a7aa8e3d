"""The Ready-set: which open items can run now, which wait (and why), which are held.

Every tracker reduces itself to a `Snapshot` (the open items, each blocker a reference with its
state as the tracker reported it); `compute_ready_set` turns it into a `ReadySet` with one pure
function, so the rules live in one place whatever the tracker.

- Every item lands in exactly one of claimed / ready / blocked. A live claim wins; an expired
  lease counts as no claim.
- A blocked item carries every reason that applies, in a fixed order: blockers as listed (open
  or missing), open children, the failure, `retry_after`, `awaiting_approval`, `group_busy`,
  the cycle; `global_cap` only for an item nothing else keeps.
- Blocker states are the source's word: `done` releases, `open` blocks, `missing` /
  `inaccessible` block as missing; `unmerged` and `not_green` (`--done-when merged`) block with
  `waits_for_merge` and `merged_not_green`. A failed item keeps blocking its dependents.
- Cycles: Tarjan's strongly connected components, iterative, linear in items + edges.
- Order within each category: priority (lower first, None last), then created (oldest first,
  None last), then id; a naive datetime is UTC.
- `ReadySet.to_json_obj` is a versioned contract (`SCHEMA_VERSION`; docs/reference/ready-json.md).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from jr2_sources.capabilities.approvals.policy import Approval, awaiting

if TYPE_CHECKING:
    from .kit.markers import Ignored

__all__ = ["SCHEMA_VERSION", "BlockedEntry", "BlockerRef", "BlockerState", "Claim", "ClaimedEntry",
           "Entry", "HeldLocks", "ReadyEntry", "ReadySet", "Reason", "ReasonKind", "Snapshot",
           "SnapshotItem", "Status", "compute_ready_set", "find_cycles", "iso_utc"]

SCHEMA_VERSION = 1

BlockerState = Literal["open", "done", "missing", "inaccessible", "unmerged", "not_green"]
ReasonKind = Literal["open_blocker", "missing_blocker", "cycle", "open_children", "failed",
                     "waits_for_merge", "merged_not_green", "retry_after", "group_busy",
                     "global_cap", "awaiting_approval", "ignored_marker", "feedback_stopped"]
Status = Literal["ready", "blocked", "claimed"]


def _utc(dt: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is taken to be UTC already."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def iso_utc(dt: datetime) -> str:
    """ISO-8601 in UTC with a `Z` suffix, the one date format of the JSON contract."""
    text = _utc(dt).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


@dataclass(slots=True)
class BlockerRef:
    """A reference to an item that must be done first, with its state as the source saw it."""

    id: str
    state: BlockerState
    pr: str | None = None
    """The pull request the state was judged by (`unmerged`, `not_green`), e.g. its URL."""


@dataclass(slots=True)
class Claim:
    """Who holds an item, since when, and until when the lease runs (None: no lease end);
    `lapsed`: how many earlier holders of this claim let their lease lapse before settling it
    (their pool died or was stopped), as far as the tracker keeps count."""

    holder: str
    since: datetime
    lease_expires: datetime | None = None
    lapsed: int = 0

    def is_live(self, now: datetime) -> bool:
        """True while the claim holds; an expired lease counts as no claim (it can be taken)."""
        return self.lease_expires is None or _utc(self.lease_expires) > _utc(now)


@dataclass(slots=True)
class SnapshotItem:
    """One open item as a source reports it, reduced to what the Ready-set needs."""

    id: str
    title: str = ""
    url: str | None = None
    labels: list[str] = field(default_factory=list)
    priority: int | None = None
    created: datetime | None = None
    parent: str | None = None
    children: list[BlockerRef] = field(default_factory=list)
    blockers: list[BlockerRef] = field(default_factory=list)
    failed: str | None = None
    claim: Claim | None = None
    branch: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    in_scope: bool = True
    """False for an item the user's filter does not select, read only to show jr2's marks on it
    (a claim or failure left from another scope): never offered, claimed or settled."""
    attempts: int = 0
    """Attempts spent so far that ended in a transient failure
    (`jr2_sources.capabilities.attempts`),
    as the tracker records them; 0 when the item has none waiting to be retried."""
    retry_after: datetime | None = None
    """The earliest time of the next attempt after a transient failure: until then it waits."""
    groups: tuple[str, ...] = ()
    """The conflict groups of the item (`jr2_sources.capabilities.limits.policy`, `--exclusive-by`),
    sorted: while another item of one of them holds a live claim, it waits (`group_busy`)."""
    gates: tuple[Approval, ...] = ()
    """The item's approval gates as the tracker records them
    (`jr2_sources.capabilities.approvals.policy`): one awaiting an answer blocks the item
    (`awaiting_approval`); answered ones are handed to its next attempt."""
    ignored: tuple[Ignored, ...] = ()
    """jr2 markers on the item that changed nothing (`jr2_sources.kit.markers`: by an account
    the pool does not trust, or unsigned with a marker key): reason `ignored_marker` on its
    entry, whichever group it is in."""


@dataclass(slots=True)
class Snapshot:
    """The open items in a source's scope; `done_count` is None when it cannot be known cheaply."""

    source: str
    items: list[SnapshotItem]
    done_count: int | None = None


@dataclass(frozen=True, slots=True)
class HeldLocks:
    """The live lock comments on a comment tracker's coordination issue (`--control-issue`), which
    `jr2 ready` counts besides the live claims, as the pools do (`limits.lockreport`); `control`
    None: the issue was not read (the report counts live claims only, and says so)."""

    control: str | None = None
    count: int = 0
    """Live lock comments on `control`."""
    groups: Mapping[str, str] = field(default_factory=dict)
    """Each group a live lock names, and the item of that lock."""
    ignored: tuple[Ignored, ...] = ()
    """Lock markers on `control` that count for nothing (`jr2_sources.kit.markers`): `mark`
    names each on the entry of the item it names."""

    def mark(self, snapshot: Snapshot) -> None:
        """Add each ignored lock marker to the `ignored` of the item it names in `snapshot`."""
        if not self.ignored:
            return
        for it in snapshot.items:
            mine = tuple(ig for ig in self.ignored if ig.about == it.id)
            if mine:
                it.ignored = (*it.ignored, *mine)


@dataclass(slots=True)
class Reason:
    """One reason an item is blocked; only the fields of its kind are set.

    open_blocker: `ref`, `held_by`. missing_blocker: `ref`, `detail` (the ref's state). cycle:
    `cycle` (index into `ReadySet.cycles`), `refs` (its members). open_children: `refs`. failed,
    feedback_stopped: `detail` (why). waits_for_merge, merged_not_green: `ref` (the blocker),
    `detail` (its pull request). retry_after: `detail` (ISO-8601 UTC), `attempts` (spent).
    group_busy: `ref` (the group), `held_by` (the item holding it). global_cap: `count` (live
    claims, or live locks when more), `cap`, `locks` (`HeldLocks`) when the pools count lock
    comments. awaiting_approval: `ref` (the gate), `detail` (since, ISO-8601 UTC), `text` (the
    worker's reason), `refs` (who answered without write access: ignored).
    """

    kind: ReasonKind
    ref: str | None = None
    refs: list[str] | None = None
    held_by: str | None = None
    cycle: int | None = None
    detail: str | None = None
    attempts: int | None = None
    count: int | None = None
    cap: int | None = None
    text: str | None = None
    locks: HeldLocks | None = None

    def to_json_obj(self) -> dict[str, Any]:
        """The reason as the JSON contract spells it: only the keys of its kind."""
        obj: dict[str, Any] = {"kind": self.kind}
        for key, attr in _JSON_KEYS.get(self.kind, (("reason", "detail"),)):
            value = getattr(self, attr)
            obj[key] = list(value or ()) if attr == "refs" else value
        if self.kind == "global_cap" and self.locks is not None:  # what its pools count too
            read = self.locks.control is not None
            obj["locks"] = self.locks.count if read else None
            if read:
                obj["control_issue"] = self.locks.control
        return obj


_JSON_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "open_blocker": (("ref", "ref"), ("held_by", "held_by")),
    "missing_blocker": (("ref", "ref"), ("state", "detail")),
    # a cycle's members are named once, in the top-level `cycles` list: a reason only points
    # at it (listing them per member would grow with the square of the cycle's size)
    "cycle": (("cycle", "cycle"),),
    "open_children": (("refs", "refs"),),
    "waits_for_merge": (("ref", "ref"), ("pr", "detail")),
    "merged_not_green": (("ref", "ref"), ("pr", "detail")),
    "retry_after": (("at", "detail"), ("attempts", "attempts")),
    "awaiting_approval": (("gate", "ref"), ("since", "detail"), ("reason", "text"),
                          ("ignored_answers_by", "refs")),
    "group_busy": (("group", "ref"), ("held_by", "held_by")),
    "global_cap": (("count", "count"), ("cap", "cap")),
}
"""Each reason kind's JSON keys, in the contract's order, and the field each is read from
(any other kind: `reason` from `detail`)."""


def _ignored(it: SnapshotItem) -> dict[str, Any]:
    """`reasons` of a ready or claimed entry: only its ignored markers, and only when it has
    some (ISSUE-NOTES 7: entries gain reasons additively)."""
    return {"reasons": [ig.to_json_obj() for ig in it.ignored]} if it.ignored else {}


def _entry_obj(it: SnapshotItem, **fields: Any) -> dict[str, Any]:
    """An entry's JSON: the item's id, title and url, the entry's own `fields`, and the
    source-specific `extra` only when there is some."""
    obj = {"id": it.id, "title": it.title, "url": it.url, **fields}
    if it.extra:
        obj["extra"] = dict(it.extra)
    return obj


@dataclass(slots=True)
class ReadyEntry:
    """An item that can run now."""

    item: SnapshotItem
    status: ClassVar[Status] = "ready"

    def to_json_obj(self) -> dict[str, Any]:
        """The entry as the JSON contract spells it."""
        it = self.item
        return _entry_obj(it, labels=list(it.labels), priority=it.priority, branch=it.branch,
                          **_ignored(it))


@dataclass(slots=True)
class _Why:
    """What a blocked item's reasons are read from: the live holders, the cycles and the
    children rule of the Ready-set it belongs to. Reasons are built from it on first use, so
    the pool's path (which needs only the ready list) never builds them."""

    holders: dict[str, str]
    cycles: list[list[str]]
    cycle_of: dict[str, int]
    children_block: bool
    now: datetime
    group_holders: dict[str, str] = field(default_factory=dict)
    capped: tuple[int, int] | None = None
    locks: HeldLocks | None = None

    def reasons(self, it: SnapshotItem) -> list[Reason]:
        """Every reason `it` waits, in the fixed order: blockers as listed (a ref repeated as
        is counts once), open children, the failure, the retry time, the busy groups, the cycle;
        `global_cap` alone when nothing else keeps it (it would be ready under the cap)."""
        reasons: list[Reason] = []
        seen: set[tuple[str, str]] = set()
        for b in it.blockers:
            state = b.state
            if state == "done" or (b.id, state) in seen:
                continue
            seen.add((b.id, state))
            if state == "open":
                reasons.append(Reason("open_blocker", b.id, None, self.holders.get(b.id)))
            elif state == "unmerged":
                reasons.append(Reason("waits_for_merge", b.id, None, None, None, b.pr))
            elif state == "not_green":
                reasons.append(Reason("merged_not_green", b.id, None, None, None, b.pr))
            else:
                reasons.append(Reason("missing_blocker", b.id, None, None, None, state))
        if self.children_block and it.children:
            open_children = [c.id for c in it.children if c.state == "open"]
            if open_children:
                reasons.append(Reason("open_children", None, open_children))
        if it.failed is not None:
            reasons.append(Reason("failed", None, None, None, None, it.failed))
        if stopped(it):  # --on-feedback rerun: a person took the loop over
            reasons.append(Reason("feedback_stopped", None, None, None, None,
                                  it.extra["feedback_stopped"]))
        if _waits_for_retry(it, self.now):
            reasons.append(Reason("retry_after", None, None, None, None,
                                  iso_utc(it.retry_after), it.attempts))  # type: ignore[arg-type]
        gate = awaiting(it) if it.gates else None
        if gate is not None:
            reasons.append(Reason("awaiting_approval", gate.name, list(gate.ignored),
                                  detail=iso_utc(gate.at), text=gate.reason))
        for g in it.groups:
            holder = self.group_holders.get(g)
            if holder is not None and holder != it.id:
                reasons.append(Reason("group_busy", g, None, holder))
        i = self.cycle_of.get(it.id)
        if i is not None:
            reasons.append(Reason("cycle", None, self.cycles[i], None, i))
        if not reasons and self.capped is not None:
            reasons.append(Reason("global_cap", count=self.capped[0], cap=self.capped[1],
                                  locks=self.locks))
        return reasons


@dataclass(slots=True)
class BlockedEntry:
    """An item that cannot run yet, with every reason why (`reasons`, built on first use)."""

    item: SnapshotItem
    _reasons: list[Reason] | None = field(default=None, repr=False, compare=False)
    _why: _Why | None = field(default=None, repr=False, compare=False)
    status: ClassVar[Status] = "blocked"

    @property
    def reasons(self) -> list[Reason]:
        """Every reason the item waits, in the order the module notes give."""
        if self._reasons is None:
            self._reasons = [] if self._why is None else self._why.reasons(self.item)
        return self._reasons

    def to_json_obj(self) -> dict[str, Any]:
        """The entry as the JSON contract spells it."""
        it = self.item
        return _entry_obj(it, labels=list(it.labels), priority=it.priority,
                          reasons=[r.to_json_obj() for r in self.reasons]
                          + [ig.to_json_obj() for ig in it.ignored])


@dataclass(slots=True)
class ClaimedEntry:
    """An item a pool holds under a live claim."""

    item: SnapshotItem
    claim: Claim
    status: ClassVar[Status] = "claimed"

    def to_json_obj(self) -> dict[str, Any]:
        """The entry as the JSON contract spells it."""
        c = self.claim
        return _entry_obj(self.item, holder=c.holder, since=iso_utc(c.since),
                          lease_expires=None if c.lease_expires is None
                          else iso_utc(c.lease_expires), **_ignored(self.item))


Entry: TypeAlias = ReadyEntry | BlockedEntry | ClaimedEntry


@dataclass(slots=True)
class ReadySet:
    """The Ready-set of one snapshot: ready, blocked and claimed entries, in run order, and cycles.

    Entries keep their `SnapshotItem`, so the blocker refs (the graph's edges) stay reachable
    through `entry(id).item.blockers` without being part of the JSON contract.
    """

    source: str
    generated_at: datetime
    ready: list[ReadyEntry]
    blocked: list[BlockedEntry]
    claimed: list[ClaimedEntry]
    cycles: list[list[str]]
    done_count: int | None = None
    schema_version: int = SCHEMA_VERSION
    _by_id: dict[str, Entry] | None = field(default=None, init=False, repr=False, compare=False)
    _cycle_of: dict[str, int] | None = field(default=None, init=False, repr=False,
                                             compare=False)

    @property
    def counts(self) -> dict[str, int | None]:
        """How many items are ready, blocked, claimed, and done (None when the source can't say)."""
        return {
            "ready": len(self.ready),
            "blocked": len(self.blocked),
            "claimed": len(self.claimed),
            "done": self.done_count,
        }

    def entries(self) -> Iterator[Entry]:
        """Every entry: ready, then blocked, then claimed, each in run order."""
        yield from self.ready
        yield from self.blocked
        yield from self.claimed

    def entry(self, item_id: str) -> Entry:
        """The entry of one item; KeyError when the snapshot had no such open item."""
        return self._index()[item_id]

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._index()

    def _index(self) -> dict[str, Entry]:
        """Entries by id, built on first use (the pool's path never looks an entry up)."""
        if self._by_id is None:
            self._by_id = {e.item.id: e for e in self.entries()}
        return self._by_id

    def cycle_index(self, item_id: str) -> int | None:
        """The index in `cycles` of the cycle this item is part of, or None."""
        if self._cycle_of is None:
            self._cycle_of = _cycle_members(self.cycles)
        return self._cycle_of.get(item_id)

    def to_json_obj(self) -> dict[str, Any]:
        """The versioned JSON contract (schema_version 1) as plain dicts and lists."""
        return {
            "schema_version": self.schema_version,
            "source": self.source,
            "generated_at": iso_utc(self.generated_at),
            "ready": [e.to_json_obj() for e in self.ready],
            "blocked": [e.to_json_obj() for e in self.blocked],
            "claimed": [e.to_json_obj() for e in self.claimed],
            "cycles": [list(c) for c in self.cycles],
            "counts": self.counts,
        }


def _cyclic_components(succ: Sequence[Sequence[int] | None]) -> list[list[int]]:
    """Tarjan's strongly connected components over nodes 0..n-1, iteratively (an explicit stack
    of iterators); only the cyclic ones are returned: size > 1, or a node with a self-edge.

    `succ[v]` lists v's successors, or is None when v has none (it cannot be on a cycle and is
    never entered). Integers and lists rather than ids and dicts: at 100k items the walk is
    bound by memory access, and this halves it. `index[v]` is -2 before v is visited and -1
    once its component is done, which saves an on-stack set.
    """
    index = [-1 if s is None else -2 for s in succ]
    low = [0] * len(succ)
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root, root_succ in enumerate(succ):
        if index[root] != -2 or root_succ is None:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        work: list[tuple[int, Iterator[int]]] = [(root, iter(root_succ))]
        while work:
            v, successors = work[-1]
            descended = False
            for w in successors:
                iw = index[w]
                if iw == -2:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    work.append((w, iter(succ[w] or ())))
                    descended = True
                    break
                if iw >= 0 and iw < low[v]:
                    low[v] = iw
            if descended:
                continue
            work.pop()
            lv = low[v]
            if work:
                parent = work[-1][0]
                if lv < low[parent]:
                    low[parent] = lv
            if lv == index[v]:
                w = stack.pop()
                index[w] = -1
                if w == v:
                    if v in (succ[v] or ()):
                        components.append([v])
                    continue
                component = [w]
                while w != v:
                    w = stack.pop()
                    index[w] = -1
                    component.append(w)
                components.append(component)
    return components


def _name_cycles(
    components: list[list[int]], succ: Sequence[Sequence[int] | None], names: Sequence[str]
) -> list[list[str]]:
    """Cyclic components as ids, each in edge order from its smallest id (`_order_cycle`),
    sorted by first member."""
    cycles = []
    for component in components:
        graph = {names[v]: [names[w] for w in succ[v] or ()] for v in component}
        cycles.append(_order_cycle(graph) if len(component) > 1 else list(graph))
    cycles.sort(key=lambda c: c[0])
    return cycles


def _order_cycle(graph: Mapping[str, Sequence[str]]) -> list[str]:
    """The members of one component (the keys of `graph`) in order along edges from the smallest
    id, each step to the smallest unvisited member; members the walk cannot reach this way
    follow, sorted."""
    current = min(graph)
    order = [current]
    seen = {current}
    while True:
        candidates = [w for w in graph[current] if w in graph and w not in seen]
        nxt = min(candidates, default=None)
        if nxt is None:
            break
        order.append(nxt)
        seen.add(nxt)
        current = nxt
    if len(order) < len(graph):
        order.extend(sorted(graph.keys() - seen))
    return order


def find_cycles(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """The cycles of a directed graph (node -> successors): components of size > 1 and self-edges.

    Each cycle is listed once, members in edge order from its smallest id; cycles sorted by first
    member. Targets that are not keys have no out-edge and are ignored. Linear time, no recursion.
    """
    names = list(graph)
    position = {name: i for i, name in enumerate(names)}
    succ: list[list[int] | None] = []
    for name in names:
        targets = [position[w] for w in graph[name] if w in position]
        succ.append(targets or None)
    return _name_cycles(_cyclic_components(succ), succ, names)


def _waits_for_retry(it: SnapshotItem, now: datetime) -> bool:
    """True while a transient failure's backoff runs (`retry_after` is still ahead)."""
    return it.retry_after is not None and _utc(it.retry_after) > now


def _group_busy(it: SnapshotItem, by_group: dict[str, str]) -> bool:
    """True when another item holds one of `it`'s conflict groups."""
    return bool(by_group) and any(by_group.get(g, it.id) != it.id for g in it.groups)


def _order_key(item: SnapshotItem) -> tuple[bool, int, bool, float, str]:
    """Run order: priority (None last), created (oldest first, None last), id."""
    p, c = item.priority, item.created
    return (
        p is None,
        0 if p is None else p,
        c is None,
        0.0 if c is None else _utc(c).timestamp(),
        item.id,
    )


def group_holders(claimed: Iterable[SnapshotItem]) -> dict[str, str]:
    """Each conflict group held by a live claim, and the item holding it (the smallest id when
    several do, e.g. claims of a pool without `--exclusive-by`)."""
    out: dict[str, str] = {}
    for it in claimed:
        for g in it.groups:
            held = out.get(g)
            if held is None or it.id < held:
                out[g] = it.id
    return out


def capped(live: int, global_cap: int | None) -> tuple[int, int] | None:
    """(live claims, cap) when `global_cap` is reached, so nothing more may be claimed."""
    return None if global_cap is None or live < global_cap else (live, global_cap)


def compute_ready_set(
    snapshot: Snapshot, *, now: datetime, children_block: bool = True,
    global_cap: int | None = None, locks: HeldLocks | None = None,
) -> ReadySet:
    """Split a snapshot into ready / blocked / claimed and find its cycles (pure, linear time).

    `now` decides which leases have expired and becomes `generated_at`. With `children_block`
    an item with open children waits for them. An item of a conflict group another item holds
    waits (`group_busy`); with `global_cap`, while that many claims are live, every item that
    would be ready waits. `locks`: what a comment tracker's pools also count (`HeldLocks`).
    Raises ValueError when an id appears twice (a source must deduplicate).
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _compute(snapshot, _utc(now), children_block, global_cap, locks)
    finally:
        if paused:
            gc.enable()


def _cycle_members(cycles: list[list[str]]) -> dict[str, int]:
    """Each cycle member's index in `cycles`."""
    return {m: i for i, members in enumerate(cycles) for m in members}


def _compute(snapshot: Snapshot, now: datetime, children_block: bool,
             global_cap: int | None = None, locks: HeldLocks | None = None) -> ReadySet:
    """The body of `compute_ready_set`, run with the cyclic GC paused."""
    items = snapshot.items
    position = {it.id: i for i, it in enumerate(items)}
    if len(position) != len(items):
        _raise_duplicate(snapshot)
    holders = {
        it.id: it.claim.holder for it in items if it.claim is not None and it.claim.is_live(now)
    }
    by_group = group_holders(it for it in items if it.groups and it.id in holders)
    if locks is not None:  # a group a live lock names is held, whoever's reading shows it
        for g, iid in locks.groups.items():
            by_group.setdefault(g, iid)
    succ: list[list[int] | None] = []  # graph edges by position: item -> its open blockers
    ready: list[ReadyEntry] = []
    blocked: list[SnapshotItem] = []
    claimed: list[ClaimedEntry] = []
    # One pass files each item under its category and builds the graph (the hot path at 100k).
    # It only decides *whether* an item waits; *why* is built on first use (`_Why`). Cycle
    # members always have an open blocker, so they are blocked already.
    for it in items:
        waits = False
        successors: list[int] | None = None
        for b in it.blockers:
            state = b.state
            if state == "done":
                continue
            waits = True
            if state == "open":
                j = position.get(b.id)
                if j is not None:
                    if successors is None:
                        successors = [j]
                    else:
                        successors.append(j)
        succ.append(successors)
        if not waits:
            waits = _marked(it, now) or stopped(it) or (
                children_block and any(c.state == "open" for c in it.children)) or (
                _group_busy(it, by_group))
        claim = it.claim
        if claim is not None and it.id in holders:
            claimed.append(ClaimedEntry(it, claim))
        elif not it.in_scope and not _marked(it, now):
            continue  # listed only for a mark it no longer has (an expired claim): not shown
        elif waits:
            blocked.append(it)
        else:
            ready.append(ReadyEntry(it))
    cycles = _name_cycles(_cyclic_components(succ), succ, [it.id for it in items])
    full = capped(max(len(holders), locks.count if locks is not None else 0), global_cap)
    if full is not None and ready:
        blocked.extend(e.item for e in ready)
        ready = []
    why = _Why(holders, cycles, _cycle_members(cycles), children_block, now, by_group, full,
               locks)
    blocked.sort(key=_order_key)
    ready.sort(key=lambda e: _order_key(e.item))
    claimed.sort(key=lambda e: _order_key(e.item))
    return ReadySet(
        source=snapshot.source,
        generated_at=now,
        ready=ready,
        blocked=[BlockedEntry(it, None, why) for it in blocked],
        claimed=claimed,
        cycles=cycles,
        done_count=snapshot.done_count,
    )


def stopped(it: SnapshotItem) -> bool:
    """Has a person stopped the feedback loop of `it` (`extra["feedback_stopped"]`)? Then it
    waits for them (reason `feedback_stopped`)."""
    return bool(it.extra) and isinstance(it.extra.get("feedback_stopped"), str)


def _marked(it: SnapshotItem, now: datetime) -> bool:
    """Does an item carry a mark of jr2's besides a claim: failed, a retry waiting, a gate
    awaiting an answer? (An item outside the filter is shown only for its marks.)"""
    return (it.failed is not None or _waits_for_retry(it, now)
            or (bool(it.gates) and awaiting(it) is not None))


def _raise_duplicate(snapshot: Snapshot) -> None:
    """Name the first id a snapshot lists twice (a defect of the source that built it)."""
    seen: set[str] = set()
    for it in snapshot.items:
        if it.id in seen:
            raise ValueError(f"snapshot of {snapshot.source} lists item {it.id!r} twice")
        seen.add(it.id)
