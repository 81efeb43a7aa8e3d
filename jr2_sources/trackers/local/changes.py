"""Local deltas: the local source's queries for the kit's `SinceReader`, at their own cost.

`LocalChanges.changes()` answers a `Delta`, or a full `Snapshot` whenever it cannot be sure:

* A changed backlog file (its `(st_mtime_ns, st_size, st_ino)`) gives a full snapshot; the
  tracker hands over only a reading it trusts (`saving.py`).
* The page of changes is the claim store's rows that changed: the store is re-read only when
  another connection committed (`PRAGMA data_version`), and then compared whole with the mirror
  kept here; the tracker marks its own writes after they commit (`note(id)`), whose rows are
  read again. The version is read before the rows, so a commit in between is seen again next
  time, never missed. The window is not `paged`; its server is this machine's clock.
* The delta rebuilds the changed items the snapshot lists and gives the others' state as a
  blocker (`Delta.left`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow
from jr2_sources.readyset import BlockerState, Snapshot, SnapshotItem

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


class LocalChanges(SinceReader[str]):
    """The last reading of a backlog and its claim store, and the rows that changed since."""

    def __init__(self, name: str, wanted: set[str]) -> None:
        super().__init__(SinceWindow(paged=False, fingerprint=lambda row: row))  # rows compare
        self.name = name
        self.wanted = wanted
        self._key: FileKey | None = None
        self._view: ItemView | None = None
        self._version: int | None = None
        self._store: ClaimStore | None = None
        self._built: dict[str, SnapshotItem] = {}
        self._done_count = 0

    def note(self, item_id: str) -> None:
        """This process wrote `item_id`'s claim or outcome (call after the write committed)."""
        self.window.mark([item_id])

    def changes(self, key: FileKey, backlog: Backlog, store: ClaimStore | None, *,
                full: bool = False) -> Snapshot | Delta:
        """What changed since the last call: a `Delta`, or a full `Snapshot` on the first call,
        when the file changed, or when `full` is asked."""
        self._store = store
        view = self._view
        if not full and view is not None and key == self._key and view.backlog is backlog:
            delta = self.read(set())
            if delta is not None:
                return delta
        self.window.begin()
        version = store.data_version() if store is not None else None
        state = store.state() if store is not None else StoreState({}, {})
        self._view = ItemView(backlog, dict(state.claims), dict(state.outcomes), self.wanted,
                              dict(state.retries), dict(state.gates))
        self._key, self._version = key, version
        snap = self._view.snapshot(self.name)
        self._done_count = snap.done_count or 0
        self.start(datetime.now(UTC), (), snap.items)
        return snap

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

    # -- the queries -----------------------------------------------------------------------------

    def page(self, since: datetime) -> Page:
        """The rows that changed, one object per item id, the mirror updated from them."""
        view, store = self._view, self._store
        assert view is not None
        noted = {str(k) for k in self.window.take_marks()}
        version = store.data_version() if store is not None else None
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
            return [], datetime.now(UTC)
        before = {iid for iid in touched if view.counted(iid)}
        rows = []
        for iid in sorted(touched):
            _put(view.claims, iid, state.claims.get(iid))
            _put(view.outcomes, iid, state.outcomes.get(iid))
            _put(view.retries, iid, state.retries.get(iid))
            _put(view.gates, iid, state.gates.get(iid))
            rows.append((iid, view.claims.get(iid), view.outcomes.get(iid),
                         view.retries.get(iid), view.gates.get(iid)))
        self._done_count += sum(1 for iid in touched if view.counted(iid)) - len(before)
        return rows, datetime.now(UTC)

    def marks(self) -> list[str]:
        return []  # read by `page`: they are rows to compare

    def key_of(self, obj: Any) -> str:
        return str(obj[0])

    def updated_of(self, obj: Any) -> datetime | None:
        return None

    def leaves(self, key: str, obj: Any, skip: set[str]) -> BlockerState | None:
        assert self._view is not None
        item = self._view.item(key)
        if item is None:
            return self._view.state(key)
        self._built[key] = item
        return None

    def item_of(self, key: str, obj: Any, delta: Delta) -> SnapshotItem | None:
        return self._built.pop(key)

    def finish(self, delta: Delta) -> None:
        delta.done_count = self._done_count


def _put(rows: dict[str, _Row], iid: str, row: _Row | None) -> None:
    if row is None:
        rows.pop(iid, None)
    else:
        rows[iid] = row


def _differ(old: dict[str, _Row], new: dict[str, _Row]) -> set[str]:
    """The ids whose row was added, removed or changed."""
    return {iid for iid in old.keys() | new.keys() if old.get(iid) != new.get(iid)}
