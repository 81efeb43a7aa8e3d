"""Options of `github:owner/repo`, validated by pydantic (`jr2 ready github: --help`).

Design note: every option maps to one documented GitHub concept: `label`, `milestone` and
`assignee` are parameters of `GET /repos/{owner}/{repo}/issues` (server-side filters, so a poll
stays at ceil(N/100) list pages); `exclude_label` and the priority map are applied client-side.
The label options are `jr2_sources.kit.labeloptions.LabelOptions`, shared with GitLab.
Durations accept `30s`/`10m` strings (`jr2_sources.kit.durations`).
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import ConfigDict, Field, field_validator

from jr2_sources.kit.durations import Duration
from jr2_sources.kit.labeloptions import LabelOptions

_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


class GitHubConfig(LabelOptions):
    """Options of `github:owner/repo`."""

    model_config = ConfigDict(extra="forbid")
    labels_ignore_case: ClassVar[bool] = True  # GitHub label names are case-insensitive

    target: str = Field(description="the repository, as owner/repo")
    milestone: str | None = Field(default=None,
                                  description="only this milestone: its title or number, "
                                              "`*` (any) or `none`")
    assignee: str | None = Field(default=None,
                                 description="only issues assigned to this login, or `none`")
    ignore_sub_issues: bool = Field(default=False,
                                    description="a parent does not wait for its open sub-issues")
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
    claim_spread: Duration = Field(
        default=1.0,
        description="after losing a claim race, wait up to this long (at random) before the "
                    "next claim, so racing pools stop posting at the same instant")
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

    @property
    def owner(self) -> str:
        return self.target.split("/", 1)[0]

    @property
    def repo(self) -> str:
        return self.target.split("/", 1)[1]
