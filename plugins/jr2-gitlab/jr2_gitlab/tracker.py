"""`GitLabTracker`: the `Tracker` of `gitlab:group/project`, a `LabelCommentTracker` whose HTTP
calls are GitLab's REST API.

Claim protocol (GitLab has no compare-and-set on labels or assignees either)
---------------------------------------------------------------------------
Claims follow `jr2_sources.kit.claims` over issue notes (whose ids only grow and whose
`created_at`/`updated_at` come from the server), run by `jr2_sources.kit.labeltracker`:

1. post a note `<!-- jr2:claim {"holder", "lease", "nonce"} -->` (`POST .../notes`);
2. list the notes (`GET .../notes?sort=asc&order_by=created_at`), take the server's `Date`;
3. the LIVE claim with the LOWEST note id holds the item (`now < updated_at + lease`); if it
   is not ours, delete our note and lose; if it is, re-read the issue (one GET): a pool that
   settled it just before our listing (its claim has ended) closed or labelled it, so we
   lose too; otherwise add the `jr2:claimed` label (`PUT issue add_labels`) and win.

Renewing edits the note (`PUT .../notes/:id`, its `updated_at` moves); a renewal that lands
after the lease ran out has lost the item. Settling re-checks that our claim still holds, then
closes (`state_event=close`) / labels the issue and removes only the claim label
(`remove_labels`), and last edits the note into `jr2:done` / `jr2:failed` / `jr2:released`.
jr2 never removes a label or an assignee a person set.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from jr2_core import UsageError
from jr2_sources import (
    Delta,
    HasDashboard,
    KeepsApprovals,
    LocksByComment,
    Snapshot,
    SourceEnv,
    TakesWebhooks,
)
from jr2_sources.capabilities.webhooks import Verdict
from jr2_sources.kit import claims
from jr2_sources.kit.labeltracker import LabelCommentTracker
from jr2_sources.kit.retry import RetryPolicy

from .client import GitLabClient, api_url, resolve_token
from .config import GitLabConfig
from .delta import GitLabChanges
from .reader import IssueReader
from .refs import encode_project, item_id, same_project, split_id
from .webhook import receive


class GitLabTracker(LocksByComment, HasDashboard, LabelCommentTracker, KeepsApprovals,
                    TakesWebhooks):
    """A `Tracker` over one GitLab project's issues."""

    kind = "gitlab"
    tracker = "GitLab"
    open_state = "opened"
    edit_method = "PUT"
    comments_segment = "notes"
    need_comments = "write issue notes (claims need the api scope and Reporter or more)"
    need_issues = "update issues (labels, state: the api scope and Reporter or more)"

    def __init__(self, config: GitLabConfig, env: SourceEnv, *,
                 client: GitLabClient | None = None) -> None:
        if client is None:
            client = GitLabClient(api_url(), resolve_token(), label=f"gitlab:{config.target}",
                                  write_spacing=config.write_spacing,
                                  policy=RetryPolicy(budget=config.retry_budget))
        super().__init__(config, env, client)
        self.project = config.target
        self.reader = IssueReader(config, client, self.markers)
        if not env.read_only and config.detail:
            self.reader.changes = GitLabChanges(self.reader, own_claim=self.own_claim)  # deltas

    def _iid(self, ident: str) -> int:
        try:
            project, iid = split_id(ident)
        except ValueError as exc:
            raise UsageError(f"{self.name}: {exc}") from None
        if not same_project(project, self.project):
            raise UsageError(f"{self.name}: {ident} is not an issue of {self.project}")
        return iid

    def issue_path(self, key: str) -> str:
        return f"/projects/{encode_project(self.project)}/issues/{self._iid(key)}"

    def identity(self) -> list[str]:
        """The username of the token's user ("Get the current user", `GET /user`, once)."""
        data = self.client.get("/user", need="read its own user").data
        name = data.get("username") if isinstance(data, dict) else None
        return [str(name)] if name else []

    def canonical(self, key: str) -> str:
        return item_id(self.project, self._iid(key))

    def author_of(self, comment: Any) -> str | None:
        author = comment.get("author") if isinstance(comment, dict) else None
        name = author.get("username") if isinstance(author, dict) else None
        return str(name) if name else None

    def can_answer(self, who: str) -> bool | None:
        return self.reader.gates.can_answer(who)

    def read_snapshot(self, skip: set[str]) -> Snapshot:
        return self.reader.snapshot(skip)

    def read_changes(self, skip: set[str]) -> Delta | None:
        """The issues updated since the last reading (`delta.py`), or None for a full one."""
        changes = self.reader.changes
        return None if changes is None else changes.read(skip)

    def wrote(self, key: str) -> None:
        if self.reader.changes is not None:
            self.reader.changes.window.mark([self._iid(key)])

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        return self.reader.read_notes(self._iid(key))

    def add_label(self, key: str, label: str) -> None:
        self.client.write("PUT", self.issue_path(key), {"add_labels": label},
                          need=self.need_issues)

    def remove_label(self, key: str, label: str) -> None:
        # remove_labels drops only the named label; absent labels are ignored by GitLab
        self.client.write("PUT", self.issue_path(key), {"remove_labels": label},
                          need=self.need_issues)

    def close_issue(self, key: str) -> None:
        self.client.write("PUT", self.issue_path(key), {"state_event": "close"},
                          need=self.need_issues)

    def dashboard(self, issue: str | int) -> Any:
        """The issue `issue` of this project as the dashboard (`board.py`)."""
        from .board import GitLabBoard

        return GitLabBoard(self, issue)

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Check a GitLab delivery and say whether it can change this project's Ready-set."""
        verdict = receive(headers, body, secret, project=self.project,
                          deduper=self._deliveries)
        if verdict.wake and self.reader.changes is not None:  # read them directly next
            self.reader.changes.window.mark(int(n) for n in verdict.touched if n.isdigit())
        return verdict
