"""Approval gates on the dashboard: the `GateDesk` over a tracker's gates
(`jr2_sources.capabilities.gates.policy`).

Design note: a tracker with `gates = True` reads each item's gates back as `SnapshotItem.gates`;
an item whose gate awaits an answer is blocked with the reason `awaiting_approval`. The dashboard
draws an **approve** box for each, and a tick answers it through
`jr2_sources.capabilities.gates.policy.answer` (the tracker's `answer_gate`), as `/jr2 approve NAME`
from a writer would; `by` names the dashboard issue, so the answer says where it came from. Only
items in the scope are listed.

`jr2 dashboard` reads through a read-only tracker (it never writes the backlog's items but for
what a tick asks), so it answers through a second, writable one opened on the first approve
(`answering`); `jr2 work --dashboard` answers through the pool's own tracker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_sources.capabilities.dashboard.render import PendingGate
from jr2_sources.readyset import ReadySet

from .policy import answer, awaiting

__all__ = ["TrackerGates"]


class TrackerGates:
    """The gates of `tracker`'s items, answered from the dashboard `board_name`."""

    def __init__(self, tracker: Any, board_name: str, *,
                 answering: Callable[[], Any] | None = None) -> None:
        """`answering`: opens the tracker answers are written through (default: `tracker`)."""
        self.tracker = tracker
        self.board_name = board_name
        self._answering = answering
        self._writer: Any = None if answering is not None else tracker

    def pending(self, rs: ReadySet) -> list[PendingGate]:
        out = []
        for e in rs.blocked:
            gate = awaiting(e.item) if e.item.in_scope and e.item.gates else None
            if gate is not None:
                out.append(PendingGate(e.item.id, gate.name, gate.at, gate.reason))
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
