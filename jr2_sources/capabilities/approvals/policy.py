"""Approval gates answered on the tracker (`jr2 work --gate NAME`): how a worker asks, how a
person answers, and what the next attempt is told.

* Asking: a worker prints `jr2: await-approval NAME [reason]` and exits `EX_AWAIT_APPROVAL`
  (79); without the line, 79 asks for the one gate when `--gate` names exactly one. A gate the
  run was not given fails the item.
* Parking (`KeepsApprovals.park`): the tracker marks the item as awaiting and releases its claim.
* Answering: a `/jr2 approve NAME` or `/jr2 reject NAME [reason]` comment (or an answer label) by
  someone with write access, `jr2 local approve|reject`, `jr2 send approvals ...`, or
  `answer()` (the dashboard). jr2's own comments never count.
* The next attempt runs with `JR2_GATE_<NAME>=approved|rejected` (and `_REASON`). An awaiting
  item is blocked with `awaiting_approval`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from jr2_core.errors import UsageError

from .mixin import KeepsApprovals

if TYPE_CHECKING:
    from jr2_sources.readyset import SnapshotItem

__all__ = ["ASK_PREFIX", "AWAITING_LABEL", "EX_AWAIT_APPROVAL", "REASON_MAX", "Approval",
           "ApprovalRequest", "ApprovalStatus", "answer", "answer_command", "answer_label",
           "awaiting", "check_name", "cut_reason", "env_for", "parse_ask"]

EX_AWAIT_APPROVAL = 79  # the exit code of a worker that asks for approval
ASK_PREFIX = "jr2: await-approval"  # the stdout line that names the gate
AWAITING_LABEL = "jr2:awaiting-approval"  # set (only by jr2) on an issue parked awaiting approval
REASON_MAX = 500  # the most characters of a gate's reason kept: it fits any tracker's comment

ApprovalStatus = Literal["awaiting", "approved", "rejected"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}\Z")
# Possessive whitespace and a reason taken to the end of its line, then stripped: anyone can
# write a comment (up to 65,536 characters on GitHub), so a pattern must not backtrack over a run
# of spaces (`[ \t]+([^\r\n]*\S)` took 50 s on one comment of 65,536 spaces).
_ASK = re.compile(r"jr2:\s++await-approval\s++(\S+)(?:\s++(.*))?\Z")
_ANSWER = re.compile(r"\s*+/jr2\s++(approve|reject)\s++(\S+)(?:[ \t]++([^\r\n]*))?", re.IGNORECASE)
_LABEL = re.compile(r"jr2:(approve|reject):(\S+)\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Approval:
    """One gate of an item as the tracker records it: its name, status, when (asked, or
    answered), the reason (the worker's while it awaits; the person's for a rejection), who
    answered, and who answered without the right to (`ignored`)."""

    name: str
    status: ApprovalStatus
    at: datetime
    reason: str | None = None
    by: str | None = None
    ignored: tuple[str, ...] = ()

    def to_json_obj(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status,
                "at": self.at.strftime("%Y-%m-%dT%H:%M:%SZ"), "reason": self.reason,
                "by": self.by, "ignored": list(self.ignored)}


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What a worker asked: the gate's name and its optional reason."""

    name: str
    reason: str | None = None


def check_name(name: str) -> str:
    """A gate name as `--gate` takes it, in lower case; ValueError otherwise."""
    if not _NAME.match(name):
        raise ValueError(f"gate name {name!r}: use letters, digits, '-' and '_' (at most 63)")
    return name.lower()


def cut_reason(text: str | None) -> str | None:
    """A reason within `REASON_MAX` characters, a longer one cut with a note (""/None: None)."""
    if not text:
        return None
    if len(text) <= REASON_MAX:
        return text
    return f"{text[:REASON_MAX]}… (cut: {len(text):,} characters in all)"


def parse_ask(line: str) -> ApprovalRequest | None:
    """The request in one stdout line `jr2: await-approval NAME [reason]`, or None."""
    m = _ASK.match(line.strip())
    if m is None:
        return None
    return ApprovalRequest(m.group(1).lower(), cut_reason(m.group(2)))


def answer_command(text: str) -> tuple[ApprovalStatus, str, str | None] | None:
    """A person's answer in a comment whose first line is `/jr2 approve NAME` or `/jr2 reject
    NAME [reason]`: (status, gate, reason), else None."""
    m = _ANSWER.match(text or "")
    if m is None:
        return None
    status: ApprovalStatus = "approved" if m.group(1).lower() == "approve" else "rejected"
    return status, m.group(2).lower(), cut_reason((m.group(3) or "").strip())


def answer_label(label: str) -> tuple[ApprovalStatus, str] | None:
    """A person's answer as a label `jr2:approve:NAME` or `jr2:reject:NAME`: (status, gate)."""
    m = _LABEL.match(label.strip())
    if m is None:
        return None
    return ("approved" if m.group(1).lower() == "approve" else "rejected"), m.group(2).lower()


def awaiting(item: SnapshotItem) -> Approval | None:
    """The gate `item` waits on (the oldest request when several), or None."""
    found = [g for g in item.gates if g.status == "awaiting"]
    return min(found, key=lambda g: g.at) if found else None


def env_name(name: str) -> str:
    """`JR2_GATE_<NAME>`: the gate's name in upper case, `-` as `_`."""
    return "JR2_GATE_" + name.upper().replace("-", "_")


def env_for(gates: dict[str, dict[str, str | None]]) -> dict[str, str]:
    """The variables of the answered gates a WorkItem carries (`WorkItem.gates`)."""
    env: dict[str, str] = {}
    for name, g in gates.items():
        status = g.get("status")
        if status not in ("approved", "rejected"):
            continue
        env[env_name(name)] = status
        if g.get("reason"):
            env[env_name(name) + "_REASON"] = str(g["reason"])
    return env


def answer(tracker: Any, item_id: str, name: str, *, approve: bool, reason: str | None = None,
           by: str | None = None) -> bool:
    """Answer the gate `name` of `item_id` through jr2, `by` someone: True when it was awaiting
    an answer and now has this one, False when it was not; `UsageError` when the tracker
    cannot record answers."""
    if not isinstance(tracker, KeepsApprovals):
        raise UsageError(f"{tracker.name}: gates cannot be answered through jr2 here; answer "
                         "on the tracker")
    status: ApprovalStatus = "approved" if approve else "rejected"
    return bool(tracker.answer_approval(item_id, check_name(name), status, reason, by))
