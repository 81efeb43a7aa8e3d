"""The local Work Source (`local:PATH`): a backlog file people write, claims in SQLite.

jr2 never rewrites the backlog file, so human edits are never lost. Claims, leases and outcomes
live in `<state>/local/<slug-hash of the backlog's absolute path>.sqlite`, never beside the
backlog. A dry run (`env.read_only`) opens that store read-only if it exists and otherwise
creates nothing. The parsed backlog is cached on the file's (mtime, size, inode); a running pool
reads deltas (`changes()`, see `changes.py`), so a claim costs what changed, not the backlog's size.
"""

from __future__ import annotations

import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from jr2_core import Outcome
from jr2_core.paths import safe_name
from jr2_sources.incremental import Delta
from jr2_sources.kit.durations import Duration
from jr2_sources.readyset import Snapshot, SnapshotItem
from jr2_sources.registry import SourceEnv

from .backlog import Backlog, load_backlog
from .changes import FileKey, LocalChanges, file_key
from .items import ItemView
from .store import ClaimStore


class LocalConfig(BaseModel):
    """Options of `local:PATH`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=1, description="the backlog file (TOML, or JSON)")
    label: list[str] = Field(default_factory=list,
                             description="only items with this label (repeat: all of them)")
    children_block: bool = Field(default=True,
                                 description="a parent waits until its children are done")
    poll_every: Duration = Field(default=0.5,
                                 description="how often a waiting pool looks for changes")


class LocalAdapter:
    """A `TrackerAdapter` over a backlog file and a SQLite claim store."""

    def __init__(self, config: LocalConfig, env: SourceEnv) -> None:
        self.config = config
        self.path = Path(config.target)
        self.name = f"local:{config.target}"
        self.store_path = env.state_dir / "local" / f"{safe_name(str(self.path.resolve()))}.sqlite"
        self.read_only = env.read_only
        self._store: ClaimStore | None = None
        self._cache: tuple[FileKey, Backlog] | None = None
        self._lock = threading.Lock()
        self._changes = LocalChanges(self.name, set(config.label))

    # -- reading -------------------------------------------------------------------------------

    def backlog(self) -> Backlog:
        """The parsed backlog, re-read only when the file changed (`changes.file_key`)."""
        key = file_key(self.path)
        with self._lock:
            if self._cache is None or self._cache[0] != key:
                self._cache = (key, load_backlog(self.path))
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
                        set(self.config.label)).snapshot(self.name)

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
            return self._writable().claim(item.id, holder, lease)
        finally:
            self._changes.note(item.id)

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        try:
            return self._writable().renew(item_id, holder, lease)
        finally:
            self._changes.note(item_id)

    def release(self, item_id: str, holder: str) -> None:
        try:
            self._writable().release(item_id, holder)
        finally:
            self._changes.note(item_id)

    def record(self, item_id: str, holder: str, outcome: Outcome) -> None:
        if outcome.status == "cancelled":
            self.release(item_id, holder)
            return
        reason = outcome.failure.reason if outcome.failure is not None else None
        try:
            self._writable().settle(item_id, holder, outcome.status, reason)
        finally:
            self._changes.note(item_id)

    def retry(self, item_id: str) -> bool:
        """Clear a failed outcome so the item is offered again (`jr2 local retry`)."""
        if item_id not in self.backlog().by_id():
            from jr2_core.errors import UsageError

            raise UsageError(f"{self.config.target}: no item {item_id!r}")
        return self._writable().clear(item_id)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
