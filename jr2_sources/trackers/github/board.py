"""The dashboard issue on GitHub (`jr2 dashboard github:o/r --issue N`, `jr2 work --dashboard N`).

* Read with a conditional "Get an issue", written with "Update an issue" (`{"body": ...}` only).
* Who may tick: `check()` refuses a pull request, and an issue whose author lacks `admin` or
  `write` ("Get repository permissions for a user"); a `Bot` author (an App) is accepted.
* A retry tick removes the item's failed label (one already gone is fine).
* `about(headers, body)`: jr2's own edit (the body it wrote last) or a person's (`issues` events
  carrying this issue).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote

from jr2_core.errors import UsageError
from jr2_sources.capabilities.webhooks import header

from .client import GitHubHTTPError
from .refs import item_id, same_repo
from .webhook import _json_of

if TYPE_CHECKING:
    from .tracker import GitHubTracker

__all__ = ["GitHubBoard", "parse_issue_number"]

_WRITERS = frozenset({"admin", "write"})


def parse_issue_number(issue: str | int) -> int:
    """`7`, `#7` -> 7; a usage error for anything else."""
    text = str(issue).strip().lstrip("#")
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"--issue {issue!r}: expected an issue number, e.g. 7")
    return int(text)


class GitHubBoard:
    """One GitHub issue used as the dashboard of a tracker's repository."""

    def __init__(self, tracker: GitHubTracker, issue: str | int) -> None:
        self.tracker = tracker
        self.number = parse_issue_number(issue)
        self.item_id = item_id(tracker.repo, self.number)
        self.name = f"github:{self.item_id}"
        self.path = f"/repos/{tracker.repo}/issues/{self.number}"
        self._written: str | None = None

    def _issue(self) -> dict[str, object]:
        try:
            data = self.tracker.client.get(self.path, need="read the dashboard issue").data
        except GitHubHTTPError as exc:
            if exc.status in (404, 410):
                raise UsageError(f"{self.name}: no such issue (HTTP {exc.status}: deleted, "
                                 "transferred or not visible to the token)") from None
            raise
        if not isinstance(data, dict):
            raise UsageError(f"{self.name}: GitHub answered something other than an issue")
        return data

    def check(self) -> None:
        """Refuse (one `UsageError` line) an issue that cannot be a dashboard: a pull request,
        or one whose author lacks write access (see the notes)."""
        issue = self._issue()
        if issue.get("pull_request"):
            raise UsageError(f"{self.name} is a pull request; use an issue as the dashboard")
        user = issue.get("user")
        login = user.get("login") if isinstance(user, dict) else None
        if isinstance(user, dict) and user.get("type") == "Bot":
            return
        if not isinstance(login, str) or not login:
            raise UsageError(f"{self.name}: its author is unknown (a deleted account), so "
                             "who may tick its boxes cannot be checked; use another issue")

        path = f"/repos/{self.tracker.repo}/collaborators/{quote(login, '')}/permission"
        try:
            perm = self.tracker.client.get(path, need="read collaborator permissions").data
        except GitHubHTTPError as exc:
            if exc.status != 404:
                raise
            perm = {"permission": "none"}
        level = perm.get("permission") if isinstance(perm, dict) else None
        if level not in _WRITERS:
            raise UsageError(f"{self.name}: its author {login} has no write access to "
                             f"{self.tracker.repo} ({level or 'unknown'}), and an issue's "
                             "author can edit its body: use an issue opened by a maintainer")

    def read(self) -> str:
        body = self._issue().get("body")
        return body if isinstance(body, str) else ""

    def write(self, body: str) -> None:
        self.tracker.client.write("PATCH", self.path, {"body": body},
                                  need="edit the dashboard issue (Issues: read & write)")
        self._written = body

    def retry(self, item: str) -> None:
        self.tracker.remove_label(item, self.tracker.config.failed_label)

    def about(self, headers: Mapping[str, str], body: bytes) -> Literal["own", "person"] | None:
        """Whether a (verified) delivery is about the dashboard issue: `own` (its body is the
        one written last here), `person` (any other change of it), None (not about it)."""
        if header(headers, "X-GitHub-Event") != "issues":
            return None
        try:
            payload = json.loads(_json_of(headers, body) or b"{}")
        except ValueError:
            return None
        issue = payload.get("issue") if isinstance(payload, dict) else None
        repo = payload.get("repository") if isinstance(payload, dict) else None
        full = repo.get("full_name") if isinstance(repo, dict) else None
        if not isinstance(issue, dict) or issue.get("number") != self.number or not (
                isinstance(full, str) and same_repo(full, self.tracker.repo)):
            return None
        return "own" if self._written is not None and issue.get("body") == self._written \
            else "person"
