"""`GitHubAdapter`: the `Tracker` of `github:owner/repo`, a `LabelCommentTracker` whose HTTP
calls are GitHub's REST API.

Design notes
------------
* Reading is `reader.IssueReader` (GET requests only). Claims, settles and the rules around them
  are `jr2_sources.kit.labeltracker`: this module writes only the GitHub calls (issue comments, the
  issue's labels, closing it as completed) and, with `--assign`, the claim's assignee.
* `webhook()` verifies a delivery and says whether it wakes the pool (`webhook.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from jr2_core.errors import UsageError
from jr2_sources.kit import claims
from jr2_sources.kit.labeltracker import LabelCommentTracker
from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.kit.webhooks import Verdict
from jr2_sources.readyset import Snapshot
from jr2_sources.registry import SourceEnv

from .auth import api_url, resolve_token
from .client import GitHubClient, GitHubHTTPError
from .config import GitHubConfig
from .reader import IssueReader, labels_of
from .refs import same_repo, split_id
from .webhook import receive


class GitHubAdapter(LabelCommentTracker):
    """A `Tracker` over one GitHub repository's issues."""

    kind = "github"
    tracker = "GitHub"
    need_comments = "write issue comments (claims need Issues: read & write)"
    need_issues = "write issues (Issues: read & write)"

    def __init__(self, config: GitHubConfig, env: SourceEnv, *,
                 client: GitHubClient | None = None) -> None:
        if client is None:
            base = api_url()
            client = GitHubClient(base, resolve_token(base), label=f"github:{config.target}",
                                  write_spacing=config.write_spacing,
                                  policy=RetryPolicy(budget=config.retry_budget))
        super().__init__(config, env, client)
        self.repo = config.target
        self.detail = config.detail if config.detail is not None else env.read_only
        self.reader = IssueReader(config, client)
        self._login: str | None = None

    def issue_path(self, key: str) -> str:
        repo, number = split_id(key)
        if not same_repo(repo, self.repo):
            raise UsageError(f"{self.name}: {key} is not an issue of {self.repo}")
        return f"/repos/{self.repo}/issues/{number}"

    def comment_path(self, key: str, comment_id: int) -> str:
        return f"/repos/{self.repo}/issues/comments/{comment_id}"

    def read_snapshot(self, skip: set[str]) -> Snapshot:
        return self.reader.snapshot(self.detail, skip)

    def snapshot(self, detail: bool | None = None) -> Snapshot:
        """The open issues in scope with blockers, sub-issues, claims and failure marks
        (`detail`: name every blocker; default: on for a read-only report)."""
        if detail is None:
            return super().snapshot()
        with self._lock:
            done_here = set(self._done_here)
        return self.reader.snapshot(detail, done_here)

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        return self.reader.read_comments(split_id(key)[1])

    def labels_of(self, issue: dict[str, Any]) -> list[str]:
        return labels_of(issue)

    def add_label(self, key: str, label: str) -> None:
        self.client.write("POST", f"{self.issue_path(key)}/labels", {"labels": [label]},
                          need=self.need_issues)

    def remove_label(self, key: str, label: str) -> None:
        try:
            self.client.write("DELETE", f"{self.issue_path(key)}/labels/{quote(label, '')}",
                              need=self.need_issues)
        except GitHubHTTPError as exc:
            if exc.status != 404:  # 404: the label is not on the issue (someone removed it)
                raise

    def close_issue(self, key: str) -> None:
        self.client.write("PATCH", self.issue_path(key),
                          {"state": "closed", "state_reason": "completed"}, need=self.need_issues)

    def mark_claimed(self, key: str) -> None:
        super().mark_claimed(key)
        if self.config.assign:
            self.client.write("POST", f"{self.issue_path(key)}/assignees",
                              {"assignees": [self._user()]}, need=self.need_issues)

    def _user(self) -> str:
        if self._login is None:
            resp = self.client.get("/user", need="read its own user")
            self._login = str(resp.data["login"])
        return self._login

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Verify a GitHub delivery and say whether it can change this repo's Ready-set."""
        return receive(headers, body, secret, repo=self.repo, deduper=self._deliveries)
