"""Options of `gitlab:group/project`, validated by pydantic (`jr2 ready gitlab: --help`).

Design note: `label` maps to the `labels` parameter of `GET /projects/:id/issues` (server-side:
issues must carry all of them); `exclude_label` and the priority map are applied client-side.
The three jr2 labels (`claim_label`, `failed_label`, `done_label`) are the only labels jr2 ever
adds or removes. Durations accept `30s`/`10m` strings (`jr2_sources.Duration`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from jr2_sources import Duration

# GitLab paths: letters, digits, `_`, `-`, `.`; nested groups allowed (group/sub/project).
_PROJECT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+$")
_PRIORITY = re.compile(r"^(?P<label>.+)=(?P<n>-?\d+)$")


class GitLabConfig(BaseModel):
    """Options of `gitlab:group/project`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="the project, as group/project (nested groups allowed)")
    label: list[str] = Field(default_factory=list,
                             description="only issues with this label (repeat: all of them)")
    exclude_label: list[str] = Field(default_factory=list,
                                     description="leave out issues with this label (repeatable)")
    priority_label: list[str] = Field(
        default_factory=list,
        description="LABEL=N: issues with LABEL get priority N, lower first (repeatable)")
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
    detail: bool = Field(
        default=True,
        description="read the links of every listed issue (one request each; names blockers "
                    "in other projects); --no-detail reads only the issues whose "
                    "blocking_issues_count says they block something")
    write_spacing: Duration = Field(default=0.2,
                                    description="least time between two writes")
    poll_every: Duration = Field(default=60.0,
                                 description="how often a waiting pool polls GitLab")
    retry_budget: Duration = Field(default=300.0,
                                   description="most total time spent waiting on retries "
                                               "(5xx, 429) before giving up")

    @field_validator("target")
    @classmethod
    def _project(cls, value: str) -> str:
        value = value.strip().strip("/").removesuffix(".git")
        if not _PROJECT.match(value):
            raise ValueError(f"expected group/project, not {value!r}")
        return value

    @field_validator("priority_label")
    @classmethod
    def _priorities(cls, values: list[str]) -> list[str]:
        for v in values:
            if not _PRIORITY.match(v):
                raise ValueError(f"expected LABEL=N (e.g. priority::high=1), not {v!r}")
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

    def priorities(self) -> dict[str, int]:
        """The label-to-priority map (`priority::high=1` -> {"priority::high": 1})."""
        out: dict[str, int] = {}
        for v in self.priority_label:
            m = _PRIORITY.match(v)
            assert m is not None
            out[m["label"]] = int(m["n"])
        return out
