"""`jr2 send approvals approve|reject`: answer an approval gate through a live `jr2 work` run.

Over a source that records answers itself (`local:`'s claim store), a `--gate` run opens the
persistent gate `approvals`, accepting `approve` (`{"item": ID, "gate": NAME}`) and `reject`
(plus an optional `reason`). A delivery answers through `policy.answer` (as `jr2 local
approve|reject` does) and wakes the pool; a gate that awaits no answer is refused (exit 2).
"""

from __future__ import annotations

import contextlib
import getpass
from typing import Any

from pydantic import BaseModel

from jr2_core import define_event
from jr2_core.errors import GateError, UsageError

from .mixin import KeepsApprovals
from .policy import answer

GATE_ID = "approvals"


class Approve(BaseModel):
    """Which item's gate to approve."""

    item: str
    gate: str


class Reject(Approve):
    """Which item's gate to reject, and why."""

    reason: str | None = None


def attach_approvals(run: Any, tracker: Any) -> bool:
    """Open the `approvals` gate on `run` when `tracker` records answers; True if opened."""

    if not isinstance(tracker, KeepsApprovals):
        return False
    events = [define_event(name="approve", description="Approve the gate of an item.",
                           input=Approve),
              define_event(name="reject", description="Reject the gate of an item.",
                           input=Reject)]
    try:
        who: str | None = getpass.getuser()
    except (KeyError, OSError):
        who = None

    def deliver(ev: Any) -> None:
        data = ev.data
        try:
            ok = answer(tracker, data.item, data.gate, approve=ev.name == "approve",
                        reason=data.reason if isinstance(data, Reject) else None, by=who)
        except (UsageError, ValueError) as exc:
            raise GateError(str(exc)) from None
        if not ok:
            raise GateError(f"{data.item}: gate {data.gate!r} is not awaiting an answer")
        with contextlib.suppress(Exception):  # the pool may be busy: it polls anyway
            run.send("source", "wake", None, external=False)

    run._open_gate(GATE_ID, events, {"what": "answer an approval gate (jr2 work --gate)"},
                   deliver, persistent=True)
    return True
