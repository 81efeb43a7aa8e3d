"""`KeepsApprovals`: the mixin a tracker inherits to park items awaiting approval (module notes of
`jr2_sources.capabilities.approvals.policy`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .policy import ApprovalRequest, ApprovalStatus

__all__ = ["KeepsApprovals"]


class KeepsApprovals(ABC):
    """Declares approval gates (`jr2 work --gate`): the tracker parks an item awaiting a
    person's answer, reads its gates back as `SnapshotItem.gates`, and records an answer given
    through jr2 (the dashboard, `jr2 send approvals`, `jr2 local approve`)."""

    @abstractmethod
    def park(self, item_id: str, holder: str, request: ApprovalRequest) -> None:
        """Record that `item_id` awaits approval of `request.name`; end `holder`'s claim."""
        raise NotImplementedError

    @abstractmethod
    def answer_approval(self, item_id: str, name: str, status: ApprovalStatus,
                    reason: str | None = None, by: str | None = None) -> bool:
        """Record an answer given through jr2: True, or False when the gate awaits none."""
        raise NotImplementedError
