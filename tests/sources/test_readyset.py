"""The Ready-set rules (jr2_sources.readyset): one test per promise, the seed example first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jr2_sources.readyset import (
    BlockerRef,
    BlockerState,
    Claim,
    ReadySet,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
    find_cycles,
)

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def needs(*ids: str, state: BlockerState = "open") -> list[BlockerRef]:
    return [BlockerRef(i, state) for i in ids]


def compute(*items: SnapshotItem, children_block: bool = True, done: int | None = 0) -> ReadySet:
    return compute_ready_set(
        Snapshot("test", list(items), done), now=NOW, children_block=children_block
    )


def ids(entries: list[Any]) -> list[str]:
    return [e.item.id for e in entries]


def reasons_of(rs: ReadySet, item_id: str) -> list[dict[str, Any]]:
    entry = rs.entry(item_id)
    return [r.to_json_obj() for r in getattr(entry, "reasons", [])]


def seed() -> ReadySet:
    """The seed's four tickets: T-1, T-2 ready; T-3 needs both; T-4 needs a missing T-9."""
    return compute(
        SnapshotItem("T-1", "one"),
        SnapshotItem("T-2", "two"),
        SnapshotItem("T-3", "three", blockers=needs("T-1", "T-2")),
        SnapshotItem("T-4", "four", blockers=needs("T-9", state="missing")),
    )


# ---------------------------------------------------------------------------- the seed example


def test_seed_ready_items() -> None:
    assert ids(seed().ready) == ["T-1", "T-2"]


def test_seed_blocked_items() -> None:
    assert ids(seed().blocked) == ["T-3", "T-4"]


def test_seed_open_blockers_are_both_reasons() -> None:
    assert reasons_of(seed(), "T-3") == [
        {"kind": "open_blocker", "ref": "T-1", "held_by": None},
        {"kind": "open_blocker", "ref": "T-2", "held_by": None},
    ]


def test_seed_missing_blocker() -> None:
    assert reasons_of(seed(), "T-4") == [
        {"kind": "missing_blocker", "ref": "T-9", "state": "missing"}
    ]


def test_seed_json_contract() -> None:
    assert seed().to_json_obj() == {
        "schema_version": 1,
        "source": "test",
        "generated_at": "2026-01-01T12:00:00Z",
        "ready": [
            {
                "id": "T-1",
                "title": "one",
                "url": None,
                "labels": [],
                "priority": None,
                "branch": None,
            },
            {
                "id": "T-2",
                "title": "two",
                "url": None,
                "labels": [],
                "priority": None,
                "branch": None,
            },
        ],
        "blocked": [
            {
                "id": "T-3",
                "title": "three",
                "url": None,
                "labels": [],
                "priority": None,
                "reasons": [
                    {"kind": "open_blocker", "ref": "T-1", "held_by": None},
                    {"kind": "open_blocker", "ref": "T-2", "held_by": None},
                ],
            },
            {
                "id": "T-4",
                "title": "four",
                "url": None,
                "labels": [],
                "priority": None,
                "reasons": [{"kind": "missing_blocker", "ref": "T-9", "state": "missing"}],
            },
        ],
        "claimed": [],
        "cycles": [],
        "counts": {"ready": 2, "blocked": 2, "claimed": 0, "done": 0},
    }


# ---------------------------------------------------------------------------- blockers and claims


def test_done_blocker_does_not_block() -> None:
    rs = compute(SnapshotItem("A", blockers=needs("Z", state="done")))
    assert ids(rs.ready) == ["A"]


def test_inaccessible_blocker_is_a_missing_blocker() -> None:
    rs = compute(SnapshotItem("A", blockers=needs("Z", state="inaccessible")))
    assert reasons_of(rs, "A") == [{"kind": "missing_blocker", "ref": "Z", "state": "inaccessible"}]


def test_open_blocker_outside_the_snapshot_blocks() -> None:
    rs = compute(SnapshotItem("A", blockers=needs("elsewhere")))
    assert reasons_of(rs, "A") == [{"kind": "open_blocker", "ref": "elsewhere", "held_by": None}]


def test_repeated_blocker_ref_is_one_reason() -> None:
    rs = compute(SnapshotItem("A", blockers=needs("B", "B")), SnapshotItem("B"))
    assert len(reasons_of(rs, "A")) == 1


def test_held_by_names_the_holder_of_a_claimed_blocker() -> None:
    rs = compute(
        SnapshotItem("T-1", claim=Claim("pool-a@host", NOW - HOUR, NOW + HOUR)),
        SnapshotItem("T-3", blockers=needs("T-1")),
    )
    assert reasons_of(rs, "T-3") == [
        {"kind": "open_blocker", "ref": "T-1", "held_by": "pool-a@host"}
    ]


