"""Options of `github:owner/repo`, validated by pydantic (`jr2 ready github: --help`).

Design note: every option maps to one documented GitHub concept: `label`, `milestone` and
`assignee` are parameters of `GET /repos/{owner}/{repo}/issues` (server-side filters, so a poll
stays at ceil(N/100) list pages); `exclude_label` and the priority map are applied client-side.
The three jr2 labels (`claim_label`, `failed_label`, `done_label`) are the only labels jr2 ever
adds or removes. Durations accept `30s`/`10m` strings (`jr2_sources.durations`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ..durations import Duration

_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_PRIORITY = re.compile(r"^(?P<label>.+)=(?P<n>-?\d+)$")


class GitHubConfig(BaseModel):
    """Options of `github:owner/repo`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="the repository, as owner/repo")
    label: list[str] = Field(default_factory=list,
                             description="only issues with this label (repeat: all of them)")
    exclude_label: list[str] = Field(default_factory=list,
                                     description="leave out issues with this label (repeatable)")
    milestone: str | None = Field(default=None,
                                  description="only this milestone: its title or number, "
                                              "`*` (any) or `none`")
    assignee: str | None = Field(default=None,
                                 description="only issues assigned to this login, or `none`")
    priority_label: list[str] = Field(
        default_factory=list,
        description="LABEL=N: issues with LABEL get priority N, lower first "
                    "(e.g. priority:high=1; repeatable)")
    ignore_sub_issues: bool = Field(default=False,
                                    description="a parent does not wait for its open sub-issues")
    claim_label: str = Field(default="jr2:claimed", min_length=1,
                             description="the label jr2 puts on an issue a pool holds")
    failed_label: str = Field(default="jr2:failed", min_length=1,
                              description="the label jr2 puts on an issue whose worker failed")
    on_success: Literal["close", "label", "nothing"] = Field(
        default="close",
        description="on success: close the issue, add --done-label, or leave it open")
    done_label: str | None = Field(default=None, validate_default=True,
                                   description="the label --on-success label adds; an issue "
                                               "carrying it counts as done")
    assign: bool = Field(default=False,
                         description="also assign the token's user to an issue it claims")
    detail: bool | None = Field(
        default=None,
        description="name every blocker and sub-issue (one request per blocked issue); "
                    "default: on for `jr2 ready`, off for `jr2 work`")
    write_spacing: Duration = Field(default=1.0,
                                    description="least time between two writes (GitHub asks "
                                                "for 1s between mutating requests)")
    poll_every: Duration = Field(default=60.0,
                                 description="how often a waiting pool polls (conditional "
                                             "requests: an unchanged poll costs no rate limit)")
    retry_budget: Duration = Field(default=300.0,
                                   description="most total time spent waiting on retries "
                                               "(5xx, 429, rate limits) before giving up")

    @field_validator("target")
    @classmethod
    def _repo(cls, value: str) -> str:
        value = value.strip().removesuffix(".git")
        if not _REPO.match(value):
            raise ValueError(f"expected owner/repo, not {value!r}")
        return value

    @field_validator("priority_label")
    @classmethod
    def _priorities(cls, values: list[str]) -> list[str]:
        for v in values:
            if not _PRIORITY.match(v):
                raise ValueError(f"expected LABEL=N (e.g. priority:high=1), not {v!r}")
        return values

    @field_validator("failed_label")
    @classmethod
    def _failed_differs(cls, value: str, info: ValidationInfo) -> str:
        if value == info.data.get("claim_label"):
            raise ValueError("must differ from --claim-label")
        return value

    @field_validator("done_label")
    @classmethod
    def _done_label(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            if info.data.get("on_success") == "label":
                raise ValueError("--on-success label needs --done-label")
            return None
        if value in (info.data.get("claim_label"), info.data.get("failed_label")):
            raise ValueError("must differ from --claim-label and --failed-label")
        return value

    @property
    def owner(self) -> str:
        return self.target.split("/", 1)[0]

    @property
    def repo(self) -> str:
        return self.target.split("/", 1)[1]

    def priorities(self) -> dict[str, int]:
        """The label-to-priority map (`priority:high=1` -> {"priority:high": 1})."""
        out: dict[str, int] = {}
        for v in self.priority_label:
            m = _PRIORITY.match(v)
            assert m is not None
            out[m["label"]] = int(m["n"])
        return out
