"""Keeping the dashboard issue out of the backlog it reports on: `hide_items` makes the tracker
report those ids as outside the scope (`in_scope=False`), which the WorkSource never offers,
claims or settles, whatever label a person gives the issue later. It wraps the instance's own
`snapshot` (and `changes`), so the tracker keeps every other capability.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jr2_sources.capabilities import readings
from jr2_sources.capabilities.deltas import ReadsDeltas
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.readyset import Snapshot

__all__ = ["hide_items"]


def hide_items(tracker: Any, ids: Iterable[str]) -> None:
    """Make `tracker` report the items `ids` as outside its scope from now on."""
    hidden = frozenset(ids)

    def hide(got: Any) -> None:
        for it in got.items if isinstance(got, (Snapshot, Delta)) else ():
            if it.id in hidden:
                it.in_scope = False

    changes = tracker.changes if isinstance(tracker, ReadsDeltas) else None
    snapshot, changes = readings(tracker.snapshot, changes, after=hide)
    setattr(tracker, "snapshot", snapshot)  # noqa: B010 (an instance's method)
    if changes is not None:
        setattr(tracker, "changes", changes)  # noqa: B010
