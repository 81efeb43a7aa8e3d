"""The local Work Source (`local:PATH`): a backlog file people write, claims in SQLite.

jr2 never rewrites the backlog. Claims, leases and outcomes live in `<state>/local/<slug-hash of
the backlog's path>.sqlite` (`store.py`); a dry run opens it read-only if it exists and creates
nothing. A running pool reads deltas (`changes.py`). Every reading goes through `backlog()`: a
changed file is read once it is `STABLE_AGE` old, a reading during which its key moved is thrown
away, one that lost something is confirmed (`saving.py`); a file that stops parsing keeps the last
good backlog for `invalid_grace` (warned at most every `WARN_EVERY`), then ends the run (exit 4).
`--label` selects items (one outside it with jr2's marks is `in_scope=False`). People win: an item
marked done or removed while held is taken back, judged from a file at least `WATCH_AGE` old.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jr2_core import Outcome
from jr2_core.errors import SourceError, UsageError
from jr2_core.paths import safe_name
from jr2_sources.capabilities.approvals import KeepsApprovals
from jr2_sources.capabilities.approvals.policy import ApprovalRequest
from jr2_sources.capabilities.attempts import Attempt, KeepsAttempts
from jr2_sources.capabilities.dashboard.mixin import HasDashboard
from jr2_sources.capabilities.deltas import ReadsDeltas
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.limits import KeepsLimits, ReadsBodies
from jr2_sources.readyset import Snapshot, SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.tracker import Tracker, taken_back

from .backlog import BacklogError, load_backlog, read_bytes
from .board import LocalBoard
from .changes import FileKey, LocalChanges, file_key
from .config import LocalConfig
from .items import ItemView
from .saving import SaveGuard, lost
from .store import ClaimStore

if TYPE_CHECKING:
    from .backlog import Backlog

log = logging.getLogger("jr2.local")

STABLE_AGE = 0.2
"""A changed backlog is read once it was last modified at least this many seconds ago."""
WATCH_AGE = 1.0
"""People win (`watch`) trusts a backlog file only once it was last modified this long ago."""
CONFIRM_AGE = 1.0
"""A reading that lost items or bytes is trusted once this process saw it unchanged this long
(`saving.py`; docs/design/local.md says why 1 s). At least `WATCH_AGE`, so people win never
stops a worker from a reading younger than that either."""
STABLE_WAIT = 2.0
"""The longest a read waits for a file that keeps changing (then the last good state holds)."""
WARN_EVERY = 5.0
"""The least seconds between two warnings about one invalid backlog."""



class LocalTracker(ReadsDeltas, KeepsAttempts, KeepsLimits, ReadsBodies, KeepsApprovals,
                   HasDashboard, Tracker):
    """A `Tracker` over a backlog file and a SQLite claim store: read by deltas, with the
    attempt record, the limits (in the claim transaction: `store.py`) and the gates in the
    claim store, and a markdown file as its dashboard."""

    inline = True
    """Called on the event loop, not in a thread (`Tracker.inline`): a claim or settle is one
    SQLite transaction, cheaper than the thread hop around it; a backlog edited mid-run is
    re-read on the loop once per edit (waiting at most `STABLE_WAIT`, `saving.py`)."""

    def __init__(self, config: LocalConfig, env: SourceEnv) -> None:
        self.config = config
        self.path = Path(config.target)
        self.name = f"local:{config.target}"
        self.store_path = env.state_dir / "local" / f"{safe_name(str(self.path.resolve()))}.sqlite"
        self.read_only = env.read_only
        self.env = env
        self._store: ClaimStore | None = None
        self._cache: tuple[FileKey, Backlog] | None = None
        self._lock = threading.Lock()
        self._changes = LocalChanges(self.name, set(config.label))
        self._guard = SaveGuard(self.path, CONFIRM_AGE)
        self._invalid_since: float | None = None
        self._warned_at = 0.0

    # -- reading -------------------------------------------------------------------------------

    def _stat(self) -> tuple[FileKey, float]:
        """The file's key (`changes.file_key`: mtime, size, inode) and the seconds since it was
        last modified."""
        key = file_key(self.path)
        if key[0] < 0:
            return key, STABLE_AGE
        return key, time.time() - key[0] / 1e9

    def _stable_key(self, end: float) -> FileKey | None:
        """The key of the file once it is stable (see the module notes); None if it kept
        changing until `end` (monotonic). A dry run does not wait, nor does a file shorter
        than the last good reading: that reading waits by this process's clock instead
        (`saving.py`), which the mtime cannot replace."""
        key, age = self._stat()
        cache = self._cache
        if self.read_only or (cache is not None and (cache[0] == key or key[1] < cache[0][1])):
            return key
        while age < STABLE_AGE:
            if time.monotonic() >= end:
                return None
            time.sleep(min(max(STABLE_AGE - age, 0.01), STABLE_AGE))
            key, age = self._stat()
        return key

    def backlog(self) -> Backlog:
        """The parsed backlog, re-read only when the file changed (and is stable); a reading
        that lost items or bytes only once it is confirmed (`saving.py`)."""
        with self._lock:
            end = time.monotonic() + STABLE_WAIT
            for _ in range(3):
                key = self._stable_key(end)
                cache = self._cache
                if cache is not None and cache[0] == key:
                    return cache[1]
                try:
                    if key is None:
                        raise BacklogError(f"{self.path}: the file keeps changing")
                    data = read_bytes(self.path)
                    parsed = load_backlog(self.path, data)
                except BacklogError as exc:
                    if self._stat()[0] != key:  # changed while it was read: look again
                        continue
                    if self.read_only or cache is None:
                        raise
                    return self._keep_last_good(exc)
                # every reading, the first too: a save that began while the file was read may
                # have left half of it (an empty file is valid TOML), so look again
                if self._stat()[0] != key:
                    continue
                # a reading that lost something is half a save until this process saw it stay;
                # a pool's first has nothing to compare with, and an emptied file is the half
                # whose mtime was seen to lie: an empty first reading waits as well
                suspect = (lost(cache[0], cache[1], key, parsed) if cache is not None
                           else not self.read_only and not parsed.items)
                if suspect and not self._guard.confirmed(key, data):
                    continue
                if cache is not None and not self.read_only:
                    self._say_left(cache[1], parsed)
                self._cache = (key, parsed)
                self._invalid_since = None
                return parsed
            stuck = BacklogError(f"{self.path}: the file keeps changing")
            if self._cache is None:
                raise stuck
            return self._keep_last_good(stuck)

    def _say_left(self, before: Backlog, now: Backlog) -> None:
        """One warning line naming the items a new reading of the file no longer holds: a run
        that ends `drained` after its backlog lost items says what left it."""
        kept = {it.id for it in now.items}
        gone = [it.id for it in before.items if it.id not in kept]
        if gone:
            shown = ", ".join(gone[:10]) + (f" and {len(gone) - 10} more" if len(gone) > 10
                                            else "")
            log.warning("%s: %d item%s left the backlog (no longer in the file): %s",
                        self.name, len(gone), "" if len(gone) == 1 else "s", shown)

    def _keep_last_good(self, exc: BacklogError) -> Backlog:
        """The last good backlog while the file is invalid, for `invalid_grace` at most."""
        assert self._cache is not None
        now = time.monotonic()
        grace = self.config.invalid_grace
        if self._invalid_since is None:
            self._invalid_since = now
        elif now - self._invalid_since > grace:
            raise SourceError(f"{exc} (still invalid after {grace:g}s)") from None
        if now - self._warned_at >= WARN_EVERY:
            self._warned_at = now
            left = grace - (now - self._invalid_since)
            log.warning("jr2: %s; keeping the last good backlog (the run ends if it is still "
                        "invalid in %.0fs)", exc, left)
        return self._cache[1]

    def _open_store(self) -> ClaimStore | None:
        if self._store is None:
            if self.read_only:
                self._store = ClaimStore.open_readonly(self.store_path)
            else:
                self._store = ClaimStore(self.store_path)
        return self._store

    def _writable(self) -> ClaimStore:
        if self.read_only:
            raise RuntimeError("a read-only local source cannot write")
        store = self._open_store()
        assert store is not None
        return store

    def snapshot(self) -> Snapshot:
        backlog = self.backlog()
        store = self._open_store()
        state = store.state() if store is not None else None
        return ItemView(backlog, state.claims if state else {}, state.outcomes if state else {},
                        set(self.config.label), state.retries if state else {},
                        state.gates if state else {}).snapshot(self.name)

    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """What changed since the last call (see `changes.py`): a `Delta`, or a full snapshot
        the first time, when the backlog file changed, or when `full` is asked."""
        backlog = self.backlog()
        with self._lock:
            key = self._cache[0] if self._cache is not None else file_key(self.path)
        return self._changes.changes(key, backlog, self._open_store(), full=full)

    # -- claims --------------------------------------------------------------------------------

    # Each write is noted AFTER it committed, won or lost: the next delta re-reads that row.

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        try:
            return self._writable().claim(item.id, holder, lease, attempts=item.attempts,
                                          groups=item.groups, global_cap=self.global_cap)
        finally:
            self._changes.note(item.id)

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        try:
            return self._writable().renew(item_id, holder, lease)
        finally:
            self._changes.note(item_id)

    def settle(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        retry = None
        if attempt is not None and attempt.retry_after is not None:
            retry = (attempt.number, attempt.retry_after.timestamp())
        try:
            if outcome.status == "cancelled":
                self._writable().release(item_id, holder)
                return
            reason = outcome.failure.reason if outcome.failure is not None else None
            self._writable().settle(item_id, holder, outcome.status, reason, retry=retry)
        finally:
            self._changes.note(item_id)

    def park(self, item_id: str, holder: str, request: ApprovalRequest) -> None:
        try:
            self._writable().park(item_id, holder, request.name, request.reason)
        finally:
            self._changes.note(item_id)

    def answer_approval(self, item_id: str, name: str, status: str, reason: str | None = None,
                    by: str | None = None) -> bool:
        """A person's answer to a gate (`jr2 local approve|reject`,
        `jr2_sources.capabilities.approvals.policy.answer`): False when that gate does not await an
        answer."""
        if item_id not in self.backlog().by_id():
            raise UsageError(f"{self.config.target}: no item {item_id!r}")
        try:
            return self._writable().answer(item_id, name, status, reason, by)
        finally:
            self._changes.note(item_id)

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        """People win, judged only from a backlog file that has been still for `WATCH_AGE` and
        did not change while it was read (raises otherwise: the WorkSource looks again later).
        Stopping a worker is worse than stopping it a second late, so this waits longer than a
        read does (`STABLE_AGE`): a save stalled half-way must not look like a person's edit.
        It reads only the held items (their store rows, the cached backlog), so it costs what
        they number, not the backlog's size."""
        before = file_key(self.path)
        age = time.time() - before[0] / 1e9 if before[0] >= 0 else WATCH_AGE
        if age < WATCH_AGE:  # a deleted backlog is a decision too, once it stays gone
            raise BlockingIOError(f"{self.path} changed {age:.2f}s ago; looking again later")
        now = self._changes.items_now(self.backlog(), self._open_store(), item_ids)
        taken = {iid: why for iid, item in now.items()
                 if (why := taken_back(item, holder)) is not None}
        if taken and file_key(self.path) != before:
            raise BlockingIOError(f"{self.path} changed while it was read; looking again later")
        return taken

    def retry(self, item_id: str) -> bool:
        """Clear a failed outcome so the item is offered again (`jr2 local retry`)."""
        if item_id not in self.backlog().by_id():
            raise UsageError(f"{self.config.target}: no item {item_id!r}")
        try:
            return self._writable().clear(item_id)
        finally:  # a dashboard tick in a running pool: its next delta re-reads the item
            self._changes.note(item_id)

    def writer(self) -> LocalTracker:
        """A writable tracker of the same backlog and claim store (for a read-only one that
        must answer a person's request: a dashboard tick)."""
        return LocalTracker(self.config, replace(self.env, read_only=False))

    def dashboard(self, issue: str | int) -> Any:
        """The markdown file `issue` (a path) as the dashboard (`board.py`): jr2 never writes
        the backlog file, so the dashboard is a file of its own."""
        return LocalBoard(self, issue)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
