"""Claims, leases and outcomes of the local Work Source, in one SQLite file (WAL mode) that any
number of processes open. Every method is one short transaction; a claim is one conditional
upsert, so two pools never both win an item:

    insert the claim, unless the item has an outcome;
    on an existing claim, take it over only if its lease expired or the holder is the same one.

* `attempt` counts the holders of the current claim; the `retries` table keeps `--max-attempts`
  records. Global caps and conflict groups are decided in the claim's `BEGIN IMMEDIATE`
  transaction (`claim_groups`); gates live in `gates` (`park` swaps the claim for the awaiting
  row in one transaction). Other processes' writes show in `PRAGMA data_version`.
* Schema `SCHEMA_VERSION`: a writer upgrades an older file in the transaction that checks it, a
  reader never; an older jr2 refuses a newer file. `open_readonly` never creates or writes.
* A `ClaimStore` may be shared by one process's threads; each process opens its own.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from jr2_core.errors import SourceError

__all__ = ["SCHEMA_VERSION", "ClaimRow", "ClaimStore", "GateRow", "OutcomeRow", "OutcomeStatus",
           "StoreError", "StoreState"]

OutcomeStatus = Literal["done", "failed"]

SCHEMA_VERSION = 5
BUSY_TIMEOUT_S = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    item_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    since REAL NOT NULL,
    lease_expires REAL NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS outcomes (
    item_id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    reason TEXT,
    holder TEXT,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS retries (
    item_id TEXT PRIMARY KEY,
    attempts INTEGER NOT NULL,
    retry_after REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS claim_groups (
    item_id TEXT NOT NULL,
    grp TEXT NOT NULL,
    PRIMARY KEY (item_id, grp)
);
CREATE INDEX IF NOT EXISTS claim_groups_grp ON claim_groups (grp);
CREATE TABLE IF NOT EXISTS gates (
    item_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('awaiting', 'approved', 'rejected')),
    reason TEXT,
    by TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (item_id, name)
);
"""

# Schema 4: the change counter of schemas 1 to 3 goes (PRAGMA data_version replaced it).
_DROP_CHANGE_COUNTER = """
DROP TRIGGER IF EXISTS claims_inserted;
DROP TRIGGER IF EXISTS claims_taken_over;
DROP TRIGGER IF EXISTS claims_deleted;
DROP TRIGGER IF EXISTS outcomes_inserted;
DROP TRIGGER IF EXISTS outcomes_updated;
DROP TRIGGER IF EXISTS outcomes_deleted;
DROP TABLE IF EXISTS changes;
"""

# One statement: no outcome -> insert; a live claim of another holder -> no change (0 rows).
_CLAIM = """
INSERT INTO claims (item_id, holder, since, lease_expires, attempt)
SELECT :item, :holder, :now, :expires, 1
WHERE NOT EXISTS (SELECT 1 FROM outcomes WHERE item_id = :item)
  AND NOT EXISTS (SELECT 1 FROM retries WHERE item_id = :item AND retry_after > :now)
  AND COALESCE((SELECT attempts FROM retries WHERE item_id = :item), 0) = :attempts
  AND NOT EXISTS (SELECT 1 FROM gates WHERE item_id = :item AND status = 'awaiting')
ON CONFLICT (item_id) DO UPDATE SET
    holder = excluded.holder,
    since = CASE WHEN claims.holder = excluded.holder THEN claims.since ELSE excluded.since END,
    attempt = CASE WHEN claims.holder = excluded.holder
                   THEN claims.attempt ELSE claims.attempt + 1 END,
    lease_expires = excluded.lease_expires
WHERE claims.lease_expires < :now OR claims.holder = :holder
"""

_SETTLE = """
INSERT INTO outcomes (item_id, status, reason, holder, at) VALUES (:item, :status, :reason,
    :holder, :now)
ON CONFLICT (item_id) DO UPDATE SET
    status = excluded.status, reason = excluded.reason, holder = excluded.holder, at = excluded.at
"""


def _group_taken(conn: sqlite3.Connection, item_id: str, groups: list[str], now: float) -> bool:
    """True when a live claim of another item names one of `groups` (inside the claim's
    transaction)."""
    for i in range(0, len(groups), _MAX_VARS):
        chunk = groups[i:i + _MAX_VARS]
        if conn.execute(
            "SELECT 1 FROM claim_groups g JOIN claims c ON c.item_id = g.item_id"
            f" WHERE g.grp IN ({','.join('?' * len(chunk))}) AND g.item_id != ?"
            " AND c.lease_expires >= ? LIMIT 1", (*chunk, item_id, now)).fetchone():
            return True
    return False


