"""The dashboard issue on GitLab (`jr2 dashboard gitlab:group/project --issue N`, `jr2 work
--dashboard N`): the `Board` of `jr2_sources.capabilities.dashboard` (read, write, retry, about,
check) over one issue's description.

* Read with `GET /projects/:id/issues/:iid` (`description`, null when empty) and written with a
  `PUT` of the same path with `{"description": ...}` only. GitLab answers no conditional
  requests, so every look is a 200.
* Who may tick: `check()` reads the issue's author once and asks their member record (`GET
  /projects/:id/members/all/:user_id`); an author below Planner (access level 15), or no member
  (404), is refused in one line, so every tick comes from someone who could remove the failed
  label by hand.
* A retry tick removes the item's failed label (`remove_labels`); a label already gone is fine.
* Limits (`GITLAB`): 1,048,576 characters (the documented `description` limit); writes at least
  10 s apart, one a minute by default.
* `about(headers, body)`: an issue event of this project naming this iid; jr2's own edit is the
  one whose `description` this process wrote last.

Design notes: docs/design/dashboard.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from jr2_core import SourceHTTPError, UsageError
from jr2_sources.capabilities.dashboard.target import Target

from .refs import encode_project, item_id
from .webhook import wakes

if TYPE_CHECKING:
    from .tracker import GitLabTracker

__all__ = ["EDITOR_LEVEL", "GITLAB", "GitLabBoard", "parse_iid"]

GITLAB = Target(
    limit=1_048_576, min_interval=10.0, limit_words="GitLab's limit on an issue description",
    interval_words="each edit of the description is recorded in the issue's history on GitLab")
"""What a GitLab dashboard allows (see the notes; doc/api/issues.md, `description`)."""

EDITOR_LEVEL = 15
"""The least `access_level` that may edit any issue and its labels: Planner (15); Reporter
(20), Developer (30), Maintainer (40) and Owner (50) may too (GitLab's permissions page)."""

_ROLES = {0: "no access", 5: "Minimal access", 10: "Guest", 15: "Planner", 20: "Reporter",
          30: "Developer", 40: "Maintainer", 50: "Owner"}


def parse_iid(issue: str | int) -> int:
    """`7`, `#7` -> 7; a usage error for anything else."""
    text = str(issue).strip().lstrip("#")
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"--issue {issue!r}: expected an issue number (its iid), e.g. 7")
    return int(text)


class GitLabBoard:
    """One GitLab issue used as the dashboard of a tracker's project."""

    target = GITLAB

    def __init__(self, tracker: GitLabTracker, issue: str | int) -> None:
        self.tracker = tracker
        self.iid = parse_iid(issue)
        self.item_id = item_id(tracker.project, self.iid)
        self.name = f"gitlab:{self.item_id}"
        self.project_path = f"/projects/{encode_project(tracker.project)}"
        self.path = f"{self.project_path}/issues/{self.iid}"
        self._written: str | None = None

    def _get(self, path: str, need: str) -> Any:
        return self.tracker.client.get(path, need=need).data

    def _issue(self) -> dict[str, Any]:
        try:
            data = self._get(self.path, "read the dashboard issue")
        except SourceHTTPError as exc:
            if exc.status == 404:
                raise UsageError(f"{self.name}: no such issue (HTTP 404: deleted, moved or not "
                                 "visible to the token)") from None
            raise
        if not isinstance(data, dict):
            raise UsageError(f"{self.name}: GitLab answered something other than an issue")
        return data

    def check(self) -> None:
        """Refuse (one `UsageError` line) an issue whose author may not edit issues in the
        project (below Planner, see the notes)."""
        author = self._issue().get("author")
        user_id = author.get("id") if isinstance(author, dict) else None
        username = author.get("username") if isinstance(author, dict) else None
        if not isinstance(user_id, int):
            raise UsageError(f"{self.name}: its author is unknown, so who may tick its boxes "
                             "cannot be checked; use another issue")
        try:
            member = self._get(f"{self.project_path}/members/all/{user_id}",
                               "read project members")
        except SourceHTTPError as exc:
            if exc.status != 404:
                raise
            member = {"access_level": 0}
        level = member.get("access_level") if isinstance(member, dict) else None
        if not isinstance(level, int) or level < EDITOR_LEVEL:
            role = _ROLES.get(level, "unknown") if isinstance(level, int) else "unknown"
            raise UsageError(f"{self.name}: its author {username or user_id} may not edit "
                             f"{self.tracker.project}'s issues ({role}), and an issue's author "
                             "can edit its description: use an issue opened by a Planner, "
                             "Reporter or above")

    def read(self) -> str:
        text = self._issue().get("description")
        return text if isinstance(text, str) else ""

    def write(self, body: str) -> None:
        self.tracker.client.write("PUT", self.path, {"description": body},
                                  need="edit the dashboard issue (the api scope, Planner or "
                                       "Reporter and up)")
        self._written = body

    def retry(self, item: str) -> None:
        self.tracker.remove_label(item, self.tracker.config.failed_label)

    def about(self, headers: Mapping[str, str], body: bytes) -> Literal["own", "person"] | None:
        """Whether a (verified) delivery is about the dashboard issue: `own` (its description is
        the one written last here), `person` (any other change of it), None (not about it)."""
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return None
        if not isinstance(payload, dict) or not wakes(payload, self.tracker.project):
            return None
        attrs = payload.get("object_attributes")
        if not isinstance(attrs, dict) or attrs.get("iid") != self.iid:
            return None
        return "own" if self._written is not None and attrs.get("description") == \
            self._written else "person"

