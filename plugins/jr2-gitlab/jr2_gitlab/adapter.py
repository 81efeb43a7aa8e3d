"""`GitLabAdapter`: the `TrackerAdapter` of `gitlab:group/project` (snapshot, claim, renew,
settle, webhook).

Claim protocol (GitLab has no compare-and-set on labels or assignees either)
---------------------------------------------------------------------------
Claims follow `jr2_sources.kit.claims` over issue notes (whose ids only grow and whose
`created_at`/`updated_at` come from the server), run by jr2's shared
`jr2_sources.kit.comment_claims`; this adapter is its `CommentThread`:

1. post a note `<!-- jr2:claim {"holder", "lease", "nonce"} -->` (`POST .../notes`);
2. list the notes (`GET .../notes?sort=asc&order_by=created_at`), take the server's `Date`;
3. the LIVE claim with the LOWEST note id holds the item (`now < updated_at + lease`); if it
   is not ours, delete our note and lose; if it is, re-read the issue (one GET): a pool that
   settled it just before our listing (its claim no longer live) closed or labelled it, so we
   lose too; otherwise add the `jr2:claimed` label (`PUT issue add_labels`) and win.

Renewing edits the note (`PUT .../notes/:id`, its `updated_at` moves); a renewal that lands
after the lease ran out has lost the item. Settling re-checks that our claim still holds, then
closes (`state_event=close`) / labels the issue and removes only the claim label
(`remove_labels`), and last edits the note into `jr2:done` / `jr2:failed` / `jr2:released`.
jr2 never removes a label or an assignee a person set.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime

from jr2_core import Outcome, UsageError
from jr2_sources import (
    Attempt,
    ClaimsByComment,
    CommentClaims,
    DeliveryDeduper,
    Snapshot,
    SourceEnv,
    Verdict,
)
from jr2_sources.kit import claims
from jr2_sources.kit.retry import RetryPolicy

from .client import GitLabClient, GitLabHTTPError, api_url, resolve_token
from .config import GitLabConfig
from .reader import IssueReader, labels_of
from .refs import encode_project, parse_time, same_project, split_id
from .webhook import receive

_WRITE_NOTES = "write issue notes (claims need the api scope and Reporter or more)"
_WRITE_ISSUES = "update issues (labels, state: the api scope and Reporter or more)"


class GitLabAdapter(ClaimsByComment):
    """A `TrackerAdapter` over one GitLab project's issues."""

    tracker = "GitLab"

    def __init__(self, config: GitLabConfig, env: SourceEnv, *,
                 client: GitLabClient | None = None) -> None:
        self.config = config
        self.project = config.target
        self.name = f"gitlab:{config.target}"
        self.read_only = env.read_only
        if client is None:
            client = GitLabClient(api_url(), resolve_token(), label=self.name,
                                  write_spacing=config.write_spacing,
                                  policy=RetryPolicy(budget=config.retry_budget))
        self.client = client
        self.reader = IssueReader(config, client)
        self.claims = CommentClaims(self, who=lambda h: f"`{h}`")
        self._done_here: set[str] = set()
        self._deliveries = DeliveryDeduper()
        self._lock = threading.Lock()

    # -- paths ----------------------------------------------------------------------------------

    def _issue(self, iid: int) -> str:
        return f"/projects/{encode_project(self.project)}/issues/{iid}"

    def _note(self, iid: int, note_id: int) -> str:
        return f"{self._issue(iid)}/notes/{note_id}"

    def _iid(self, ident: str) -> int:
        try:
            project, iid = split_id(ident)
        except ValueError as exc:
            raise UsageError(f"{self.name}: {exc}") from None
        if not same_project(project, self.project):
            raise UsageError(f"{self.name}: {ident} is not an issue of {self.project}")
        return iid

    # -- reading --------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        with self._lock:
            done_here = set(self._done_here)
        return self.reader.snapshot(done_here)

    # -- claims ---------------------------------------------------------------------------------

    # -- the note thread (for jr2_sources.kit.comment_claims) --------------------------------------

    def post_comment(self, key: str, body: str) -> int | None:
        posted = self.client.write("POST", f"{self._issue(self._iid(key))}/notes",
                                   {"body": body}, need=_WRITE_NOTES)
        return int(posted.data["id"]) if isinstance(posted.data, dict) else None

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        return self.reader.read_notes(self._iid(key))

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        try:
            resp = self.client.write("PUT", self._note(self._iid(key), comment_id),
                                     {"body": body}, need=_WRITE_NOTES)
        except GitLabHTTPError as exc:
            if exc.status in (404, 410):
                return None
            raise
        return parse_time(resp.data["updated_at"])

    def delete_comment(self, key: str, comment_id: int) -> None:
        try:
            self.client.write("DELETE", self._note(self._iid(key), comment_id),
                              need=_WRITE_NOTES)
        except GitLabHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def still_to_do(self, key: str, found: list[claims.Marker]) -> bool:
        """After winning: is the issue still to be done? A pool that settled it just before our
        notes were listed (its claim no longer live) closed or labelled it first."""
        issue = self.client.get(self._issue(self._iid(key))).data
        if not isinstance(issue, dict) or issue.get("state") != "opened":
            return False
        settled = self.config.settled_by(labels_of(issue), found)
        if settled == "done":
            with self._lock:  # done before and left open on purpose: not work, from now on
                self._done_here.add(key)
        return settled is None

    def mark_claimed(self, key: str) -> None:
        self.client.write("PUT", self._issue(self._iid(key)),
                          {"add_labels": self.config.claim_label}, need=_WRITE_ISSUES)

    def unmark(self, key: str) -> None:
        # remove_labels drops only the named label; absent labels are ignored by GitLab
        self.client.write("PUT", self._issue(self._iid(key)),
                          {"remove_labels": self.config.claim_label}, need=_WRITE_ISSUES)

    # -- claims ---------------------------------------------------------------------------------

    def record(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        self._writable()
        iid = self._iid(item_id)
        cfg = self.config

        def finish() -> None:
            if cfg.on_success == "close":
                self.client.write("PUT", self._issue(iid), {"state_event": "close"},
                                  need=_WRITE_ISSUES)
            elif cfg.on_success == "label" and cfg.done_label:
                self.client.write("PUT", self._issue(iid), {"add_labels": cfg.done_label},
                                  need=_WRITE_ISSUES)

        def mark_failed() -> None:
            self.client.write("PUT", self._issue(iid), {"add_labels": cfg.failed_label},
                              need=_WRITE_ISSUES)

        if self.claims.record(item_id, holder, outcome, on_done=finish, on_failed=mark_failed,
                              retry_hint=f"Remove the `{cfg.failed_label}` label to offer it "
                                         "again.", attempt=attempt):
            with self._lock:
                self._done_here.add(item_id)

    # -- wake ------------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Check a GitLab delivery and say whether it can change this project's Ready-set."""
        return receive(headers, body, secret, project=self.project, deduper=self._deliveries)

    def close(self) -> None:
        self.client.close()

