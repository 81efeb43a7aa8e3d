"""Approval gates on the dashboard: the `GateDesk` over a tracker's gates.

The dashboard draws an **approve** box for each item in scope whose gate awaits an answer; a
tick answers it through `policy.answer` (`by` names the dashboard issue). `jr2 dashboard` reads
through a read-only tracker, so it answers through a writable one opened on the first approve
(`answering`); `jr2 work --dashboard` answers through the pool's own tracker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_sources.capabilities.dashboard.model import PendingApproval
from jr2_sources.readyset import ReadySet

from .policy import answer, awaiting

__all__ = ["TrackerApprovals"]


class TrackerApprovals:
    """The gates of `tracker`'s items, answered from the dashboard `board_name`."""

    def __init__(self, tracker: Any, board_name: str, *,
                 answering: Callable[[], Any] | None = None) -> None:
        self.tracker = tracker
        self.board_name = board_name
        self._answering = answering
        self._writer: Any = None if answering is not None else tracker

    def pending(self, rs: ReadySet) -> list[PendingApproval]:
        out = []
        for e in rs.blocked:
            gate = awaiting(e.item) if e.item.in_scope and e.item.gates else None
            if gate is not None:
                out.append(PendingApproval(e.item.id, gate.name, gate.at, gate.reason))
        return out

    def approve(self, item_id: str, gate: str) -> bool:
        if self._writer is None and self._answering is not None:
            self._writer = self._answering()
        return answer(self._writer, item_id, gate, approve=True,
                      by=f"a tick on {self.board_name}")

    def close(self) -> None:
        """Close the tracker opened for answering, if one was."""
        if self._answering is not None and self._writer is not None:
            self._writer.close()
            self._writer = None
