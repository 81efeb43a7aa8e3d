"""The local source's claim store: atomic claims, leases, outcomes, data versions, read-only use,
schema upgrades."""

from __future__ import annotations

import functools
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from jr2_sources.trackers.local.store import (
    SCHEMA_VERSION,
    ClaimRow,
    ClaimStore,
    OutcomeRow,
    StoreError,
    StoreState,
)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "claims.db"


@pytest.fixture
def store(db: Path) -> Iterator[ClaimStore]:
    with ClaimStore(db) as opened:
        yield opened


@pytest.fixture
def other(db: Path, store: ClaimStore) -> Iterator[ClaimStore]:
    """A second connection to the same file, as another pool would have."""
    with ClaimStore(db) as opened:
        yield opened


def listing(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def test_first_open_creates_the_file_its_directory_and_wal_mode(db: Path) -> None:
    assert not db.parent.exists()
    ClaimStore(db).close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert {"claims", "outcomes"} <= tables


def test_second_claim_loses_and_the_holder_may_claim_again(
    store: ClaimStore, other: ClaimStore
) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    assert not other.claim("T-1", "pool-b", lease_s=30, now=101)
    assert store.claim("T-1", "pool-a", lease_s=30, now=102)
    assert other.state().claims == {"T-1": ClaimRow("T-1", "pool-a", 100, 132, 1)}


def test_an_expired_lease_is_taken_over(store: ClaimStore, other: ClaimStore) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    assert not other.claim("T-1", "pool-b", lease_s=30, now=130)  # ends at 130: still held
    assert other.claim("T-1", "pool-b", lease_s=30, now=130.5)
    claim = store.state().claims["T-1"]
    assert claim == ClaimRow("T-1", "pool-b", 130.5, 160.5, 2)
    assert not store.renew("T-1", "pool-a", lease_s=30, now=131)
    assert not store.settle("T-1", "pool-a", "done", now=131)


def test_renew_extends_only_the_holders_lease_even_after_expiry(
    store: ClaimStore, other: ClaimStore
) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    assert not other.renew("T-1", "pool-b", lease_s=30, now=110)
    assert store.renew("T-1", "pool-a", lease_s=30, now=140)  # expired, but nobody took it
    assert store.state().claims["T-1"].lease_expires == 170
    assert not other.claim("T-1", "pool-b", lease_s=30, now=150)
    assert not store.renew("T-2", "pool-a", lease_s=30, now=150)


def test_release_deletes_only_the_holders_claim(store: ClaimStore, other: ClaimStore) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    assert not other.release("T-1", "pool-b")
    assert "T-1" in store.state().claims
    assert store.release("T-1", "pool-a")
    assert store.state().claims == {}
    assert other.claim("T-1", "pool-b", lease_s=30, now=101)


def test_settle_records_the_outcome_and_drops_the_claim(store: ClaimStore) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    assert store.settle("T-1", "pool-a", "failed", reason="tests fail", now=105)
    state = store.state()
    assert state.claims == {}
    assert state.outcomes == {"T-1": OutcomeRow("T-1", "failed", "tests fail", "pool-a", 105)}


def test_settle_by_a_non_holder_records_nothing(store: ClaimStore, other: ClaimStore) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    before = store.state()
    assert not other.settle("T-1", "pool-b", "done", now=101)
    assert not other.settle("T-2", "pool-b", "failed", now=101)  # never claimed at all
    assert store.state() == before


@pytest.mark.parametrize("status", ["done", "failed"])
def test_an_outcome_blocks_claims_even_by_its_holder(
    store: ClaimStore, other: ClaimStore, status: str
) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    assert store.settle("T-1", "pool-a", "done" if status == "done" else "failed", now=101)
    assert not other.claim("T-1", "pool-b", lease_s=30, now=10_000)
    assert not store.claim("T-1", "pool-a", lease_s=30, now=10_000)
    assert store.state().claims == {}


def test_clear_re_enables_a_failed_item_but_keeps_done_ones(
    store: ClaimStore, other: ClaimStore
) -> None:
    for item, status in (("T-1", "failed"), ("T-2", "done")):
        assert store.claim(item, "pool-a", lease_s=30, now=100)
        assert store.settle(item, "pool-a", "failed" if status == "failed" else "done", now=101)
    assert other.clear("T-1")
    assert not other.clear("T-1")
    assert other.claim("T-1", "pool-b", lease_s=30, now=102)
    assert not other.clear("T-2")
    assert not other.claim("T-2", "pool-b", lease_s=30, now=102)
    assert other.clear("T-2", include_done=True)
    assert other.claim("T-2", "pool-b", lease_s=30, now=103)


def test_data_version_moves_on_another_connections_writes_only(
    store: ClaimStore, other: ClaimStore
) -> None:
    """How a waiting pool learns that another process wrote (schema 4 dropped the change
    counter): `data_version` moves on the other connection's commits, never on its own."""
    seen = [other.data_version()]

    def moved() -> bool:
        seen.append(other.data_version())
        return seen[-1] != seen[-2]

    assert store.claim("T-1", "pool-a", lease_s=30, now=100) and moved()
    assert store.renew("T-1", "pool-a", lease_s=30, now=101) and moved()
    assert other.claim("T-2", "pool-b", lease_s=30, now=101) and not moved()
    assert other.release("T-2", "pool-b") and not moved()
    assert store.claim("T-2", "pool-a", lease_s=30, now=100) and moved()
    assert store.release("T-2", "pool-a") and moved()
    assert store.settle("T-1", "pool-a", "failed") and moved()
    assert store.clear("T-1") and moved()
    assert other.settle("T-1", "pool-b", "done") is False and not moved()


def test_open_readonly_on_a_missing_path_creates_nothing(tmp_path: Path) -> None:
    before = listing(tmp_path)
    assert ClaimStore.open_readonly(tmp_path / "claims.db") is None
    assert ClaimStore.open_readonly(tmp_path / "no" / "such" / "claims.db") is None
    assert listing(tmp_path) == before


def test_a_readonly_store_reads_live_state_and_never_writes(db: Path, store: ClaimStore) -> None:
    assert store.claim("T-1", "pool-a", lease_s=30, now=100)
    store.close()
    assert listing(db.parent) == ["claims.db"]  # the last writer tidied its WAL files
    content = db.read_bytes()
    reader = ClaimStore.open_readonly(db)
    assert reader is not None
    with reader:
        assert list(reader.state().claims) == ["T-1"]
        # As documented: SQLite's WAL reader makes its two companion files, nothing else.
        assert listing(db.parent) == ["claims.db", "claims.db-shm", "claims.db-wal"]
        version = reader.data_version()
        writes: list[Callable[[], object]] = [
            lambda: reader.claim("T-2", "pool-r", lease_s=30),
            lambda: reader.renew("T-1", "pool-a", lease_s=30),
            lambda: reader.release("T-1", "pool-a"),
            lambda: reader.settle("T-1", "pool-a", "done"),
            lambda: reader.clear("T-1"),
        ]
        for write in writes:
            with pytest.raises(StoreError, match="open read-only"):
                write()
        assert db.read_bytes() == content
        with ClaimStore(db) as writer:  # a pool writing while the report reads
            assert writer.settle("T-1", "pool-a", "done", now=101)
            assert reader.data_version() != version
            assert reader.state().outcomes["T-1"].status == "done"


READ_AS_ANOTHER_USER = """
import sys
from pathlib import Path
from jr2_sources.trackers.local.store import ClaimStore
reader = ClaimStore.open_readonly(Path(sys.argv[1]))
assert reader is not None
print(sorted(reader.state().claims))
"""


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to run as nobody"
)
def test_a_readonly_store_reads_in_a_directory_it_cannot_write() -> None:
    """No -wal/-shm and no right to create them: it reads the file as immutable, creates nothing."""
    root = Path(tempfile.mkdtemp(prefix="jr2-ro-"))
    try:
        root.chmod(0o755)
        db = root / "claims.db"
        with ClaimStore(db) as store:
            assert store.claim("T-1", "pool-a", lease_s=30)
        db.chmod(0o644)
        root.chmod(0o555)
        repo = str(Path(__file__).resolve().parents[3])
        run = functools.partial(
            subprocess.run, user="nobody", capture_output=True, text=True, timeout=60, cwd="/"
        )
        env = {**os.environ, "PYTHONPATH": repo}
        try:
            probe = run([sys.executable, "-c", "import jr2_sources.trackers.local.store"], env=env)
        except (OSError, KeyError, subprocess.SubprocessError) as err:
            pytest.skip(f"cannot run as nobody here: {err}")
        if probe.returncode != 0:
            pytest.skip("nobody cannot import jr2 from this checkout")
        result = run([sys.executable, "-c", READ_AS_ANOTHER_USER, str(db)], env=env)
        assert (result.returncode, result.stdout, result.stderr) == (0, "['T-1']\n", "")
        assert listing(root) == ["claims.db"]
    finally:
        root.chmod(0o755)
        shutil.rmtree(root)


