"""`GitHubAdapter`: the `TrackerAdapter` of `github:owner/repo` (snapshot, claim, renew, settle).

Design notes
------------
* Reading is `reader.IssueReader` (GET requests only). This module writes, only while claiming,
  renewing and settling, and every write method first refuses when `env.read_only` (a dry run).
* Claims follow `jr2_sources.kit.claims`, run by the shared `jr2_sources.kit.comment_claims`: this
  adapter is its `CommentThread` (issue comments, the claim label). Winning also re-reads the
  issue (one GET, `still_to_do`): a pool that settled it just before our comments were listed
  (its claim no longer live) has closed or labelled it first; then we lose too.
* Settling first re-checks that our claim still holds; only then it changes the issue (close,
  or add the done / failed label) and removes the claim label, in ONE `PATCH` of the issue
  (`state` and `labels`, the labels read just before): while our claim is live no other pool
  can win, so the label we remove is ours; and last it edits the claim comment into its
  outcome. A worked item costs 4 writes (claim comment, claim label, settle PATCH, comment
  edit) plus one per renewal. jr2 removes only its own claim label, never a label or assignee
  a person set (a label a person adds in the moment between that read and the PATCH is the
  one exception; the window is one request long).
* One issue that refuses a write (locked: GitHub refuses comments on it to App and Actions
  tokens with 403 "...issue is locked"; deleted: 410; gone or hidden: 404) raises
  `jr2_core.errors.ItemError` naming the issue, so the Work Source skips that one issue and the
  run goes on; the message does not blame the token, whose permissions are fine.
* `--assign` needs a user: GitHub App installation tokens (App auth, or Actions' `GITHUB_TOKEN`,
  both `ghs_...`) cannot call `GET /user`, so a writing adapter refuses `--assign` with them at
  start, in one line, before anything is claimed.
* `webhook()` verifies a delivery and says whether it wakes the pool (`webhook.py`).
* `on_success=review` (`--done-when merged`): after a success the issue's PR is looked up (one
  GET and one GraphQL query); open -> the review label, which keeps the issue from being offered
  while the PR is open; merged into the base or no PR -> closed as completed. A later snapshot
  (`jr2 work` only) settles ended reviews (`_settle_reviews`): merged -> closed, closed
  unmerged -> label removed and the issue offered again.
* `on_success=nothing` leaves the issue open; this process remembers it as done so it is not
  offered again in the same run; other pools see it ready but lose the claim to the `jr2:done`
  marker in its comments, until someone closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import SecretStr

from jr2_core import Outcome
from jr2_core.errors import ConfigError, ItemError, UsageError
from jr2_sources.kit import claims
from jr2_sources.kit.comment_claims import ClaimsByComment, CommentClaims
from jr2_sources.kit.rest import RestResponse
from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.kit.webhooks import DeliveryDeduper, Verdict
from jr2_sources.readyset import Snapshot
from jr2_sources.registry import SourceEnv
from jr2_sources.retries import Attempt

from .app import AppTokens, app_credentials
from .auth import api_url, resolve_token
from .client import GitHubClient, GitHubHTTPError
from .config import GitHubConfig
from .pulls import judge
from .reader import IssueReader, labels_of
from .refs import item_id, parse_time, same_repo, split_id
from .webhook import PR_EVENTS, WAKE_EVENTS, receive

_WRITE_COMMENTS = "write issue comments (claims need Issues: read & write)"
_WRITE_ISSUES = "write issues (Issues: read & write)"


def _client(config: GitHubConfig, name: str) -> GitHubClient:
    """The client the environment asks for: GitHub App auth when `GITHUB_APP_ID` is set (its
    installation tokens, refreshed), else the token from `GITHUB_TOKEN` / `GH_TOKEN` / `gh`."""
    base = api_url()
    creds = app_credentials()
    if creds is None:
        token, source = resolve_token(base), None
    else:
        tokens = AppTokens(creds, base, config.target)
        token, source = SecretStr("ghs_app_installation"), tokens.token
    return GitHubClient(base, token, label=name, write_spacing=config.write_spacing,
                        policy=RetryPolicy(budget=config.retry_budget), token_source=source)


class GitHubAdapter(ClaimsByComment):
    """A `TrackerAdapter` over one GitHub repository's issues."""

    tracker = "GitHub"
    spread_claims = True  # every claim attempt notifies people: spread pools over equal items

    def __init__(self, config: GitHubConfig, env: SourceEnv, *,
                 client: GitHubClient | None = None) -> None:
        self.config = config
        self.repo = config.target
        self.name = f"github:{config.target}"
        self.read_only = env.read_only
        self.detail = config.detail if config.detail is not None else env.read_only
        if client is None:
            client = _client(config, self.name)
        self.client = client
        if config.assign and not env.read_only and client.app_token():
            raise ConfigError(f"{self.name}: --assign needs a user's token: a GitHub App or "
                              "Actions token (ghs_...) has no user to assign (GET /user is "
                              "refused); drop --assign or use a personal token")
        self.reader = IssueReader(config, client)
        self.claims = CommentClaims(self, who=lambda h: f"`{h}`", look_first=True,
                                    spread=config.claim_spread)
        self._done_here: set[str] = set()
        self._unmarked: set[str] = set()
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
        snap = self.reader.snapshot(self.detail if detail is None else detail, done_here)
        if not self.read_only:
            self._settle_reviews()
        return snap

    def _settle_reviews(self) -> None:
        """Act on issues whose review ended (`reader.review_moves`): the PR merged into the
        base -> close the issue as completed if GitHub did not, and take the review label off,
        in one PATCH; closed unmerged -> take the label off, so the issue is offered again."""
        moves, self.reader.review_moves = self.reader.review_moves, {}
        for number, move in sorted(moves.items()):
            key = item_id(self.repo, number)
            change = {"state": "closed", "state_reason": "completed"} if move == "close" else {}
            self._relabel(key, change, drop=self.config.review_label)

    def _to_review(self, key: str) -> None:
        """After a success under `--on-success review`: the issue's PR open -> the review
        label; merged into the base already, or no PR at all -> closed as completed (each in
        the settle's one PATCH, which also takes the claim label off)."""
        cfg = self.config
        number = self._number(key)
        issue = self.client.get(f"{self._issues()}/{number}").data
        pulls = self.reader.pulls
        state = "open"
        if pulls is not None and isinstance(issue, dict) and issue.get("node_id"):
            links = pulls.read([(number, str(issue["node_id"]))])
            state = judge(links.prs.get(number, []), cfg.base or links.default_branch or "main",
                          cfg.require_checks)[0]
        if state in ("unmerged", "not_green"):
            self._settle_issue(key, {}, add=cfg.review_label)
        else:
            self._settle_issue(key, {"state": "closed", "state_reason": "completed"})

    # -- the comment thread (for jr2_sources.kit.comment_claims) -----------------------------------

    def _refused(self, key: str, exc: GitHubHTTPError) -> Exception:
        """An error status about one issue as an `ItemError` (the rest unchanged)."""
        what = str(exc).lower()
        if exc.status == 410:
            return ItemError(f"{self.name}: {key} was deleted (HTTP 410); skipped")
        if exc.status == 404:
            return ItemError(f"{self.name}: {key} is gone (HTTP 404: deleted, transferred or "
                             "hidden); skipped")
        if exc.status == 403 and "locked" in what:
            return ItemError(f"{self.name}: {key} is locked, and GitHub refuses comments on it "
                             "(HTTP 403); skipped: unlock the issue to offer it again")
        return exc

    def _write(self, key: str, method: str, path: str, body: Any = None, *,
               need: str = _WRITE_ISSUES) -> RestResponse:
        """A write about one issue; its one-issue refusals are `ItemError`s."""
        try:
            return self.client.write(method, path, body, need=need)
        except GitHubHTTPError as exc:
            raise self._refused(key, exc) from None

    def post_comment(self, key: str, body: str) -> int | None:
        posted = self._write(key, "POST", self._comments(self._number(key)), {"body": body},
                             need=_WRITE_COMMENTS)
        return int(posted.data["id"]) if isinstance(posted.data, dict) else None

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        try:
            return self.reader.read_comments(self._number(key))
        except GitHubHTTPError as exc:
            raise self._refused(key, exc) from None

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        try:
            resp = self.client.write("PATCH", self._comment(comment_id), {"body": body},
                                     need=_WRITE_COMMENTS)
        except GitHubHTTPError as exc:
            if exc.status in (404, 410):
                return None
            raise self._refused(key, exc) from None
        return parse_time(resp.data["updated_at"])

    def delete_comment(self, key: str, comment_id: int) -> None:
        try:
            self.client.write("DELETE", self._comment(comment_id), need=_WRITE_COMMENTS)
        except GitHubHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def still_to_do(self, key: str, found: list[claims.Marker]) -> bool:
        """After winning: is the issue still to be done? A pool that settled it just before our
        comments were listed (its claim no longer live) closed or labelled it first."""
        issue = self.client.get(f"{self._issues()}/{self._number(key)}").data
        if not isinstance(issue, dict) or issue.get("state") != "open":
            return False
        settled = self.config.settled_by(labels_of(issue), found)
        if settled == "done":
            with self._lock:  # done before and left open on purpose: not work, from now on
                self._done_here.add(key)
        return settled is None

    def mark_claimed(self, key: str) -> None:
        number = self._number(key)
        self._write(key, "POST", f"{self._issues()}/{number}/labels",
                    {"labels": [self.config.claim_label]})
        if self.config.assign:
            self._write(key, "POST", f"{self._issues()}/{number}/assignees",
                        {"assignees": [self._user()]})

    def unmark(self, key: str) -> None:
        with self._lock:
            if key in self._unmarked:  # the settle's one PATCH took the claim label off
                self._unmarked.discard(key)
                return
        self._unlabel(self._number(key), self.config.claim_label)

    def _settle_issue(self, key: str, change: dict[str, Any], *, add: str | None = None) -> None:
        """One `PATCH` that applies an outcome (close, or add the done / failed label) and
        takes the claim label off: the issue's labels are read (a conditional GET) just
        before and written back without the claim label, so a label a person set stays."""
        self._relabel(key, change, drop=self.config.claim_label, add=add)
        with self._lock:
            self._unmarked.add(key)

    def _relabel(self, key: str, change: dict[str, Any], *, drop: str,
                 add: str | None = None) -> None:
        """One `PATCH` of `change` with the issue's labels (read just before, conditionally)
        less jr2's own label `drop`, plus `add`."""
        number = self._number(key)
        cfg = self.config
        issue = self.client.get(f"{self._issues()}/{number}").data
        labels = labels_of(issue) if isinstance(issue, dict) else []
        keep = [lab for lab in labels if cfg.label_key(lab) != cfg.label_key(drop)]
        if add is not None and not cfg.has_label(keep, add):
            keep.append(add)
        self._write(key, "PATCH", f"{self._issues()}/{number}", {**change, "labels": keep})

    # -- claims ---------------------------------------------------------------------------------

    def record(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        self._writable()
        self._number(item_id)  # a foreign id is refused before anything is written
        cfg = self.config

        def finish() -> None:
            if cfg.on_success == "close":
                self._settle_issue(item_id, {"state": "closed", "state_reason": "completed"})
            elif cfg.on_success == "review":
                self._to_review(item_id)
            elif cfg.on_success == "label" and cfg.done_label:
                self._settle_issue(item_id, {}, add=cfg.done_label)

        def mark_failed() -> None:
            self._settle_issue(item_id, {}, add=cfg.failed_label)

        if self.claims.record(item_id, holder, outcome, on_done=finish, on_failed=mark_failed,
                              retry_hint=f"Remove the `{cfg.failed_label}` label to offer it "
                                         "again.", attempt=attempt):
            with self._lock:
                self._done_here.add(item_id)

    def _unlabel(self, number: int, label: str) -> None:
        from urllib.parse import quote

        try:
            self.client.write("DELETE", f"{self._issues()}/{number}/labels/{quote(label, '')}",
                              need=_WRITE_ISSUES)
        except GitHubHTTPError as exc:
            if exc.status != 404:  # 404: the label is not on the issue (someone removed it)
                raise

    def _user(self) -> str:
        if self._login is None:
            resp = self.client.get("/user", need="read its own user")
            self._login = str(resp.data["login"])
        return self._login

    # -- wake ------------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Verify a GitHub delivery and say whether it can change this repo's Ready-set."""
        events = WAKE_EVENTS | PR_EVENTS if self.config.done_when == "merged" else WAKE_EVENTS
        return receive(headers, body, secret, repo=self.client.repo_name(self.repo),
                       deduper=self._deliveries, events=events)

    def close(self) -> None:
        self.client.close()
