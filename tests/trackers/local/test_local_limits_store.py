"""The local claim store keeps global caps and conflict groups in the claim transaction
(`jr2_sources.trackers.local.store`, `jr2_sources.capabilities.limits.policy`): a group or a cap
slot is held by a live claim only, for the claim's lease, and racing connections can never exceed a
limit."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from jr2_sources.trackers.local.store import ClaimStore


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "claims.db"


@pytest.fixture
def store(db: Path) -> Iterator[ClaimStore]:
    with ClaimStore(db) as opened:
        yield opened


def test_a_held_group_refuses_another_item_of_it_and_nothing_else(store: ClaimStore) -> None:
    assert store.claim("A", "p1", 60, now=100.0, groups=["db", "api"])
    assert not store.claim("B", "p2", 60, now=101.0, groups=["db"])
    assert not store.claim("C", "p2", 60, now=101.0, groups=["ui", "api"])
    assert store.claim("D", "p2", 60, now=101.0, groups=["ui"])
    assert store.claim("E", "p2", 60, now=101.0)  # outside any group: unaffected
    assert store.claim("A", "p1", 60, now=102.0, groups=["db", "api"])  # its own holder again


def test_a_group_is_held_for_the_claims_lease_only(store: ClaimStore) -> None:
    """kill -9 of the holder: nothing renews, and the group is free once the lease ended,
    not before; a renewal keeps it held."""
    assert store.claim("A", "p1", 10, now=100.0, groups=["db"])
    assert not store.claim("B", "p2", 10, now=109.9, groups=["db"])
    assert store.renew("A", "p1", 10, now=109.0)
    assert not store.claim("B", "p2", 10, now=118.9, groups=["db"])
    assert store.claim("B", "p2", 10, now=119.1, groups=["db"])
    assert not store.claim("A", "p3", 10, now=119.2, groups=["db"])  # now B holds it


@pytest.mark.parametrize("end", ["release", "done", "failed", "retry"])
def test_releasing_or_settling_the_claim_frees_its_groups(store: ClaimStore, end: str) -> None:
    assert store.claim("A", "p1", 60, now=100.0, groups=["db"])
    if end == "release":
        assert store.release("A", "p1")
    elif end == "retry":
        assert store.settle("A", "p1", "failed", "75", now=101.0, retry=(1, 101.5))
    else:
        assert store.settle("A", "p1", end, now=101.0)  # type: ignore[arg-type]
    assert store.claim("B", "p2", 60, now=102.0, groups=["db"])


def test_a_claim_without_groups_replaces_the_groups_of_the_items_last_claim(
        store: ClaimStore) -> None:
    """A takeover of an expired claim by a pool that names other groups leaves no stale row."""
    assert store.claim("A", "p1", 10, now=100.0, groups=["db"])
    assert store.claim("A", "p2", 10, now=111.0)  # taken over after the lease, no groups
    assert store.claim("B", "p3", 10, now=112.0, groups=["db"])


def test_the_global_cap_counts_every_live_claim_of_the_store(store: ClaimStore) -> None:
    assert store.claim("A", "p1", 10, now=100.0, global_cap=2)
    assert store.claim("B", "p2", 10, now=100.0)  # a pool without the cap still counts
    assert store.claim("A", "p1", 10, now=100.5, global_cap=2)  # its own claim: no new slot
    assert not store.claim("C", "p3", 10, now=101.0, global_cap=2)
    assert store.claim("C", "p3", 10, now=101.0, global_cap=3)
    assert store.settle("B", "p2", "done", now=106.0)
    assert not store.claim("D", "p3", 10, now=107.0, global_cap=2)  # A and C hold two
    assert store.claim("D", "p3", 10, now=111.0, global_cap=2)  # C's lease ended at 111


def _race(db: Path, n: int, claim: dict[str, object]) -> list[str]:
    """n connections (one per thread, as n pools) claim items I0..I(n-1) at one instant; the
    items won."""
    barrier = threading.Barrier(n)
    won: list[str] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        with ClaimStore(db) as st:
            barrier.wait()
            if st.claim(f"I{i}", f"p{i}", 60, **claim):  # type: ignore[arg-type]
                with lock:
                    won.append(f"I{i}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


@pytest.mark.parametrize("round_", range(3))
def test_eight_racing_claimers_of_one_group_give_one_winner(db: Path, round_: int) -> None:
    ClaimStore(db).close()
    assert len(_race(db, 8, {"groups": ["db"]})) == 1


@pytest.mark.parametrize("round_", range(3))
def test_eight_racing_claimers_under_a_cap_of_three_give_three_winners(
        db: Path, round_: int) -> None:
    ClaimStore(db).close()
    assert len(_race(db, 8, {"global_cap": 3})) == 3


def test_a_schema_2_store_gains_claim_groups_and_keeps_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "claims.db"
    with ClaimStore(db) as store:
        assert store.claim("A", "p1", 60, now=100.0)
    raw = sqlite3.connect(db)
    raw.execute("DROP TABLE claim_groups")
    raw.execute("PRAGMA user_version = 2")
    raw.commit()
    raw.close()
    with ClaimStore(db) as store:
        assert store.state().claims["A"].holder == "p1"
        assert store.claim("B", "p1", 60, now=101.0, groups=["db"])
        assert not store.claim("C", "p2", 60, now=102.0, groups=["db"])


def test_claims_chosen_from_one_stale_snapshot_still_keep_the_groups_and_the_cap(
        tmp_path: Path) -> None:
    """Two pools (two adapters, two connections) read the backlog before either claims: both
    see db1, db2 and free ready. The store, not the reading, decides: the second item of the
    group and the claim past the cap lose, whatever the snapshot said."""
    from jr2_sources.capabilities.limits.policy import Limits
    from jr2_sources.registry import SourceEnv
    from jr2_sources.trackers.local.source import LocalConfig, LocalTracker

    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "db1"\ntitle = "t"\nlabels = ["area/db"]\n\n'
        '[[items]]\nid = "db2"\ntitle = "t"\nbody = "Touches: area/DB"\n\n'
        '[[items]]\nid = "free"\ntitle = "t"\n\n[[items]]\nid = "free2"\ntitle = "t"\n')
    limits = Limits.parse(2, ["label:area/*", "touches"])
    env = SourceEnv(state_dir=tmp_path / "state", read_only=False)
    pools = [LocalTracker(LocalConfig(target=str(tmp_path / "b.toml")), env) for _ in range(2)]
    try:
        snaps = []
        for adapter in pools:
            adapter.global_cap = limits.global_cap
            snap = adapter.snapshot()
            limits.tag(snap)
            snaps.append({it.id: it for it in snap.items})
        assert snaps[1]["db2"].groups == ("area/db",)
        assert pools[0].claim(snaps[0]["db1"], "p1", 60)
        assert not pools[1].claim(snaps[1]["db2"], "p2", 60)  # the group is held
        assert pools[1].claim(snaps[1]["free"], "p2", 60)
        assert not pools[1].claim(snaps[1]["free2"], "p2", 60)  # 2 held: the cap
    finally:
        for adapter in pools:
            adapter.close()