def test_held_by_is_none_when_the_blockers_lease_expired() -> None:
    rs = compute(
        SnapshotItem("T-1", claim=Claim("pool-a@host", NOW - 2 * HOUR, NOW - HOUR)),
        SnapshotItem("T-3", blockers=needs("T-1")),
    )
    assert reasons_of(rs, "T-3")[0]["held_by"] is None


def test_live_claim_makes_an_item_claimed() -> None:
    claim = Claim("pool-a@host", NOW - HOUR, NOW + HOUR)
    rs = compute(SnapshotItem("A", claim=claim))
    assert [(e.item.id, e.claim) for e in rs.claimed] == [("A", claim)]


def test_claim_without_lease_end_is_live() -> None:
    rs = compute(SnapshotItem("A", claim=Claim("pool-a@host", NOW - HOUR)))
    assert ids(rs.claimed) == ["A"]


def test_expired_lease_counts_as_no_claim() -> None:
    rs = compute(SnapshotItem("A", claim=Claim("pool-a@host", NOW - 2 * HOUR, NOW - HOUR)))
    assert ids(rs.ready) == ["A"]


def test_lease_ending_exactly_now_has_expired() -> None:
    rs = compute(SnapshotItem("A", claim=Claim("pool-a@host", NOW - HOUR, NOW)))
    assert ids(rs.ready) == ["A"]


def test_claim_takes_precedence_over_blockers() -> None:
    rs = compute(
        SnapshotItem("A", blockers=needs("B"), claim=Claim("p", NOW - HOUR, NOW + HOUR)),
        SnapshotItem("B"),
    )
    assert ids(rs.claimed) == ["A"]


def test_claimed_entry_json() -> None:
    rs = compute(SnapshotItem("A", "a", claim=Claim("p@h", NOW - HOUR, NOW + HOUR)))
    assert rs.to_json_obj()["claimed"] == [
        {
            "id": "A",
            "title": "a",
            "url": None,
            "holder": "p@h",
            "since": "2026-01-01T11:00:00Z",
            "lease_expires": "2026-01-01T13:00:00Z",
        }
    ]


# ---------------------------------------------------------------------------- failed and children


def test_failed_item_is_blocked_with_its_reason() -> None:
    rs = compute(SnapshotItem("A", failed="exit 1"))
    assert reasons_of(rs, "A") == [{"kind": "failed", "reason": "exit 1"}]


def test_failed_item_does_not_unblock_its_dependents() -> None:
    rs = compute(SnapshotItem("A", failed="exit 1"), SnapshotItem("B", blockers=needs("A")))
    assert reasons_of(rs, "B") == [{"kind": "open_blocker", "ref": "A", "held_by": None}]


def test_open_children_block_their_parent() -> None:
    rs = compute(SnapshotItem("P", children=needs("K1", "K2")), SnapshotItem("K1"))
    assert reasons_of(rs, "P") == [{"kind": "open_children", "refs": ["K1", "K2"]}]


def test_done_children_do_not_block() -> None:
    rs = compute(SnapshotItem("P", children=needs("K1", state="done")))
    assert ids(rs.ready) == ["P"]


def test_children_block_false_lifts_open_children() -> None:
    rs = compute(SnapshotItem("P", children=needs("K1")), SnapshotItem("K1"), children_block=False)
    assert ids(rs.ready) == ["K1", "P"]


def test_every_reason_that_applies_is_listed() -> None:
    rs = compute(
        SnapshotItem(
            "A",
            blockers=[*needs("B"), *needs("Z", state="missing")],
            children=needs("K"),
            failed="boom",
        ),
        SnapshotItem("B"),
    )
    assert [r["kind"] for r in reasons_of(rs, "A")] == [
        "open_blocker",
        "missing_blocker",
        "open_children",
        "failed",
    ]


# ---------------------------------------------------------------------------- cycles


def test_self_cycle_is_named_once() -> None:
    rs = compute(SnapshotItem("S", blockers=needs("S")))
    assert rs.cycles == [["S"]]


def test_self_cycle_member_has_cycle_reason() -> None:
    rs = compute(SnapshotItem("S", blockers=needs("S")))
    assert {"kind": "cycle", "cycle": 0} in reasons_of(rs, "S")


def three_cycle() -> ReadySet:
    """X needs Z, Z needs Y, Y needs X: along the edges X -> Z -> Y (not sorted order)."""
    return compute(
        SnapshotItem("Y", blockers=needs("X")),
        SnapshotItem("Z", blockers=needs("Y")),
        SnapshotItem("X", blockers=needs("Z")),
        SnapshotItem("W", blockers=needs("Y")),
    )


def test_three_cycle_named_once_in_edge_order() -> None:
    assert three_cycle().cycles == [["X", "Z", "Y"]]


