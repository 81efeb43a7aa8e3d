"""Options of `redmine:URL --project P`, validated by pydantic (`jr2 ready redmine: --help`).

Design notes
------------
* Scope is Redmine's own: the project (its subprojects with `--subprojects`) and the filters a
  Redmine user picks in an issue query: tracker, status, assignee, target version, category.
  Each takes a name or an id, is repeatable (any of them) and is judged against every listed
  issue here, so one list of the project's open issues serves scope, jr2's marks, subtasks and
  blockers alike.
* Redmine has no labels. jr2's marks (`jr2:claimed`, `jr2:failed`, ...) are words in one issue
  custom field, `jr2` by default (a text field, for all projects, "used as a filter"), which an
  administrator creates once. A category was the other candidate and is wrong for it: an issue
  has one category, people use it for their own grouping, and jr2 would have to overwrite it.
  `--label` / `--exclude-label` select by words in that field too (a team may tag issues
  `agent` there), judged ignoring jr2's own.
* Priority is Redmine's own (its priority list, most urgent first); `--priority-label` words
  in the field override it.
"""

from __future__ import annotations

from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, field_validator

from jr2_sources import Tracker
from jr2_sources.kit.durations import Duration
from jr2_sources.kit.labeloptions import LabelOptions


class RedmineConfig(LabelOptions, Tracker.Options):
    """Options of `redmine:URL`."""

    model_config = ConfigDict(extra="forbid")
    priority_example: ClassVar[str] = "urgent=1"

    target: str = Field(description="the Redmine's root URL (https://redmine.example.com)")
    project: str = Field(min_length=1,
                         description="the project's identifier (or id) whose issues to take")
    subprojects: bool = Field(default=False,
                              description="also take the issues of its subprojects")
    tracker: list[str] = Field(default_factory=list,
                               description="only issues of this tracker (name or id; repeat: "
                                           "any of them)")
    status: list[str] = Field(default_factory=list,
                              description="only issues in this open status (name or id; "
                                          "repeatable)")
    assignee: list[str] = Field(default_factory=list,
                                description="only issues assigned to this user (name or id, `me`, "
                                            "or `none` for unassigned; repeatable)")
    version: list[str] = Field(default_factory=list,
                               description="only issues of this target version (name or id; "
                                           "repeatable)")
    category: list[str] = Field(default_factory=list,
                                description="only issues of this category (name or id; "
                                            "repeatable)")
    field: str = Field(default="jr2", min_length=1,
                       description="the issue custom field (name or id) that holds jr2's marks")
    precedes_blocks: bool = Field(
        default=False,
        description="an open issue that `precedes` this one blocks it too (Redmine itself only "
                    "moves dates for `precedes`)")
    closed_status: str | None = Field(
        default=None,
        description="the status a success sets (name or id; default: the first closed status)")
    label: list[str] = Field(default_factory=list,
                             description="only issues whose marks field holds this word (repeat: "
                                         "all of them)")
    exclude_label: list[str] = Field(default_factory=list,
                                     description="leave out issues whose marks field holds this "
                                                 "word (repeatable)")
    priority_label: list[str] = Field(
        default_factory=list,
        description="WORD=N: issues with WORD in the marks field get priority N, lower first, "
                    "instead of Redmine's priority (repeatable)")
    claim_label: str = Field(default="jr2:claimed", min_length=1,
                             description="the word jr2 puts in the marks field of an issue a "
                                         "pool holds")
    failed_label: str = Field(default="jr2:failed", min_length=1,
                              description="the word jr2 puts in the marks field of an issue "
                                          "whose worker failed")
    on_success: Literal["close", "label", "nothing"] = Field(
        default="close",
        description="on success: set the closed status, add --done-label, or leave it open")
    done_label: str | None = Field(default=None, validate_default=True,
                                   description="the word --on-success label adds; an issue "
                                               "carrying it counts as done")
    write_spacing: Duration = Field(default=0.1, description="least time between two writes")
    poll_every: Duration = Field(default=60.0,
                                 description="how often a waiting pool polls Redmine")
    retry_budget: Duration = Field(default=300.0,
                                   description="most total time spent waiting on retries "
                                               "(5xx, 429) before giving up")

    @field_validator("target")
    @classmethod
    def _url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"expected the Redmine's http(s) URL, not {value!r}")
        return value

    @field_validator("project")
    @classmethod
    def _project(cls, value: str) -> str:
        value = value.strip()
        if not value or "/" in value or " " in value:
            raise ValueError(f"expected a project identifier such as `my-project`, not "
                             f"{value!r}")
        return value
