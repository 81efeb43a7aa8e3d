"""Options of `linear:TEAM`, validated by pydantic (`jr2 ready linear: --help`).

Design note: every scope option becomes part of one Linear `IssueFilter` (Linear's filtering
page), so the server selects the issues and a page holds only work: `--label` (all of them:
`labels: {some: {name: {eq}}}` each), `--project` (its name, case-insensitive), `--cycle`
(`current` = the active cycle, or a cycle number), `--assignee` (`none`, `me`, or an email),
and `--filter` (a raw `IssueFilter` as JSON, joined with `and`). jr2's own marks are
attachments, which no scope option reads, so jr2's writes never move an issue out of scope.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from jr2_sources import Tracker
from jr2_sources.kit.durations import Duration
from jr2_sources.kit.markers import TRUST_HELP

_TEAM = re.compile(r"^[A-Za-z0-9_]{1,10}$")
StateType = Literal["triage", "backlog", "unstarted", "started"]
"""Workflow state types of open issues (Linear's `WorkflowState.type`); `completed` and
`canceled` are closed."""
DEFAULT_STATES: tuple[StateType, ...] = ("backlog", "unstarted", "started")


class LinearConfig(Tracker.Options):
    """Options of `linear:TEAM`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="the team's key, as in its issue identifiers (ENG)")
    label: list[str] = Field(default_factory=list,
                             description="only issues with this label (repeat: all of them)")
    project: str | None = Field(default=None, description="only issues of this project (name)")
    cycle: str | None = Field(default=None,
                              description="only issues of this cycle: `current` or a number")
    assignee: str | None = Field(
        default=None, description="only issues assigned to: `none` (nobody), `me` (the key's "
                                  "user) or an email")
    state_type: list[StateType] = Field(
        default_factory=lambda: list(DEFAULT_STATES),
        description="workflow state types that count as work (repeatable; triage is left out "
                    "by default)")
    filter: str | None = Field(
        default=None, description="a raw Linear IssueFilter as JSON, for anything else, e.g. "
                                  "'{\"priority\": {\"lte\": 2}}'")
    priority_order: bool = Field(
        default=True, description="run Urgent first, then High, Medium, Low, No priority; "
                                  "--no-priority-order: oldest first only")
    on_success: Literal["complete", "nothing"] = Field(
        default="complete",
        description="on success: move the issue to the team's first completed state, or leave "
                    "it as it is")
    trust: list[str] = Field(default_factory=list, description=TRUST_HELP)
    write_spacing: Duration = Field(default=0.0, description="least time between two writes")
    poll_every: Duration = Field(default=60.0,
                                 description="how often a waiting pool asks Linear what changed")
    retry_budget: Duration = Field(default=300.0,
                                   description="most total time spent waiting on retries "
                                               "(5xx, RATELIMITED) before giving up")

    @field_validator("target")
    @classmethod
    def _team(cls, value: str) -> str:
        value = value.strip()
        if not _TEAM.match(value):
            raise ValueError(f"expected a team key such as ENG, not {value!r}")
        return value.upper()

    @field_validator("cycle")
    @classmethod
    def _cycle(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().lower()
        if value != "current" and not value.isdigit():
            raise ValueError(f"expected `current` or a cycle number, not {value!r}")
        return value

    @field_validator("filter")
    @classmethod
    def _filter(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise ValueError("expected a JSON object (an IssueFilter)")
        return value

    def scope(self) -> dict[str, Any]:
        """The `IssueFilter` of the issues this source selects (open, in the team, in scope)."""
        parts: list[dict[str, Any]] = [
            {"team": {"key": {"eq": self.target}}},
            {"state": {"type": {"in": list(self.state_type)}}},
        ]
        parts += [{"labels": {"some": {"name": {"eq": name}}}} for name in self.label]
        if self.project:
            parts.append({"project": {"name": {"eqIgnoreCase": self.project}}})
        if self.cycle == "current":
            parts.append({"cycle": {"isActive": {"eq": True}}})
        elif self.cycle:
            parts.append({"cycle": {"number": {"eq": float(self.cycle)}}})
        if self.assignee:
            who = self.assignee.strip()
            if who.lower() == "none":
                parts.append({"assignee": {"null": True}})
            elif who.lower() == "me":
                parts.append({"assignee": {"isMe": {"eq": True}}})
            else:
                parts.append({"assignee": {"email": {"eqIgnoreCase": who}}})
        if self.filter:
            parts.append(json.loads(self.filter))
        return {"and": parts}
