"""Options of `github:owner/repo`, validated by pydantic (`jr2 ready github: --help`).

Design note: every option maps to one documented GitHub concept: `label`, `milestone` and
`assignee` are parameters of `GET /repos/{owner}/{repo}/issues` (server-side filters, so a poll
stays at ceil(N/100) list pages); `exclude_label` and the priority map are applied client-side.
The label options are `jr2_sources.kit.labeloptions.LabelOptions`, shared with GitLab.
Durations accept `30s`/`10m` strings (`jr2_sources.kit.durations`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from jr2_sources.kit.claims import Marker
from jr2_sources.kit.durations import Duration
from jr2_sources.kit.labeloptions import LabelOptions

_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


class GitHubConfig(LabelOptions):
    """Options of `github:owner/repo`."""

    model_config = ConfigDict(extra="forbid")
    labels_ignore_case: ClassVar[bool] = True  # GitHub label names are case-insensitive

    target: str = Field(description="the repository, as owner/repo")
    # GitHub adds `review` to the shared choices (LabelOptions, also GitLab's); the kit's code
    # only compares against its own three, so a wider Literal here is safe
    on_success: Literal["close", "label", "nothing", "review"] = Field(  # type: ignore[assignment]
        default="close",
        description="on success: close the issue, add --done-label, leave it open, or (with "
                    "--done-when merged) `review`: while its pull request is open it carries "
                    "--review-label and is not offered; merged: jr2 closes it; closed "
                    "unmerged: offered again")
    review_label: str = Field(default="jr2:in-review", min_length=1,
                              description="the label --on-success review puts on an issue "
                                          "whose pull request is open (set and removed by jr2)")
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
    resync_every: Duration = Field(default=300.0, gt=0,
                                   description="`jr2 work` reads only the issues updated since "
                                               "its last reading (`since`), and everything "
                                               "again this often")
    claim_spread: Duration = Field(
        default=1.0,
        description="after losing a claim race, wait up to this long (at random) before the "
                    "next claim, so racing pools stop posting at the same instant")
    retry_budget: Duration = Field(default=300.0,
                                   description="most total time spent waiting on retries "
                                               "(5xx, 429, rate limits) before giving up")

    done_when: Literal["closed", "merged"] = Field(
        default="closed",
        description="when a blocker counts as done: `closed` (the issue is closed), or `merged` "
                    "(also when a pull request of it merged into --base; one GraphQL query per "
                    "100 issues that block something)")
    base: str | None = Field(default=None,
                             description="with --done-when merged: the branch a pull request "
                                         "must merge into (default: the repository's default "
                                         "branch)")
    require_checks: bool = Field(default=False,
                                 description="with --done-when merged: the merge commit's checks "
                                             "(check runs and commit statuses) must be green")

    stack: bool = Field(default=False,
                        description="with --done-when merged: an issue with exactly one blocker "
                                    "may start once that blocker's pull request is open with "
                                    "green checks, from its head branch (JR2_BASE_BRANCH)")

    @model_validator(mode="after")
    def _merged_options(self) -> GitHubConfig:
        if self.done_when != "merged" and (self.base or self.require_checks or self.stack
                                           or self.on_success == "review"):
            raise ValueError("--base, --require-checks, --stack and --on-success review need "
                             "--done-when merged")
        if self.review_label in (self.claim_label, self.failed_label, self.done_label):
            raise ValueError("--review-label must differ from the other labels")
        return self

    @field_validator("base")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        """A branch name as a pull request's base names it: `refs/heads/main` is `main`."""
        if value is None:
            return None
        name = value.strip().removeprefix("refs/heads/")
        if not name or name.startswith("refs/"):
            raise ValueError(f"expected a branch name (main, or refs/heads/main), not {value!r}")
        return name

    @field_validator("target")
    @classmethod
    def _repo(cls, value: str) -> str:
        value = value.strip().removesuffix(".git")
        if not _REPO.match(value):
            raise ValueError(f"expected owner/repo, not {value!r}")
        return value

    def settled_by(self, labels: Iterable[str],
                   found: Iterable[Marker]) -> Literal["labelled", "done"] | None:
        """As `LabelOptions.settled_by`; an issue jr2 holds in review is no work either."""
        labels = list(labels)
        if self.on_success == "review" and self.has_label(labels, self.review_label):
            return "labelled"
        return super().settled_by(labels, found)

    @property
    def owner(self) -> str:
        return self.target.split("/", 1)[0]

    @property
    def repo(self) -> str:
        return self.target.split("/", 1)[1]
