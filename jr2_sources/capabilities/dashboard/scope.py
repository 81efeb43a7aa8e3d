"""Keeping the dashboard issue out of the backlog it reports on: `hide_items` makes the tracker
report those ids as outside the scope (`in_scope=False`), which the WorkSource never offers,
claims or settles, whatever label a person gives the issue later. It wraps the instance's own
`snapshot` (and `changes`), so the tracker keeps every other capability.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from jr2_sources.capabilities.deltas import ReadsDeltas
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.readyset import Snapshot, SnapshotItem

__all__ = ["hide_items"]


def _hide(items: Iterable[SnapshotItem], ids: frozenset[str]) -> None:
    for it in items:
        if it.id in ids:
            it.in_scope = False


def hide_items(tracker: Any, ids: Iterable[str]) -> None:
    """Make `tracker` report the items `ids` as outside its scope from now on."""
    hidden = frozenset(ids)

    def wrap(read: Callable[..., Any]) -> Callable[..., Any]:
        def reader(*args: Any, **kwargs: Any) -> Any:
            got = read(*args, **kwargs)
            if isinstance(got, (Snapshot, Delta)):
                _hide(got.items, hidden)
            return got
        return reader

    setattr(tracker, "snapshot", wrap(tracker.snapshot))  # noqa: B010 (an instance's method)
    if isinstance(tracker, ReadsDeltas):
        setattr(tracker, "changes", wrap(tracker.changes))  # noqa: B010