@pytest.mark.parametrize("member", ["X", "Y", "Z"])
def test_three_cycle_members_point_at_their_cycle(member: str) -> None:
    assert {"kind": "cycle", "cycle": 0} in reasons_of(
        three_cycle(), member
    )


def test_item_blocked_by_a_cycle_member_is_not_in_the_cycle() -> None:
    assert reasons_of(three_cycle(), "W") == [{"kind": "open_blocker", "ref": "Y", "held_by": None}]


def test_cycles_are_sorted_by_first_member_and_indexed_accordingly() -> None:
    rs = compute(
        SnapshotItem("M", blockers=needs("N")),
        SnapshotItem("N", blockers=needs("M")),
        SnapshotItem("B", blockers=needs("A")),
        SnapshotItem("A", blockers=needs("B")),
    )
    assert [(c, rs.cycle_index(c[0])) for c in rs.cycles] == [(["A", "B"], 0), (["M", "N"], 1)]


def test_claimed_cycle_member_stays_claimed_and_the_cycle_is_listed() -> None:
    rs = compute(
        SnapshotItem("A", blockers=needs("B"), claim=Claim("p", NOW - HOUR)),
        SnapshotItem("B", blockers=needs("A")),
    )
    assert (ids(rs.claimed), rs.cycles) == (["A"], [["A", "B"]])


def test_done_ref_does_not_make_a_cycle() -> None:
    rs = compute(
        SnapshotItem("A", blockers=needs("B", state="done")),
        SnapshotItem("B", blockers=needs("A")),
    )
    assert rs.cycles == []


def test_find_cycles_lists_unreachable_members_sorted_after_the_walk() -> None:
    # A -> C -> B -> A is a cycle; D joins the component through A <-> D only.
    graph = {"A": ["C", "D"], "C": ["B"], "B": ["A"], "D": ["A"]}
    assert find_cycles(graph) == [["A", "C", "B", "D"]]


def test_find_cycles_with_an_edge_into_a_finished_component() -> None:
    # C is finished (its own component) before B, on the stack with A, looks at it again.
    assert find_cycles({"A": ["C", "B"], "B": ["C", "A"], "C": []}) == [["A", "B"]]


def test_find_cycles_ignores_acyclic_parts() -> None:
    assert find_cycles({"A": ["B"], "B": ["C"], "C": []}) == []


def test_find_cycles_on_a_200k_ring_does_not_recurse() -> None:
    n = 200_000
    graph = {f"r{i:06d}": [f"r{(i + 1) % n:06d}"] for i in range(n)}
    assert len(find_cycles(graph)[0]) == n


@pytest.fixture(scope="module")
def long_chain() -> ReadySet:
    """c0 needs c1 needs ... c199999 (a 200k-deep chain: deep enough for recursion to fail)."""
    n = 200_000
    items = [
        SnapshotItem(f"c{i}", blockers=needs(f"c{i + 1}") if i + 1 < n else []) for i in range(n)
    ]
    return compute_ready_set(Snapshot("chain", items), now=NOW)


def test_200k_deep_chain_computes(long_chain: ReadySet) -> None:
    assert ids(long_chain.ready) == ["c199999"]


# ---------------------------------------------------------------------------- order and shape


def test_order_is_priority_then_created_then_id() -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rs = compute(
        SnapshotItem("none-none-b"),
        SnapshotItem("none-none-a"),
        SnapshotItem("p2-old", priority=2, created=t0),
        SnapshotItem("p1-none", priority=1),
        SnapshotItem("p1-new", priority=1, created=t0 + HOUR),
        SnapshotItem("p1-old", priority=1, created=t0),
        SnapshotItem("none-old", created=t0),
        SnapshotItem("p0", priority=0),
    )
    assert ids(rs.ready) == [
        "p0",
        "p1-old",
        "p1-new",
        "p1-none",
        "p2-old",
        "none-old",
        "none-none-a",
        "none-none-b",
    ]


def test_order_compares_instants_across_zones_and_reads_naive_as_utc() -> None:
    rs = compute(
        SnapshotItem("naive-noon", created=datetime(2025, 1, 1, 12, 0)),
        SnapshotItem("paris-1130", created=datetime(2025, 1, 1, 12, 30, tzinfo=timezone(HOUR))),
    )
    assert ids(rs.ready) == ["paris-1130", "naive-noon"]


def test_blocked_entries_are_ordered_too() -> None:
    rs = compute(
        SnapshotItem("b", blockers=needs("Z")),
        SnapshotItem("a", blockers=needs("Z"), priority=5),
    )
    assert ids(rs.blocked) == ["a", "b"]


def test_generated_at_is_now_in_utc() -> None:
    rs = compute_ready_set(
        Snapshot("s", []), now=datetime(2026, 1, 1, 14, 0, tzinfo=timezone(2 * HOUR))
    )
    assert rs.to_json_obj()["generated_at"] == "2026-01-01T12:00:00Z"


