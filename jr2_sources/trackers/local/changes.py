"""Change detection for the local source: what changed since the last look, at its own cost.

`LocalChanges.changes()` answers a `Delta`, or a full `Snapshot` whenever it cannot be sure:

* A changed backlog file (its `(st_mtime_ns, st_size, st_ino)`) gives a full snapshot; the
  adapter hands over only a reading it trusts (`saving.py`).
* The claim store is re-read only when another connection committed (`PRAGMA data_version`). The
  adapter notes its own writes after they commit (`note(id)`), and the next delta re-reads those
  rows; when the version moved, the whole store is compared with the mirror kept here.
* The delta rebuilds the changed items the snapshot lists and gives the others' state as a
  blocker (`Delta.left`). The version is read before the rows, so a commit in between is seen
  again next time, never missed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.readyset import Snapshot, SnapshotItem

from .items import ItemView
from .store import ClaimStore, StoreState

if TYPE_CHECKING:
    from .backlog import Backlog

FileKey = tuple[int, int, int]
_Row = TypeVar("_Row")


def file_key(path: Path) -> FileKey:
    """The backlog file's identity: modification time (ns), size and inode; (-1,-1,-1) if absent."""
    try:
        st = path.stat()
    except OSError:
        return (-1, -1, -1)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class LocalChanges:
    """Remembers the last reading of a backlog and its claim store and says what changed."""

    def __init__(self, name: str, wanted: set[str]) -> None:
        self.name = name
        self.wanted = wanted
        self._key: FileKey | None = None
        self._view: ItemView | None = None
        self._version: int | None = None
        self._noted: set[str] = set()
        self._done_count = 0
        self._lock = threading.Lock()

    def note(self, item_id: str) -> None:
        """This process wrote `item_id`'s claim or outcome (call after the write committed)."""
        with self._lock:
            self._noted.add(item_id)

    def changes(self, key: FileKey, backlog: Backlog, store: ClaimStore | None, *,
                full: bool = False) -> Snapshot | Delta:
        """What changed since the last call: a `Delta`, or a full `Snapshot` on the first call,
        when the file changed, or when `full` is asked."""
        with self._lock:
            noted, self._noted = self._noted, set()
        version = store.data_version() if store is not None else None
        view = self._view
        if full or view is None or key != self._key or view.backlog is not backlog:
            state = store.state() if store is not None else StoreState({}, {})
            self._view = ItemView(backlog, dict(state.claims), dict(state.outcomes), self.wanted,
                                  dict(state.retries), dict(state.gates))
            self._key, self._version = key, version
            snap = self._view.snapshot(self.name)
            self._done_count = snap.done_count or 0
            return snap
        if version != self._version:
            assert store is not None
            state = store.state()
            touched = _differ(view.claims, state.claims) | _differ(view.outcomes, state.outcomes)
            touched |= _differ(view.retries, state.retries) | _differ(view.gates, state.gates)
            touched |= noted
            self._version = version
        elif noted and store is not None:
            state = store.state(noted)
            touched = noted
        else:
            return Delta(done_count=self._done_count)
        return self._delta(view, touched, state)

    def items_now(self, backlog: Backlog, store: ClaimStore | None,
                  ids: Sequence[str]) -> dict[str, SnapshotItem | None]:
        """`ids` as a snapshot would list them now (None: not listed), reading only their rows
        of the store and reusing the last reading's index of the same backlog: O(len(ids)),
        so watching the held items before each settle costs what they number, not the
        backlog's size."""
        state = store.state(ids) if store is not None else StoreState({}, {})
        view = ItemView(backlog, state.claims, state.outcomes, self.wanted, state.retries,
                        state.gates, index=self._view)
        return {iid: view.item(iid) for iid in ids}

    def _delta(self, view: ItemView, touched: set[str], state: StoreState) -> Delta:
        """Update the mirror for `touched` from `state` and rebuild those items."""
        before = {iid for iid in touched if view.counted(iid)}
        for iid in touched:
            _put(view.claims, iid, state.claims.get(iid))
            _put(view.outcomes, iid, state.outcomes.get(iid))
            _put(view.retries, iid, state.retries.get(iid))
            _put(view.gates, iid, state.gates.get(iid))
        after = {iid for iid in touched if view.counted(iid)}
        self._done_count += len(after) - len(before)
        delta = Delta(done_count=self._done_count)
        for iid in sorted(touched):
            item = view.item(iid)
            if item is None:
                delta.left[iid] = view.state(iid)
            else:
                delta.items.append(item)
        return delta


def _put(rows: dict[str, _Row], iid: str, row: _Row | None) -> None:
    if row is None:
        rows.pop(iid, None)
    else:
        rows[iid] = row


def _differ(old: dict[str, _Row], new: dict[str, _Row]) -> set[str]:
    """The ids whose row was added, removed or changed."""
    return {iid for iid in old.keys() | new.keys() if old.get(iid) != new.get(iid)}
