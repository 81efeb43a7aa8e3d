"""`GitHubAdapter`: the `TrackerAdapter` of `github:owner/repo` (snapshot, claim, renew, settle).

Design notes
------------
* Reading is `reader.IssueReader` (GET requests only). This module writes, only while claiming,
  renewing and settling, and every write method first refuses when `env.read_only` (a dry run).
* Claims follow `jr2_sources.claims`: post a claim comment, list the comments, the lowest live
  claim wins; a loser deletes its comment. Winning also re-reads the issue (one GET): a pool that
  settled it just before our comments were listed (its claim no longer live) has closed or
  labelled it first; then we lose too.
* Settling first re-checks that our claim still holds; only then it changes the issue (close,
  label) and removes the claim label — while our claim is live no other pool can win, so the
  label we remove is ours — and last it edits the claim comment into its outcome. jr2 removes
  only its own claim label, never a label or assignee a person set.
* `webhook()` verifies a delivery and says whether it wakes the pool (`webhook.py`).
* `on_success=nothing` leaves the issue open; this process remembers it as done so it is not
  offered again in the same run; other pools see it ready but lose the claim to the `jr2:done`
  marker in its comments, until someone closes it.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jr2_core import Outcome
from jr2_core.errors import SourceError, UsageError
from jr2_core.readyset import Snapshot, SnapshotItem
from jr2_core.registry import SourceEnv

from .. import claims
from ..retry import RetryPolicy
from ..webhooks import DeliveryDeduper, Verdict
from .auth import api_url, resolve_token
from .client import GitHubClient, GitHubHTTPError
from .config import GitHubConfig
from .reader import IssueReader, labels_of
from .refs import parse_time, same_repo, split_id
from .webhook import receive

_WRITE_COMMENTS = "write issue comments (claims need Issues: read & write)"
_WRITE_ISSUES = "write issues (Issues: read & write)"


@dataclass
class _Held:
    """A claim this process holds: its comment, last server `updated_at`, lease and nonce."""

    number: int
    holder: str
    comment_id: int
    updated_at: datetime
    lease: float
    nonce: str
    attempt: int = 1
    extra_ids: set[int] = field(default_factory=set)


class GitHubAdapter:
    """A `TrackerAdapter` over one GitHub repository's issues."""

    def __init__(self, config: GitHubConfig, env: SourceEnv, *,
                 client: GitHubClient | None = None) -> None:
        self.config = config
        self.repo = config.target
        self.name = f"github:{config.target}"
        self.read_only = env.read_only
        self.detail = config.detail if config.detail is not None else env.read_only
        if client is None:
            base = api_url()
            client = GitHubClient(base, resolve_token(base), label=self.name,
                                  write_spacing=config.write_spacing,
                                  policy=RetryPolicy(budget=config.retry_budget))
        self.client = client
        self.reader = IssueReader(config, client)
        self._held: dict[str, _Held] = {}
        self._done_here: set[str] = set()
        self._login: str | None = None
        self._deliveries = DeliveryDeduper()
        self._lock = threading.Lock()

    # -- paths ----------------------------------------------------------------------------------

    def _issues(self) -> str:
        return f"/repos/{self.repo}/issues"

    def _comments(self, number: int) -> str:
        return f"/repos/{self.repo}/issues/{number}/comments"

    def _comment(self, comment_id: int) -> str:
        return f"/repos/{self.repo}/issues/comments/{comment_id}"

    def _number(self, iid: str) -> int:
        repo, number = split_id(iid)
        if not same_repo(repo, self.repo):
            raise UsageError(f"{self.name}: {iid} is not an issue of {self.repo}")
        return number

    # -- reading --------------------------------------------------------------------------------

    def snapshot(self, detail: bool | None = None) -> Snapshot:
        """The open issues in scope with blockers, sub-issues, claims and failure marks
        (`detail`: name every blocker; default: on for a read-only report)."""
        with self._lock:
            done_here = set(self._done_here)
        return self.reader.snapshot(self.detail if detail is None else detail, done_here)

    def _read_comments(self, number: int) -> tuple[list[claims.Comment], datetime]:
        return self.reader.read_comments(number)

    # -- claims ---------------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise UsageError(f"{self.name}: read-only here (a report never writes to GitHub)")

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        self._writable()
        number = self._number(item.id)
        nonce = secrets.token_hex(8)
        fields = {"holder": holder, "lease": lease, "attempt": 1, "nonce": nonce}
        text = f"jr2: claimed by `{holder}` (lease {lease:.0f}s)."
        posted = self.client.write("POST", self._comments(number),
                                   {"body": claims.render_marker("claim", fields, text)},
                                   need=_WRITE_COMMENTS)
        mine = {int(posted.data["id"])} if isinstance(posted.data, dict) else set()
        comments, now = self._read_comments(number)
        mine |= {mk.comment_id for mk in claims.markers(comments) if mk.nonce == nonce}
        winner = claims.holder_of(comments, now)
        if winner is None or winner.nonce != nonce or not self._still_open(number, comments):
            for cid in sorted(mine):
                self._delete_comment(cid)
            return False
        held = _Held(number, holder, winner.comment_id, winner.updated_at, lease, nonce,
                     extra_ids=mine - {winner.comment_id})
        with self._lock:
            self._held[item.id] = held
        for cid in sorted(held.extra_ids):
            self._delete_comment(cid)
        try:
            self.client.write("POST", f"{self._issues()}/{number}/labels",
                              {"labels": [self.config.claim_label]}, need=_WRITE_ISSUES)
            if self.config.assign:
                self.client.write("POST", f"{self._issues()}/{number}/assignees",
                                  {"assignees": [self._user()]}, need=_WRITE_ISSUES)
        except SourceError:
            self._edit(held, "released", {"holder": holder, "nonce": nonce},
                       "jr2: released (the claim could not be labelled).")
            with self._lock:
                self._held.pop(item.id, None)
            raise
        return True

    def _still_open(self, number: int, comments: list[claims.Comment]) -> bool:
        """After winning: is the issue still to be done? A pool that settled it just before our
        comments were listed (its claim no longer live) closed or labelled it first."""
        issue = self.client.get(f"{self._issues()}/{number}").data
        if not isinstance(issue, dict) or issue.get("state") != "open":
            return False
        cfg = self.config
        if {cfg.failed_label, cfg.done_label} & set(labels_of(issue)):
            return False
        return cfg.on_success != "nothing" or not any(
            mk.kind == "done" for mk in claims.markers(comments))

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        self._writable()
        with self._lock:
            held = self._held.get(item_id)
        if held is None or held.holder != holder:
            return False
        held.attempt += 1
        fields = {"holder": holder, "lease": lease, "attempt": held.attempt,
                  "nonce": held.nonce, "renewed_at": claims_now()}
        text = f"jr2: claimed by `{holder}` (lease {lease:.0f}s, renewed)."
        try:
            resp = self.client.write("PATCH", self._comment(held.comment_id),
                                     {"body": claims.render_marker("claim", fields, text)},
                                     need=_WRITE_COMMENTS)
        except GitHubHTTPError as exc:
            if exc.status in (404, 410):
                self._forget(item_id)
                return False
            raise
        updated = parse_time(resp.data["updated_at"])
        if (updated - held.updated_at).total_seconds() >= held.lease:
            # The lease had run out before this renewal: another pool may hold the issue now.
            self._edit(held, "released", {"holder": holder, "nonce": held.nonce},
                       f"jr2: `{holder}` lost this claim (its lease ran out).")
            self._forget(item_id)
            return False
        held.updated_at = updated
        held.lease = lease
        return True

    def release(self, item_id: str, holder: str) -> None:
        self._writable()
        held = self._forget(item_id)
        if held is None or held.holder != holder:
            return
        self._settle(held, "released", {}, f"jr2: released by `{holder}`.", None)

    def record(self, item_id: str, holder: str, outcome: Outcome) -> None:
        self._writable()
        if outcome.status == "cancelled":
            self.release(item_id, holder)
            return
        held = self._forget(item_id)
        if held is None or held.holder != holder:
            return
        number = held.number
        if outcome.status == "done":
            on = self.config.on_success

            def finish() -> None:
                if on == "close":
                    self.client.write("PATCH", f"{self._issues()}/{number}",
                                      {"state": "closed", "state_reason": "completed"},
                                      need=_WRITE_ISSUES)
                elif on == "label" and self.config.done_label:
                    self.client.write("POST", f"{self._issues()}/{number}/labels",
                                      {"labels": [self.config.done_label]}, need=_WRITE_ISSUES)

            self._settle(held, "done", {}, f"jr2: done by `{holder}`.", finish)
            with self._lock:
                self._done_here.add(item_id)
            return
        reason = outcome.failure.reason if outcome.failure is not None else "failed"
        reason = " ".join(str(reason).split())[:500] or "failed"

        def mark_failed() -> None:
            self.client.write("POST", f"{self._issues()}/{number}/labels",
                              {"labels": [self.config.failed_label]}, need=_WRITE_ISSUES)

        self._settle(held, "failed", {"reason": reason},
                     f"jr2: failed under `{holder}`: {reason}\n\nRemove the "
                     f"`{self.config.failed_label}` label to offer it again.", mark_failed)

    # -- settle helpers -------------------------------------------------------------------------

    def _settle(self, held: _Held, kind: claims.Kind, fields: dict[str, Any], text: str,
                action: Any) -> None:
        """Apply `action` and drop the claim label only while our claim still holds; then turn
        the claim comment into its outcome."""
        comments, now = self._read_comments(held.number)
        winner = claims.holder_of(comments, now)
        if winner is not None and winner.nonce == held.nonce:
            if action is not None:
                action()
            self._unlabel(held.number, self.config.claim_label)
        else:
            kind, fields = "released", {}
            text = f"jr2: `{held.holder}` lost this claim before settling it."
        self._edit(held, kind, {"holder": held.holder, "nonce": held.nonce, **fields}, text)

    def _edit(self, held: _Held, kind: claims.Kind, fields: dict[str, Any], text: str) -> None:
        try:
            self.client.write("PATCH", self._comment(held.comment_id),
                              {"body": claims.render_marker(kind, fields, text)},
                              need=_WRITE_COMMENTS)
        except GitHubHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def _unlabel(self, number: int, label: str) -> None:
        from urllib.parse import quote

        try:
            self.client.write("DELETE", f"{self._issues()}/{number}/labels/{quote(label, '')}",
                              need=_WRITE_ISSUES)
        except GitHubHTTPError as exc:
            if exc.status != 404:  # 404: the label is not on the issue (someone removed it)
                raise

    def _delete_comment(self, comment_id: int) -> None:
        try:
            self.client.write("DELETE", self._comment(comment_id), need=_WRITE_COMMENTS)
        except GitHubHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def _forget(self, item_id: str) -> _Held | None:
        with self._lock:
            return self._held.pop(item_id, None)

    def _user(self) -> str:
        if self._login is None:
            resp = self.client.get("/user", need="read its own user")
            self._login = str(resp.data["login"])
        return self._login

    # -- wake ------------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Verify a GitHub delivery and say whether it can change this repo's Ready-set."""
        return receive(headers, body, secret, repo=self.repo, deduper=self._deliveries)

    def close(self) -> None:
        self.client.close()


def claims_now() -> str:
    """The local time, for people reading a renewed marker (never used to judge a lease)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