def test_a_readonly_store_of_a_file_without_schema_is_empty(tmp_path: Path) -> None:
    empty = tmp_path / "claims.db"
    empty.touch()
    reader = ClaimStore.open_readonly(empty)
    assert reader is not None
    with reader:
        state = reader.state()
        assert (state.claims, state.outcomes, state.retries) == ({}, {}, {})
    assert empty.read_bytes() == b""


def test_errors_are_one_line_store_errors(tmp_path: Path, db: Path) -> None:
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("hello, this is not SQLite\n" * 10)
    with pytest.raises(StoreError) as caught:
        ClaimStore(not_a_db)
    assert str(caught.value) == f"{not_a_db}: file is not a database"
    with ClaimStore(db) as newer:
        newer.claim("T-1", "a", lease_s=1)
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA user_version = 99")
    raw.close()
    newer = rf"schema 99 is newer than this jr2's \({SCHEMA_VERSION}\)"
    with pytest.raises(StoreError, match=newer):
        ClaimStore(db)
    with pytest.raises(StoreError, match=newer):
        ClaimStore.open_readonly(db)
    closed = ClaimStore(tmp_path / "closed.db")
    closed.close()
    closed.close()
    with pytest.raises(StoreError, match="claim store is closed"):
        closed.state()


@pytest.mark.parametrize("lease_s", [0, -1, float("nan"), float("inf")])
def test_a_lease_must_be_positive_seconds(store: ClaimStore, lease_s: float) -> None:
    with pytest.raises(ValueError, match="lease_s must be a positive number"):
        store.claim("T-1", "pool-a", lease_s=lease_s)
    assert store.state().claims == {}


