"""Approval gates (`jr2 work --gate NAME`), declared with `KeepsApprovals` (`mixin`, the only name
exported here). `policy`: how a worker asks, a person answers and the next attempt is told;
`comments`: gates read from a comment thread; `approvals`: the `approvals` gate of a live run;
`desk`: gates answered from the dashboard.
"""

from .mixin import KeepsApprovals

__all__ = ["KeepsApprovals"]
