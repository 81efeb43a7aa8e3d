"""Options of `gitlab:group/project`, validated by pydantic (`jr2 ready gitlab: --help`).

Design note: `label` maps to the `labels` parameter of `GET /projects/:id/issues` (server-side:
issues must carry all of them); `exclude_label` and the priority map are applied client-side.
The label options are `jr2_sources.kit.labeloptions.LabelOptions`, shared with GitHub.
Durations accept `30s`/`10m` strings (`jr2_sources.kit.durations.Duration`).
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import ConfigDict, Field, field_validator

from jr2_sources.kit.durations import Duration
from jr2_sources.kit.labeloptions import LabelOptions

# GitLab paths: letters, digits, `_`, `-`, `.`; nested groups allowed (group/sub/project).
_PROJECT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+$")


class GitLabConfig(LabelOptions):
    """Options of `gitlab:group/project`."""

    model_config = ConfigDict(extra="forbid")
    priority_example: ClassVar[str] = "priority::high=1"

    target: str = Field(description="the project, as group/project (nested groups allowed)")
    detail: bool = Field(
        default=True,
        description="read the links of every listed issue (one request each; names blockers "
                    "in other projects); --no-detail reads only the issues whose "
                    "blocking_issues_count says they block something")
    write_spacing: Duration = Field(default=0.2,
                                    description="least time between two writes")
    poll_every: Duration = Field(default=60.0,
                                 description="how often a waiting pool polls GitLab")
    resync_every: Duration = Field(default=300.0, gt=0,
                                   description="`jr2 work` reads only the issues updated since "
                                               "its last reading, and everything again this "
                                               "often")
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