RACE_IDS = [f"T-{n}" for n in range(300)]


def race_worker(
    path: str,
    holder: str,
    ids: list[str],
    barrier: Barrier,
    results: Queue[tuple[str, list[str], str | None]],
) -> None:
    """Open the (fresh) store at the barrier, then claim and settle every id it can win.

    Always reports back, with the error if any, so that a failure fails the test at once.
    """
    won: list[str] = []
    try:
        barrier.wait(timeout=60)
        with ClaimStore(Path(path)) as store:
            for item in ids:
                if store.claim(item, holder, lease_s=600):
                    if not store.settle(item, holder, "done"):
                        raise AssertionError(f"{holder} won {item} but could not settle it")
                    won.append(item)
    except Exception as err:
        results.put((holder, won, f"{type(err).__name__}: {err}"))
    else:
        results.put((holder, won, None))


def test_racing_processes_settle_every_id_exactly_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    db = tmp_path / "race" / "claims.db"
    barrier, results = ctx.Barrier(4), ctx.Queue()
    orders = [RACE_IDS, RACE_IDS, RACE_IDS[::-1], RACE_IDS[::-1]]  # head-on contention
    processes = [
        ctx.Process(target=race_worker, args=(str(db), f"pool-{n}", ids, barrier, results))
        for n, ids in enumerate(orders)
    ]
    started = time.perf_counter()
    for process in processes:
        process.start()
    reports = [results.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    elapsed = time.perf_counter() - started
    assert [error for _, _, error in reports if error] == []
    outcome = {holder: won for holder, won, _ in reports}

    settled = Counter(item for won in outcome.values() for item in won)
    assert sorted(settled) == sorted(RACE_IDS)
    assert set(settled.values()) == {1}
    reader = ClaimStore.open_readonly(db)
    assert reader is not None
    with reader:
        state = reader.state()
    assert state.claims == {}
    assert {item: row.holder for item, row in state.outcomes.items()} == {
        item: holder for holder, won in outcome.items() for item in won
    }
    print(f"race: {elapsed:.2f} s, wins {sorted(len(w) for w in outcome.values())}")


def test_a_schema_1_store_gains_the_retries_table_and_keeps_its_rows(tmp_path: Path) -> None:
    """Schema 2 added `retries`: a file written by schema 1 is upgraded when a writer opens it,
    its claims and outcomes kept; a retry record then refuses an early or stale claim."""
    import sqlite3

    db = tmp_path / "claims.db"
    with ClaimStore(db) as store:
        assert store.claim("A", "p1", 60, now=100.0)
        assert store.settle("A", "p1", "done", now=101.0)
    raw = sqlite3.connect(db)
    raw.execute("DROP TABLE retries")
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    with ClaimStore(db) as store:
        assert store.state().outcomes["A"].status == "done"
        assert store.claim("B", "p1", 60, now=100.0)
        assert store.settle("B", "p1", "failed", "exit code 75", now=101.0, retry=(1, 130.0))
        assert store.state().retries == {"B": (1, 130.0)}
        assert not store.claim("B", "p2", 60, now=129.0)  # the backoff still runs
        assert not store.claim("B", "p2", 60, now=131.0)  # chosen by a stale record (0 spent)
        assert store.claim("B", "p2", 60, now=131.0, attempts=1)
        assert store.settle("B", "p2", "done", now=132.0)
        assert store.state().retries == {}  # a done outcome ends the record


# The layout jr2 wrote at schema 2 (schema 1: the same without `retries`; schema 3: with
# `claim_groups`): the change counter that schema 4 dropped, with the triggers that bumped it
# (schema 4: schema 3 without them; schema 5 added `gates`).
SCHEMA_2 = """
CREATE TABLE claims (item_id TEXT PRIMARY KEY, holder TEXT NOT NULL, since REAL NOT NULL,
    lease_expires REAL NOT NULL, attempt INTEGER NOT NULL DEFAULT 1);
CREATE TABLE outcomes (item_id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')), reason TEXT, holder TEXT,
    at REAL NOT NULL);
CREATE TABLE retries (item_id TEXT PRIMARY KEY, attempts INTEGER NOT NULL,
    retry_after REAL NOT NULL);
CREATE TABLE changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO changes (id, n) VALUES (1, 0);
CREATE TRIGGER claims_inserted AFTER INSERT ON claims
    BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER claims_taken_over AFTER UPDATE OF holder, since ON claims
    BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER claims_deleted AFTER DELETE ON claims
    BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER outcomes_inserted AFTER INSERT ON outcomes
    BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER outcomes_updated AFTER UPDATE ON outcomes
    BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER outcomes_deleted AFTER DELETE ON outcomes
    BEGIN UPDATE changes SET n = n + 1 WHERE id = 1; END;
"""


_DEAD_COUNTER = """
DROP TRIGGER claims_inserted; DROP TRIGGER claims_taken_over; DROP TRIGGER claims_deleted;
DROP TRIGGER outcomes_inserted; DROP TRIGGER outcomes_updated; DROP TRIGGER outcomes_deleted;
DROP TABLE changes;
"""


def _old_store(path: Path, version: int) -> None:
    """A store as a jr2 of schema `version` (1 to 4) left it: a claim, an outcome, a retry."""
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.executescript(SCHEMA_2 + ("DROP TABLE retries;" if version == 1 else "") + (
        "CREATE TABLE claim_groups (item_id TEXT NOT NULL, grp TEXT NOT NULL,"
        " PRIMARY KEY (item_id, grp));" if version >= 3 else "") + (
        _DEAD_COUNTER if version == 4 else ""))
    raw.execute("INSERT INTO claims VALUES ('A', 'p1', 100.0, 9e9, 1)")
    raw.execute("INSERT INTO outcomes VALUES ('B', 'done', NULL, 'p1', 101.0)")
    if version >= 2:
        raw.execute("INSERT INTO retries VALUES ('C', 1, 130.0)")
    raw.execute(f"PRAGMA user_version = {version}")
    raw.commit()
    raw.close()


def _layout(path: Path) -> tuple[int, set[tuple[str, str]]]:
    raw = sqlite3.connect(path)
    try:
        version = int(raw.execute("PRAGMA user_version").fetchone()[0])
        objects = set(raw.execute("SELECT type, name FROM sqlite_master"
                                  " WHERE type IN ('table', 'trigger', 'view')"))
        return version, objects
    finally:
        raw.close()


def _assert_old_rows(state: StoreState, version: int) -> None:
    claims, outcomes, retries = state.claims, state.outcomes, state.retries
    assert {k: (r.holder, r.since) for k, r in claims.items()} == {"A": ("p1", 100.0)}
    assert {k: (r.status, r.holder) for k, r in outcomes.items()} == {"B": ("done", "p1")}
    assert retries == ({"C": (1, 130.0)} if version >= 2 else {})
    assert state.gates == {}  # a schema-1 to -4 file has none


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_writer_upgrades_an_old_store_to_schema_5_and_keeps_its_rows(tmp_path: Path,
                                                                       version: int) -> None:
    """Schema 4 dropped the change counter (`changes` and its six triggers, dead since
    `PRAGMA data_version`), schema 5 added `gates`: a writer opening a schema-1 to -4 file
    upgrades it, rows kept (and gains the tables it lacks: a gate then parks and answers)."""
    db = tmp_path / "claims.db"
    _old_store(db, version)
    with ClaimStore(db) as store:
        _assert_old_rows(store.state(), version)
        assert store.settle("A", "p1", "done", now=102.0)
        assert store.claim("D", "p2", 60, now=103.0)
        assert not store.claim("B", "p2", 60, now=103.0)  # its outcome still stands
        assert store.settle("D", "p2", "failed", now=104.0, retry=(1, 200.0))
        assert store.state().retries["D"] == (1, 200.0)
        assert store.claim("E", "p2", 60, now=105.0)
        assert store.park("E", "p2", "deploy", "why", now=106.0)
        assert not store.claim("E", "p1", 60, now=107.0)  # parked: awaiting its answer
        assert store.answer("E", "deploy", "approved", by="ann", now=108.0)
        assert [(g.name, g.status, g.by) for g in store.state().gates["E"]] == [
            ("deploy", "approved", "ann")]
    assert SCHEMA_VERSION == 5
    assert _layout(db) == (5, {("table", "claims"), ("table", "outcomes"),
                               ("table", "retries"), ("table", "claim_groups"),
                               ("table", "gates")})


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_reader_reads_an_old_store_as_it_is(tmp_path: Path, version: int) -> None:
    """The report (a read-only store) reads a schema-1 to -4 file and never upgrades it (no
    gates before schema 5)."""
    db = tmp_path / "claims.db"
    _old_store(db, version)
    before = _layout(db)
    reader = ClaimStore.open_readonly(db)
    assert reader is not None
    with reader:
        _assert_old_rows(reader.state(), version)
        assert reader.state(["A", "Z"]).claims.keys() == {"A"}
    assert _layout(db) == before


def test_an_older_jr2_refuses_a_newer_store_in_one_line(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """What a jr2 of schema 4 says on a schema-5 file (the check it has: run here with its
    version), as a writer and as a reader."""
    from jr2_sources.trackers.local import store as store_module

    db = tmp_path / "claims.db"
    ClaimStore(db).close()
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 4)
    line = f"{db}: claim store schema 5 is newer than this jr2's (4); upgrade jr2"
    for opening in (lambda: ClaimStore(db), lambda: ClaimStore.open_readonly(db)):
        with pytest.raises(StoreError) as caught:
            opening()
        assert str(caught.value) == line
    assert _layout(db)[0] == 5
