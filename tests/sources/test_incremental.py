"""The incremental Ready-set (jr2_sources.capabilities.deltas.incremental) against the reference,
`compute_ready_set`.

The property test keeps a small tracker ("world"), changes it step by step and hands the
incremental set only what a tracker would report: the items whose own data changed (a blocker
closing does not change the blocked item, ISSUE-NOTES 6). After every step the incremental set
must give exactly the Ready-set a full recomputation gives over the world's snapshot.

The world judges its listed items by pull requests as GitHub's `--done-when merged` does
(`Thing.merge`): a member of the set may be `unmerged`, `not_green` or (held) `done` as a
blocker, which its delta says in `Delta.as_blocker`; one that landed and is not held leaves.
A dependent labelled `s` with exactly one blocker, `unmerged`, counts it `done` (GitHub's
`--stack`): references to one item that differ between holders, which the world delivers
whenever it delivers the item they name. Deltas list their items in a random order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jr2_sources.capabilities.approvals.policy import Approval
from jr2_sources.capabilities.deltas.incremental import Delta, IncrementalReadySet
from jr2_sources.readyset import (
    BlockerRef,
    BlockerState,
    Claim,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
IDS = [f"T{i}" for i in range(8)]
LABELS = ["a", "b", "g1", "g2", "s"]  # g*: the item's conflict groups (`--exclusive-by label:g*`),
# s: it stacks on a single unmerged blocker


@dataclass
class Thing:
    """One item of the world as a tracker holds it."""

    exists: bool = True
    done: bool = False
    needs: list[str] = field(default_factory=list)
    parent: str | None = None
    failed: str | None = None
    claim: tuple[str, float | None] | None = None  # holder, lease end (seconds after T0)
    labels: frozenset[str] = frozenset()
    priority: int | None = None
    gate: str | None = None  # the status of its approval gate `deploy` (awaiting, approved, ...)
    merge: BlockerState = "open"  # its state as a blocker by its pull requests, when listed
    pr: str | None = None  # the pull request `merge` was judged by


class World:
    """A tracker: things by id, a clock, a label filter (like the local source's)."""

    def __init__(self, things: dict[str, Thing], wanted: frozenset[str]) -> None:
        self.things = things
        self.wanted = wanted
        self.t = 0.0

    @property
    def now(self) -> datetime:
        return T0 + timedelta(seconds=self.t)

    def listed(self, th: Thing) -> bool:
        """The filter picks it, or it carries one of jr2's marks (its PRs are judged then)."""
        return self.wanted <= th.labels or th.claim is not None or th.failed is not None

    def state(self, iid: str) -> BlockerState:
        """The id's state as a blocker."""
        th = self.things.get(iid)
        if th is None or not th.exists:
            return "missing"
        if th.done:
            return "done"
        return th.merge if self.listed(th) else "open"

    def ref(self, iid: str) -> BlockerRef:
        """A reference to `iid` as every item naming it holds it (but see `build`: `--stack`)."""
        state = self.state(iid)
        th = self.things.get(iid)
        if th is None or state in ("open", "missing") or th.done or not self.listed(th):
            return BlockerRef(iid, state)
        return BlockerRef(iid, state, th.pr)  # judged by its pull request

    def build(self, iid: str) -> SnapshotItem | None:
        """The item as the tracker's snapshot shows it, or None when it is not in the set."""
        th = self.things.get(iid)
        if th is None or not th.exists or th.done:
            return None
        if not self.listed(th) or (th.merge == "done" and th.claim is None):
            return None  # outside the filter, or landed (left out unless held)
        kids = [k for k, o in self.things.items() if o.exists and o.parent == iid]
        blockers = [self.ref(n) for n in th.needs]
        if "s" in th.labels and len(blockers) == 1 and blockers[0].state == "unmerged":
            blockers = [BlockerRef(blockers[0].id, "done", blockers[0].pr)]  # stacked on it
        claim = None
        if th.claim is not None:
            holder, end = th.claim
            claim = Claim(holder, T0, None if end is None else T0 + timedelta(seconds=end))
        return SnapshotItem(
            id=iid, title=iid, labels=sorted(th.labels), priority=th.priority,
            created=T0 - timedelta(seconds=IDS.index(iid) if iid in IDS else 0),
            parent=th.parent,
            blockers=blockers, children=[self.ref(k) for k in kids],
            failed=th.failed, claim=claim,
            groups=tuple(sorted(g for g in th.labels if g.startswith("g"))),
            gates=() if th.gate is None else (Approval("deploy", th.gate, T0, "why"),))  # type: ignore[arg-type]

    def done_count(self) -> int:
        return sum(1 for th in self.things.values()
                   if th.exists and th.done and self.wanted <= th.labels)

    def snapshot(self) -> Snapshot:
        items = [it for it in map(self.build, self.things) if it is not None]
        return Snapshot("world", items, self.done_count())

    def delta(self, touched: set[str], rnd: Random) -> Delta:
        """What a tracker reports after a step: only the items it changed, in any order, with
        the state as a blocker of those that are not `open`; and the holders whose reference
        to one of them is not that state (`--stack`), as a source must deliver them."""
        d = Delta(done_count=self.done_count())
        built = {iid: self.build(iid) for iid in self.things}
        deliver = set(touched)
        for iid in touched:
            if built.get(iid) is not None:
                mine = self.ref(iid)
                deliver.update(h for h, it in built.items() if it is not None and any(
                    b.id == iid and (b.state, b.pr) != (mine.state, mine.pr)
                    for b in it.blockers))
        for iid in sorted(deliver):
            it = built.get(iid) or self.build(iid)
            if it is None:
                d.left[iid] = self.state(iid)
                continue
            d.items.append(it)
            if self.state(iid) != "open":
                d.as_blocker[iid] = self.ref(iid)
        rnd.shuffle(d.items)
        return d


_MERGE = st.sampled_from(["open", "unmerged", "not_green", "done"])
_PR = st.none() | st.sampled_from(["pr1", "pr2"])


def _thing() -> st.SearchStrategy[Thing]:
    ref = st.sampled_from([*IDS, "X9"])  # X9 never exists: a missing blocker
    return st.builds(
        Thing,
        exists=st.booleans(),
        done=st.booleans(),
        needs=st.lists(ref, max_size=3),
        parent=st.none() | st.sampled_from(IDS),
        failed=st.none() | st.just("boom"),
        claim=st.none() | st.tuples(st.sampled_from(["me", "them"]),
                                     st.none() | st.floats(0, 30)),
        labels=st.frozensets(st.sampled_from(LABELS)),
        priority=st.none() | st.integers(0, 3),
        gate=st.none() | st.sampled_from(["awaiting", "approved", "rejected"]),
        merge=_MERGE,
        pr=_PR,
    )


_step = st.one_of(
    st.tuples(st.just("done"), st.sampled_from(IDS)),
    st.tuples(st.just("reopen"), st.sampled_from(IDS)),
    st.tuples(st.just("delete"), st.sampled_from(IDS)),
    st.tuples(st.just("create"), st.sampled_from(IDS)),
    st.tuples(st.just("fail"), st.sampled_from(IDS)),
    st.tuples(st.just("clear"), st.sampled_from(IDS)),
    st.tuples(st.just("claim"), st.sampled_from(IDS), st.sampled_from(["me", "them"]),
              st.none() | st.floats(0, 30)),
    st.tuples(st.just("unclaim"), st.sampled_from(IDS)),
    st.tuples(st.just("needs"), st.sampled_from(IDS),
              st.lists(st.sampled_from([*IDS, "X9"]), max_size=3)),
    st.tuples(st.just("parent"), st.sampled_from(IDS), st.none() | st.sampled_from(IDS)),
    st.tuples(st.just("label"), st.sampled_from(IDS), st.frozensets(st.sampled_from(LABELS))),
    st.tuples(st.just("priority"), st.sampled_from(IDS), st.none() | st.integers(0, 3)),
    st.tuples(st.just("tick"), st.floats(0, 15)),
    st.tuples(st.just("gate"), st.sampled_from(IDS),
              st.none() | st.sampled_from(["awaiting", "approved", "rejected"])),
    st.tuples(st.just("judge"), st.sampled_from(IDS), _MERGE, _PR),
)


def _do(world: World, step: tuple[Any, ...]) -> set[str]:
    """Apply one step; the ids whose own data the tracker changed."""
    kind = step[0]
    if kind == "tick":
        world.t += step[1]
        return set()
    iid = step[1]
    th = world.things.setdefault(iid, Thing(exists=False))
    touched = {iid}
    if kind == "done":
        th.done = True
    elif kind == "reopen":
        th.done = False
    elif kind in ("delete", "create"):
        th.exists = kind == "create"
        if th.parent is not None:
            touched.add(th.parent)  # the parent's list of children changed
    elif kind == "fail":
        th.failed = "boom"
    elif kind == "clear":
        th.failed = None
    elif kind == "claim":
        th.claim = (step[2], None if step[3] is None else world.t + step[3])
    elif kind == "unclaim":
        th.claim = None
    elif kind == "needs":
        th.needs = list(step[2])
    elif kind == "parent":
        touched.update(p for p in (th.parent, step[2]) if p is not None)
        th.parent = step[2]
    elif kind == "label":
        th.labels = step[2]
    elif kind == "priority":
        th.priority = step[2]
    elif kind == "gate":  # parked awaiting approval, or answered
        th.gate = step[2]
    elif kind == "judge":  # its pull requests judged again (a PR opened, merged, checks ran)
        th.merge, th.pr = step[2], step[3]
    return touched


def _check(inc: IncrementalReadySet, world: World, children_block: bool,
           global_cap: int | None = None) -> None:
    ref = compute_ready_set(world.snapshot(), now=world.now, children_block=children_block,
                            global_cap=global_cap)
    assert inc.ready_set().to_json_obj() == ref.to_json_obj()
    assert [it.id for it in inc.ready_items()] == [e.item.id for e in ref.ready]
    assert inc.counts == {"ready": len(ref.ready), "blocked": len(ref.blocked),
                          "claimed": len(ref.claimed)}
    if global_cap is None or len(ref.claimed) < global_cap:  # at the cap ready items count blocked
        filed = {e.item.id: "ready" for e in ref.ready} | {
            e.item.id: "blocked" for e in ref.blocked} | {e.item.id: "claimed" for e in ref.claimed}
        assert {iid: inc.status(iid) for iid in filed} == filed


@settings(max_examples=300, deadline=None)
@given(
    things=st.dictionaries(st.sampled_from(IDS), _thing(), max_size=len(IDS)),
    wanted=st.frozensets(st.sampled_from(["a"])),
    steps=st.lists(_step, max_size=25),
    children_block=st.booleans(),
    batch=st.integers(1, 3),
    global_cap=st.none() | st.integers(1, 3),
    rnd=st.randoms(use_true_random=False),
)
def test_any_sequence_of_deltas_gives_the_full_recomputation(
    things: dict[str, Thing], wanted: frozenset[str], steps: list[tuple[Any, ...]],
    children_block: bool, batch: int, global_cap: int | None, rnd: Random,
) -> None:
    world = World(things, wanted)
    inc = IncrementalReadySet(world.snapshot(), now=world.now, children_block=children_block,
                              global_cap=global_cap)
    _check(inc, world, children_block, global_cap)
    touched: set[str] = set()
    for n, step in enumerate(steps, 1):
        touched |= _do(world, step)
        if n % batch == 0 or n == len(steps):  # several changes may arrive in one delta
            inc.apply(world.delta(touched, rnd), now=world.now)
            touched = set()
            _check(inc, world, children_block, global_cap)


def test_settling_a_blocker_touches_only_its_dependents() -> None:
    """Closing T0 re-evaluates T0's dependents and nothing else (counted evaluations)."""
    items = [SnapshotItem("T0")] + [SnapshotItem(f"D{i}", blockers=[BlockerRef("T0", "open")])
                                    for i in range(3)]
    items += [SnapshotItem(f"U{i}") for i in range(1000)]
    inc = IncrementalReadySet(Snapshot("s", items), now=T0)
    seen: list[str] = []
    evaluate = inc._evaluate

    def counting(iid: str) -> None:
        seen.append(iid)
        evaluate(iid)

    inc._evaluate = counting  # type: ignore[method-assign]
    inc.apply(Delta(left={"T0": "done"}), now=T0)
    assert sorted(seen) == ["D0", "D1", "D2"]
    assert inc.counts["ready"] == 1003
    assert next(inc.ready_items()).id == "D0"


def test_a_lease_ends_with_time_not_with_a_delta() -> None:
    claim = Claim("them", T0, T0 + timedelta(seconds=10))
    inc = IncrementalReadySet(Snapshot("s", [SnapshotItem("A", claim=claim)]), now=T0)
    assert inc.status("A") == "claimed"
    inc.advance(T0 + timedelta(seconds=10))
    assert inc.status("A") == "ready"
    inc.advance(T0 + timedelta(seconds=5))  # the clock went back: the claim is live again
    assert inc.status("A") == "claimed"


def test_a_delta_that_both_updates_and_drops_an_item_is_refused() -> None:
    inc = IncrementalReadySet(Snapshot("s", [SnapshotItem("A")]), now=T0)
    with pytest.raises(ValueError, match="both updates and drops 'A'"):
        inc.apply(Delta(items=[SnapshotItem("A")], left={"A": "done"}), now=T0)


def test_reading_the_ready_items_changes_nothing() -> None:
    inc = IncrementalReadySet(Snapshot("s", [SnapshotItem(f"A{i}") for i in range(5)]), now=T0)
    first = inc.ready_items()
    assert next(first).id == "A0"
    first.close()
    assert [it.id for it in inc.ready_items()] == [f"A{i}" for i in range(5)]


def test_a_retry_time_ends_with_time_not_with_a_delta() -> None:
    """An item waiting for its retry time (`retry_after`) is blocked, with that reason, in both
    the incremental set and the full computation, and becomes ready when the time comes."""
    later = T0 + timedelta(seconds=30)
    snap = Snapshot("s", [SnapshotItem("A", attempts=2, retry_after=later), SnapshotItem("B")])
    inc = IncrementalReadySet(snap, now=T0)
    assert inc.status("A") == "blocked" and inc.waiting_for_retry() == 1
    full = compute_ready_set(snap, now=T0)
    [entry] = full.blocked
    assert [r.to_json_obj() for r in entry.reasons] == [
        {"kind": "retry_after", "at": "2026-01-01T12:00:30Z", "attempts": 2}]
    assert inc.ready_set().to_json_obj() == full.to_json_obj()
    inc.advance(later - timedelta(seconds=1))
    assert inc.status("A") == "blocked"
    inc.advance(later)
    assert inc.status("A") == "ready" and inc.waiting_for_retry() == 0
    assert [e.item.id for e in compute_ready_set(snap, now=later).ready] == ["A", "B"]


def _unmerged_cycle(a_state: BlockerState, b_state: BlockerState) -> list[SnapshotItem]:
    """A and B block each other, C waits for A; the refs to A and B carry the states given."""
    a, b = BlockerRef("A", a_state, "pr1"), BlockerRef("B", b_state, "pr2")
    return [SnapshotItem("A", blockers=[b]), SnapshotItem("B", blockers=[a]),
            SnapshotItem("C", blockers=[BlockerRef("A", a_state, "pr1")])]


@pytest.mark.parametrize("order", [["A", "B"], ["B", "A"]])
def test_a_cycle_of_members_none_of_which_is_open_reads_as_the_full_reading(
        order: list[str]) -> None:
    """A and B, in a cycle while open, get pull requests: both delivered (in either order) with
    their state as a blocker. Nothing is a cycle any more, and C waits for A's merge, naming its
    pull request, exactly as a full reading says (before: the references were set to `open`,
    so the last one delivered read as an open blocker and the pair as a cycle)."""
    inc = IncrementalReadySet(Snapshot("s", _unmerged_cycle("open", "open")), now=T0)
    assert inc.ready_set().cycles == [["A", "B"]]
    now = _unmerged_cycle("unmerged", "not_green")
    by_id = {it.id: it for it in now}
    states = {"A": BlockerRef("A", "unmerged", "pr1"), "B": BlockerRef("B", "not_green", "pr2")}
    inc.apply(Delta(items=[by_id[i] for i in order], as_blocker=states), now=T0)
    full = compute_ready_set(Snapshot("s", _unmerged_cycle("unmerged", "not_green")), now=T0)
    assert inc.ready_set().to_json_obj() == full.to_json_obj()
    assert full.cycles == []
    assert [r.to_json_obj() for r in full.entry("C").reasons] == [  # type: ignore[union-attr]
        {"kind": "waits_for_merge", "ref": "A", "pr": "pr1"}]


def test_a_member_not_delivered_again_follows_its_blocker_state() -> None:
    """A delta that delivers only M (its PR merged with red checks) rewrites what the others
    hold: D, not delivered, now waits for green checks on M's merge, naming the new PR."""
    d = SnapshotItem("D", blockers=[BlockerRef("M", "unmerged", "pr1")])
    inc = IncrementalReadySet(Snapshot("s", [SnapshotItem("M"), d]), now=T0)
    inc.apply(Delta(items=[SnapshotItem("M", title="m")],
                    as_blocker={"M": BlockerRef("M", "not_green", "pr2")}), now=T0)
    [entry] = inc.ready_set().blocked
    assert [r.to_json_obj() for r in entry.reasons] == [
        {"kind": "merged_not_green", "ref": "M", "pr": "pr2"}]
    inc.apply(Delta(items=[SnapshotItem("M", title="m2")]), now=T0)  # no state: `open`
    [entry] = inc.ready_set().blocked
    assert [r.to_json_obj() for r in entry.reasons] == [
        {"kind": "open_blocker", "ref": "M", "held_by": None}]


def test_a_delivered_holder_keeps_the_reference_its_source_gave_it() -> None:
    """References to one item may differ between holders (GitHub `--stack`: S, with M as its
    only blocker and M's PR green, counts M done; D reads it unmerged). A delta that delivers
    M and S keeps S's own reference and rewrites D's, whatever the order."""
    for order in (["M", "S"], ["S", "M"]):
        items = [SnapshotItem("M"), SnapshotItem("D", blockers=[BlockerRef("M", "open")]),
                 SnapshotItem("S", blockers=[BlockerRef("M", "open")])]
        inc = IncrementalReadySet(Snapshot("s", items), now=T0)
        new = {"M": SnapshotItem("M"),
               "S": SnapshotItem("S", blockers=[BlockerRef("M", "done", "pr1")])}
        inc.apply(Delta(items=[new[i] for i in order],
                        as_blocker={"M": BlockerRef("M", "unmerged", "pr1")}), now=T0)
        assert [it.id for it in inc.ready_items()] == ["M", "S"]
        assert inc.status("D") == "blocked"


def test_a_state_as_a_blocker_for_an_item_not_delivered_is_refused() -> None:
    inc = IncrementalReadySet(Snapshot("s", [SnapshotItem("A")]), now=T0)
    with pytest.raises(ValueError, match="for 'A', which it does not deliver"):
        inc.apply(Delta(as_blocker={"A": BlockerRef("A", "done")}), now=T0)
