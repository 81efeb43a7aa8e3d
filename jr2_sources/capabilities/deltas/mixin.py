"""`ReadsDeltas`: the mixin a tracker inherits to be read by what changed (module notes of
`jr2_sources.capabilities.deltas.reader`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jr2_sources.readyset import Snapshot

    from .incremental import Delta

__all__ = ["ReadsDeltas"]


class ReadsDeltas(ABC):
    """Declares deltas: after one full reading, `changes()` answers with what changed since
    the last call, so a claim costs what changed, not the backlog's size."""

    @abstractmethod
    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """A `Delta` since the last call, or a full `Snapshot` (always with `full=True`, and
        whenever the tracker sees a sign of a gap: the reader then starts over from it)."""
        raise NotImplementedError