def test_done_count_unknown_is_null() -> None:
    assert compute(done=None).to_json_obj()["counts"]["done"] is None


def test_extra_appears_only_when_non_empty() -> None:
    rs = compute(SnapshotItem("A", extra={"node_id": "I_1"}), SnapshotItem("B"))
    assert [e.get("extra") for e in rs.to_json_obj()["ready"]] == [{"node_id": "I_1"}, None]


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="'A' twice"):
        compute(SnapshotItem("A"), SnapshotItem("A"))


def test_unknown_id_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        seed().entry("T-9")


# ---------------------------------------------------------------------------- properties

_IDS = ["a", "b", "c", "d", "e"]
_STATES: list[BlockerState] = ["open", "done", "missing", "inaccessible"]

refs = st.lists(
    st.builds(BlockerRef, st.sampled_from([*_IDS, "x", "y"]), st.sampled_from(_STATES)),
    max_size=4,
)
claims = st.none() | st.builds(
    Claim,
    st.just("p@h"),
    st.just(NOW - HOUR),
    st.sampled_from([None, NOW - HOUR / 2, NOW, NOW + HOUR]),
)


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    chosen = draw(st.lists(st.sampled_from(_IDS), unique=True))
    items = [
        SnapshotItem(
            i,
            blockers=draw(refs),
            children=draw(refs),
            failed=draw(st.none() | st.just("boom")),
            claim=draw(claims),
            priority=draw(st.none() | st.integers(0, 3)),
        )
        for i in chosen
    ]
    return Snapshot("prop", items)


@settings(max_examples=300, deadline=None)
@given(snapshots(), st.booleans())
def test_every_item_is_in_exactly_one_category(snapshot: Snapshot, children_block: bool) -> None:
    rs = compute_ready_set(snapshot, now=NOW, children_block=children_block)
    placed = ids(rs.ready) + ids(rs.blocked) + ids(rs.claimed)
    assert sorted(placed) == sorted(it.id for it in snapshot.items)


@settings(max_examples=300, deadline=None)
@given(snapshots())
def test_ready_items_have_nothing_in_their_way(snapshot: Snapshot) -> None:
    rs = compute_ready_set(snapshot, now=NOW)
    assert all(
        e.item.failed is None
        and all(b.state == "done" for b in e.item.blockers)
        and all(c.state != "open" for c in e.item.children)
        and (e.item.claim is None or not e.item.claim.is_live(NOW))
        for e in rs.ready
    )


def _on_a_cycle(snapshot: Snapshot) -> set[str]:
    """Brute force: the items that can reach themselves along open, present blocker edges."""
    present = {it.id for it in snapshot.items}
    edges = {
        it.id: {b.id for b in it.blockers if b.state == "open" and b.id in present}
        for it in snapshot.items
    }
    found = set()
    for start in edges:
        frontier, seen = list(edges[start]), set()
        while frontier:
            node = frontier.pop()
            if node == start:
                found.add(start)
                break
            if node not in seen:
                seen.add(node)
                frontier.extend(edges[node])
    return found


@settings(max_examples=300, deadline=None)
@given(snapshots())
def test_cycle_members_are_exactly_the_items_that_reach_themselves(snapshot: Snapshot) -> None:
    rs = compute_ready_set(snapshot, now=NOW)
    members = [m for c in rs.cycles for m in c]
    assert sorted(members) == sorted(_on_a_cycle(snapshot))


def test_reasons_are_built_when_first_read_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool reads only the ready list, so computing a Ready-set builds no reason; a report's
    first read builds an entry's reasons once, and they carry the holders as of `now`."""
    from jr2_sources import readyset

    calls: list[str] = []
    build = readyset._Why.reasons

    def counting(self: Any, it: SnapshotItem) -> Any:
        calls.append(it.id)
        return build(self, it)

    monkeypatch.setattr(readyset._Why, "reasons", counting)
    rs = compute(
        SnapshotItem("A", claim=Claim("pool-1", NOW - HOUR, NOW + HOUR)),
        SnapshotItem("B", blockers=[*needs("A", "gone"), BlockerRef("gone", "missing")]),
        SnapshotItem("C", blockers=needs("D")),
        SnapshotItem("D", blockers=needs("C")),
    )
    assert calls == [] and ids(rs.blocked) == ["B", "C", "D"]
    b, c, _ = rs.blocked
    assert [r.to_json_obj() for r in b.reasons] == [
        {"kind": "open_blocker", "ref": "A", "held_by": "pool-1"},
        {"kind": "open_blocker", "ref": "gone", "held_by": None},
        {"kind": "missing_blocker", "ref": "gone", "state": "missing"},
    ]
    assert b.reasons is b.reasons and calls == ["B"]
    assert [r.kind for r in c.reasons] == ["open_blocker", "cycle"]