class StoreError(SourceError):
    """The claim store could not be opened, read or written (one line, naming the file)."""


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """Who holds an item, since when, until when, and how many holders the claim has had."""

    item_id: str
    holder: str
    since: float
    lease_expires: float
    attempt: int


@dataclass(frozen=True, slots=True)
class OutcomeRow:
    """How an item ended: done or failed, why, by which holder, when."""

    item_id: str
    status: OutcomeStatus
    reason: str | None
    holder: str | None
    at: float


@dataclass(frozen=True, slots=True)
class GateRow:
    """One approval gate of an item: awaiting, approved or rejected, why, by whom, when."""

    name: str
    status: str
    reason: str | None
    by: str | None
    at: float


@dataclass(frozen=True, slots=True)
class StoreState:
    """Everything in the store (or about some items), read in one transaction."""

    claims: dict[str, ClaimRow]
    outcomes: dict[str, OutcomeRow]
    retries: dict[str, tuple[int, float]] = field(default_factory=dict)
    """Items waiting to be retried: attempts spent, earliest next attempt (epoch seconds)."""
    gates: dict[str, tuple[GateRow, ...]] = field(default_factory=dict)
    """Items with approval gates: their rows, by gate name."""


_MAX_VARS = 500  # host parameters per statement: far below every SQLite build's limit


def _where_ids(ids: Collection[str] | None) -> Iterator[tuple[str, list[str]]]:
    """WHERE clauses (with their arguments) that select `ids` in chunks; all rows for None."""
    if ids is None:
        yield "", []
        return
    wanted = list(ids)
    for i in range(0, len(wanted), _MAX_VARS):
        chunk = wanted[i:i + _MAX_VARS]
        yield f" WHERE item_id IN ({','.join('?' * len(chunk))})", chunk


def _lease_end(lease_s: float, now: float) -> float:
    """`now + lease_s`, refusing a lease that is not a positive finite number of seconds."""
    if not (lease_s > 0 and math.isfinite(lease_s)):
        raise ValueError(f"lease_s must be a positive number of seconds, not {lease_s!r}")
    return now + lease_s


class ClaimStore:
    """Claims, leases and outcomes in the SQLite file at `path` (created on first open)."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        """Open `path` for writing, creating it (and its directory) and the schema if missing;
        `readonly`: see `open_readonly`."""
        self.path = path
        self.readonly = readonly
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if readonly:
            self._open_readonly()
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"{path}: cannot create its directory: {err.strerror}") from None
        with self._opening():
            self._conn = self._connect(str(path), uri=False)
            self._init_schema()

    @classmethod
    def open_readonly(cls, path: Path) -> ClaimStore | None:
        """Open an existing store read-only (for reports), or None when there is no file.

        Never creates the database; see the module's note for the `-wal`/`-shm` files.
        """
        return cls(path, readonly=True) if path.exists() else None

    def _open_readonly(self) -> None:
        uri = self.path.resolve().as_uri() + "?mode=ro"
        with self._opening():
            self._conn = self._connect(uri, uri=True)
            try:
                version = self._user_version()
            except sqlite3.OperationalError:
                if Path(f"{self.path}-wal").exists():
                    raise  # a writer's commits may be in the WAL: never read around them
                # No -wal/-shm and no right to create them: no writer is live; read the file as is.
                self._conn.close()
                self._conn = self._connect(uri + "&immutable=1", uri=True)
                version = self._user_version()
            self._check_version(version)

    @contextmanager
    def _opening(self) -> Iterator[None]:
        """Open-time errors as `StoreError`s, with the connection closed again on any failure."""
        try:
            with self._errors():
                yield
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _connect(target: str, *, uri: bool) -> sqlite3.Connection:
        """A connection in autocommit mode: transactions are begun explicitly."""
        conn = sqlite3.connect(
            target,
            uri=uri,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        return conn

    def _init_schema(self) -> None:
        """WAL mode (persistent in the file) and the schema, once, whoever opens first."""
        conn = self._live()
        mode = self._switch_to_wal(conn)
        if mode != "wal":
            raise StoreError(f"{self.path}: cannot use WAL mode here (got {mode!r})")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = self._user_version()
            self._check_version(version)
            if version < SCHEMA_VERSION:  # a new file, or an upgrade (see the module notes)
                for statement in (_SCHEMA + _DROP_CHANGE_COUNTER).split(";\n"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _switch_to_wal(conn: sqlite3.Connection) -> str:
        """Put the file in WAL mode, waiting out other processes doing the same.

        Switching needs the file to itself and SQLite answers "database is locked" at once, without
        the busy timeout, when another process got there first and is already writing: wait a
        little, look again (it is usually WAL by then), until the busy timeout has passed.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
                if mode == "wal":
                    return mode
                return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            except sqlite3.OperationalError as err:
                if err.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def _user_version(self) -> int:
        """The schema version written in the file (0: no schema yet)."""
        return int(self._live().execute("PRAGMA user_version").fetchone()[0])

    def _check_version(self, version: int) -> None:
        """Refuse a file written by a newer jr2 (its schema may mean something else)."""
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: claim store schema {version} is newer than this jr2's "
                f"({SCHEMA_VERSION}); upgrade jr2"
            )

    def _live(self) -> sqlite3.Connection:
        """The open connection, or a one-line error after `close()`."""
        if self._conn is None:
            raise StoreError(f"{self.path}: claim store is closed")
        return self._conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn SQLite's errors into one-line `StoreError`s that name the file."""
        try:
            yield
        except sqlite3.Error as err:
            if self._conn is not None and self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            message = " ".join(str(err).split()) or type(err).__name__
            raise StoreError(f"{self.path}: {message}") from None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, begun IMMEDIATE: the write lock is taken (or waited for) first."""
        if self.readonly:
            raise StoreError(f"{self.path}: claim store is open read-only")
        with self._lock, self._errors():
            conn = self._live()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[tuple[sqlite3.Connection, int]]:
        """One read transaction (one consistent snapshot), with the file's schema version
        (0: no schema yet)."""
        with self._lock, self._errors():
            conn = self._live()
            conn.execute("BEGIN")
            try:
                yield conn, self._user_version()
            finally:
                conn.execute("COMMIT")

    def claim(self, item_id: str, holder: str, lease_s: float, now: float | None = None,
              attempts: int = 0, groups: Collection[str] = (),
              global_cap: int | None = None) -> bool:
        """Take `item_id` for `holder` for `lease_s` seconds; True when won.

        Won when the item has no outcome and either no claim, an expired one, or one `holder`
        has already (then this renews it); a new claim also needs the item's retry record to
        say `attempts` spent and no backoff still running. With `global_cap`, fewer than that
        many live claims of other items must exist; with `groups`, no live claim of another
        item may name one of them. One write transaction, so concurrent claims cannot both win
        an item, a group, or the cap's last slot.
        """
        at = time.time() if now is None else now
        params = {"item": item_id, "holder": holder, "now": at, "expires": _lease_end(lease_s, at),
                  "attempts": attempts}
        with self._write() as conn:
            if global_cap is not None and conn.execute(
                    "SELECT COUNT(*) FROM claims WHERE lease_expires >= ? AND item_id != ?",
                    (at, item_id)).fetchone()[0] >= global_cap:
                return False
            wanted = sorted(set(groups))
            if wanted and _group_taken(conn, item_id, wanted, at):
                return False
            if conn.execute(_CLAIM, params).rowcount != 1:
                return False
            conn.execute("DELETE FROM claim_groups WHERE item_id = ?", (item_id,))
            conn.executemany("INSERT INTO claim_groups (item_id, grp) VALUES (?, ?)",
                             [(item_id, g) for g in wanted])
            return True

    def renew(self, item_id: str, holder: str, lease_s: float, now: float | None = None) -> bool:
        """Extend `holder`'s lease to `now + lease_s`; False if the claim is gone or taken over.

        A lease that expired but that nobody took over is still `holder`'s to renew.
        """
        at = time.time() if now is None else now
        params = {"item": item_id, "holder": holder, "expires": _lease_end(lease_s, at)}
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE claims SET lease_expires = :expires"
                " WHERE item_id = :item AND holder = :holder",
                params,
            )
            return cursor.rowcount == 1

    def release(self, item_id: str, holder: str) -> bool:
        """Drop `holder`'s claim on `item_id` with no outcome; False if `holder` did not hold it."""
        with self._write() as conn:
            return _drop_claim(conn, item_id, holder)

    def settle(self, item_id: str, holder: str, status: OutcomeStatus, reason: str | None = None,
               now: float | None = None, retry: tuple[int, float] | None = None) -> bool:
        """Record how `item_id` ended and drop the claim, only if `holder` still holds it.

        With `retry` (attempts spent, earliest next attempt), a failure is recorded to be
        retried then instead of as an outcome. False, with nothing recorded, when the claim is
        gone or was taken over: the new holder's run is the one that counts.
        """
        if status not in ("done", "failed"):
            raise ValueError(f"status must be 'done' or 'failed', not {status!r}")
        at = time.time() if now is None else now
        with self._write() as conn:
            if not _drop_claim(conn, item_id, holder):
                return False
            if retry is not None and status == "failed":
                conn.execute("INSERT INTO retries (item_id, attempts, retry_after) VALUES (?, ?, ?)"
                             " ON CONFLICT (item_id) DO UPDATE SET attempts = excluded.attempts,"
                             " retry_after = excluded.retry_after", (item_id, *retry))
                return True
            conn.execute("DELETE FROM retries WHERE item_id = ?", (item_id,))
            params = {"item": item_id, "status": status, "reason": reason, "holder": holder}
            conn.execute(_SETTLE, {**params, "now": at})
            return True

    def clear(self, item_id: str, include_done: bool = False) -> bool:
        """Forget a failed outcome (a person retries the item); a done one too if `include_done`."""
        with self._write() as conn:
            conn.execute("DELETE FROM retries WHERE item_id = ?", (item_id,))
            cursor = conn.execute(
                "DELETE FROM outcomes WHERE item_id = ? AND (status = 'failed' OR ?)",
                (item_id, include_done),
            )
            return cursor.rowcount == 1

    def park(self, item_id: str, holder: str, gate: str, reason: str | None = None,
             now: float | None = None) -> bool:
        """Park `item_id` awaiting approval of `gate` and drop `holder`'s claim, in one
        transaction; False, with nothing written, when `holder` no longer holds it."""
        at = time.time() if now is None else now
        with self._write() as conn:
            if not _drop_claim(conn, item_id, holder):
                return False
            conn.execute(
                "INSERT INTO gates (item_id, name, status, reason, by, at)"
                " VALUES (?, ?, 'awaiting', ?, NULL, ?) ON CONFLICT (item_id, name) DO UPDATE"
                " SET status = 'awaiting', reason = excluded.reason, by = NULL, at = excluded.at",
                (item_id, gate, reason, at))
            return True

    def answer(self, item_id: str, gate: str, status: str, reason: str | None = None,
               by: str | None = None, now: float | None = None) -> bool:
        """A person's answer (`approved` or `rejected`) to the gate `gate` of `item_id`; False
        when that gate is not awaiting an answer (never asked, or answered already)."""
        if status not in ("approved", "rejected"):
            raise ValueError(f"status must be 'approved' or 'rejected', not {status!r}")
        at = time.time() if now is None else now
        with self._write() as conn:
            return conn.execute(
                "UPDATE gates SET status = ?, reason = ?, by = ?, at = ?"
                " WHERE item_id = ? AND name = ? AND status = 'awaiting'",
                (status, reason, by, at, item_id, gate)).rowcount == 1

    def state(self, ids: Collection[str] | None = None) -> StoreState:
        """Every claim, outcome and retry record (or only those of `ids`), from one consistent
        read."""
        with self._read() as (conn, version):
            if version == 0:
                return StoreState(claims={}, outcomes={})
            claims: dict[str, ClaimRow] = {}
            outcomes: dict[str, OutcomeRow] = {}
            retries: dict[str, tuple[int, float]] = {}
            gates: dict[str, tuple[GateRow, ...]] = {}
            for where, args in _where_ids(ids):
                for row in conn.execute(
                    f"SELECT item_id, holder, since, lease_expires, attempt FROM claims{where}",
                    args,
                ):
                    claims[row[0]] = ClaimRow(row[0], row[1], row[2], row[3], row[4])
                for row in conn.execute(
                    f"SELECT item_id, status, reason, holder, at FROM outcomes{where}", args
                ):
                    outcomes[row[0]] = OutcomeRow(row[0], row[1], row[2], row[3], row[4])
                if version < 2:  # a schema-1 file a reader does not upgrade: no retries
                    continue
                for row in conn.execute(
                    f"SELECT item_id, attempts, retry_after FROM retries{where}", args
                ):
                    retries[row[0]] = (int(row[1]), float(row[2]))
                if version < 5:  # a schema-1 to -4 file a reader does not upgrade: no gates
                    continue
                for row in conn.execute(
                    f"SELECT item_id, name, status, reason, by, at FROM gates{where}"
                    " ORDER BY item_id, name", args
                ):
                    gates[row[0]] = (*gates.get(row[0], ()),
                                     GateRow(row[1], row[2], row[3], row[4], float(row[5])))
            return StoreState(claims=claims, outcomes=outcomes, retries=retries, gates=gates)

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version` of this connection: it changes when ANOTHER connection
        (another pool, `jr2 local retry`) committed, and never for this one's own writes. A
        reader that knows its own writes re-reads the store only when this number moved."""
        with self._lock, self._errors():
            return int(self._live().execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection (idempotent); the last writer to close tidies the WAL files."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _drop_claim(conn: sqlite3.Connection, item_id: str, holder: str) -> bool:
    """Delete `holder`'s claim on `item_id` and the groups it held, inside the caller's write
    transaction (release, settle and park all end a claim this way); False if `holder` did not
    hold it."""
    if conn.execute("DELETE FROM claims WHERE item_id = ? AND holder = ?",
                    (item_id, holder)).rowcount != 1:
        return False
    conn.execute("DELETE FROM claim_groups WHERE item_id = ?", (item_id,))
    return True
