"""`GitHubTracker`: the `Tracker` of `github:owner/repo`, a `LabelCommentTracker` whose HTTP
calls are GitHub's REST API.

* Reading is `reader.IssueReader` (GETs only); every write first refuses when `env.read_only`.
* Settling re-checks the claim, then closes or labels the issue and removes the claim label in
  one `PATCH` (the labels from the watch's read just before, `fresh_issue`, else a conditional
  GET), then edits the claim comment into its outcome. jr2 removes only its own labels.
* One issue that refuses a write (locked, deleted) raises `ItemError` naming it.
* `--assign` needs a user token: installation tokens are refused with it at start.
* `jr2 work` reads deltas (`delta.py`; `mergedelta.py` under `--done-when merged`); its first
  reading also takes `jr2:awaiting-approval` off the closed issues jr2 parked
  (`_untag_closed`); `jr2 ready` never does.
* `on_success=review`: an open PR gets the review label, a merged one (or none) closes the
  issue, a later snapshot settles ended reviews; `on_success=nothing` leaves it open.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr

from jr2_core import Outcome
from jr2_core.errors import ConfigError, ItemError, SourceHTTPError, UsageError
from jr2_sources.capabilities.approvals import KeepsApprovals
from jr2_sources.capabilities.approvals.policy import AWAITING_LABEL
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.capabilities.dashboard.mixin import HasDashboard
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.feedback import TakesFeedback
from jr2_sources.capabilities.limits import LocksByComment
from jr2_sources.capabilities.webhooks import TakesWebhooks, Verdict
from jr2_sources.kit import claims
from jr2_sources.kit.labeltracker import LabelCommentTracker, labels_of
from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.readyset import Snapshot, SnapshotItem
from jr2_sources.registry import SourceEnv

from .app import AppTokens, app_credentials
from .auth import api_url, resolve_token
from .board import GitHubBoard
from .client import GitHubClient, GitHubHTTPError
from .config import GitHubConfig
from .delta import GitHubChanges
from .feedback import FeedbackLoop
from .pulls import Links, judge
from .reader import IssueReader
from .refs import item_id, same_repo, split_id
from .scopehooks import scope_change
from .webhook import PR_EVENTS, WAKE_EVENTS, receive

log = logging.getLogger("jr2.github")

ACTIONS_BOT = "github-actions[bot]"
"""The login of the comments written with GitHub Actions' `GITHUB_TOKEN`."""


def _client(config: GitHubConfig, name: str) -> tuple[GitHubClient, AppTokens | None]:
    """The client the environment asks for: GitHub App auth when `GITHUB_APP_ID` is set (its
    installation tokens, refreshed), else the token from `GITHUB_TOKEN` / `GH_TOKEN` / `gh`."""
    base = api_url()
    creds = app_credentials()
    tokens = None
    if creds is None:
        token, source = resolve_token(base), None
    else:
        tokens = AppTokens(creds, base, config.target)
        token, source = SecretStr("ghs_app_installation"), tokens.token
    return GitHubClient(base, token, label=name, write_spacing=config.write_spacing,
                        policy=RetryPolicy(budget=config.retry_budget),
                        token_source=source), tokens


class GitHubTracker(LocksByComment, HasDashboard, LabelCommentTracker, KeepsApprovals,
                    TakesWebhooks, TakesFeedback):
    """A `Tracker` over one GitHub repository's issues."""

    kind = "github"
    tracker = "GitHub"
    need_comments = "write issue comments (claims need Issues: read & write)"
    need_issues = "write issues (Issues: read & write)"
    spread_claims = True  # every claim attempt notifies people: spread pools over equal items
    comments_count = "comments"  # the issue object's count: an empty thread is not listed

    config: GitHubConfig
    client: GitHubClient

    def __init__(self, config: GitHubConfig, env: SourceEnv, *,
                 client: GitHubClient | None = None) -> None:
        self._app: AppTokens | None = None
        if client is None:
            client, self._app = _client(config, f"{self.kind}:{config.target}")
        super().__init__(config, env, client, look_first=True, spread=config.claim_spread)
        self.repo = config.target
        self.detail = config.detail if config.detail is not None else env.read_only
        if config.assign and not env.read_only and client.app_token():
            raise ConfigError(f"{self.name}: --assign needs a user's token: a GitHub App or "
                              "Actions token (ghs_...) has no user to assign (GET /user is "
                              "refused); drop --assign or use a personal token")
        self.reader = IssueReader(config, client, self.markers)
        if not env.read_only:
            self.reader.changes = GitHubChanges(self.reader, detail=self.detail)  # delta.py
            self.reader.own_claim = self.own_claim
        self._unmarked: set[str] = set()
        self._swept = False  # the one listing of closed awaiting issues (at start) is done
        self._login: str | None = None
        if env.read_only and self.feedback_problem() is None:
            self.start_feedback(2, here=False)  # `jr2 ready`: where a person stopped the loop
        if config.assign and (config.assignee or "").casefold() == "none" and not env.read_only:
            self.reader.own_login = self._user  # ISSUE-NOTES 2: jr2's assignee is not a person's

    feedback_loop: FeedbackLoop | None = None

    def start_feedback(self, attempts: int, *, here: bool) -> None:
        """The loop (`feedback.py`): the judging query reads reviews too."""
        super().start_feedback(attempts, here=here)
        self.feedback_loop = FeedbackLoop(self, attempts)
        self.feedback_loop.here = here
        self.reader.feedback = self.feedback_loop
        if self.reader.pulls is not None:
            self.reader.pulls.reviews = True

    def feedback_problem(self) -> str | None:
        """The loop watches an item held in review: `--done-when merged --on-success review`."""
        if self.config.done_when != "merged" or self.config.on_success != "review":
            return "needs --done-when merged --on-success review (the item waits in review)"
        return None

    # -- paths ----------------------------------------------------------------------------------

    def _number(self, iid: str) -> int:
        repo, number = split_id(iid)
        if not same_repo(repo, self.repo):
            raise UsageError(f"{self.name}: {iid} is not an issue of {self.repo}")
        return number

    def issue_path(self, key: str) -> str:
        return f"/repos/{self.repo}/issues/{self._number(key)}"

    def comment_path(self, key: str, comment_id: int) -> str:
        return f"/repos/{self.repo}/issues/comments/{comment_id}"

    # -- reading --------------------------------------------------------------------------------

    def snapshot(self, detail: bool | None = None) -> Snapshot:
        """The open issues in scope with blockers, sub-issues, claims and failure marks
        (`detail`: name every blocker; default: on for a read-only report)."""
        return self.read_snapshot(self.done_here(), detail)

    def read_snapshot(self, skip: set[str], detail: bool | None = None) -> Snapshot:
        snap = self.reader.snapshot(self.detail if detail is None else detail, skip)
        if not self.read_only:
            sent = self._settle_reviews()
            if sent:  # feedback sent an issue back: read again, so this reading offers it
                snap = self.reader.snapshot(self.detail if detail is None else detail, skip)
        return snap

    def changes(self, *, full: bool = False) -> Snapshot | Delta:
        """As `LabelCommentTracker.changes`; the first one of a writing pool (its full reading
        at start) also takes the awaiting label off issues closed while no pool ran."""
        got = super().changes(full=full)
        if not self._swept and not self.read_only:
            self._swept = True
            self._untag_closed([int(i["number"]) for i in self.reader.closed_awaiting()
                                if self.issue_in_scope(i)])
        return got

    def read_changes(self, skip: set[str]) -> Delta | None:
        """What changed since the last reading (`delta.py`), or None for a full snapshot."""
        changes = self.reader.changes
        if changes is None:
            return None
        delta = changes.read(skip)
        if delta is None and changes.window.last_gap:
            log.info("%s: reading everything again: %s", self.name, changes.window.last_gap)
            changes.window.last_gap = None
        loop = self.feedback_loop
        moves = delta is not None and (self.reader.review_moves or (loop is not None and loop.due))
        if moves and self._settle_reviews():
            return None  # feedback sent an issue back: read everything again, offering it
        if changes.closed_awaiting:
            self._untag_closed(changes.closed_awaiting)
        return delta

    def _untag_closed(self, numbers: list[int]) -> None:
        """Take the awaiting label off the issues a person closed while they waited for
        approval (`delta.py` notes; at start, those closed while no pool ran): two requests
        each, its comments and the DELETE. The label goes only when the thread, read as the
        pool trusts it (`kit.markers`), holds jr2's `gate` request: then the label is jr2's own
        state, not a person's. A refusal is one warning: it concerns that one issue."""
        while numbers:
            number = numbers.pop(0)
            try:
                comments, _ = self.reader.read_comments(number)
                if not any(mk.kind == "gate" for mk in claims.markers(comments)):
                    log.info("%s: left %s on the closed issue #%d: no gate request of jr2's "
                             "in its thread", self.name, AWAITING_LABEL, number)
                    continue
                self.remove_label(item_id(self.repo, number), AWAITING_LABEL)
            except SourceHTTPError as exc:
                log.warning("%s: could not take %s off the closed issue #%d: %s", self.name,
                            AWAITING_LABEL, number, exc)

    def wrote(self, key: str) -> None:
        if self.reader.changes is not None:
            self.reader.changes.window.mark([self._number(key)])

    def issue_in_scope(self, issue: dict[str, Any]) -> bool:
        """The user's filter as the issues list applies it (labels, milestone, assignee),
        ignoring jr2's own assignment (`--assign` with `--assignee none`: `selects`)."""
        return (self.reader.changes or GitHubChanges(self.reader)).selects(issue)

    def _settle_reviews(self) -> int:
        """Act on issues whose review ended (`reader.review_moves`): the PR merged into the
        base -> close the issue as completed if GitHub did not, and take the review label off,
        in one PATCH; closed unmerged -> take the label off, so the issue is offered again. Then
        the feedback loop's moves; returns how many issues it sent back."""
        moves, self.reader.review_moves = self.reader.review_moves, {}
        for number, move in sorted(moves.items()):
            key = item_id(self.repo, number)
            change = {"state": "closed", "state_reason": "completed"} if move == "close" else {}
            self._relabel(key, change, drop=self.config.review_label)
        if self.feedback_loop is not None:
            return self.feedback_loop.act()  # new feedback: send back or fail (feedback.py)
        return 0

    def relabel(self, key: str, *, drop: str, add: str | None = None) -> None:
        """One PATCH of `key`'s labels: jr2's label `drop` off, `add` on (the feedback loop)."""
        self._relabel(key, {}, drop=drop, add=add)

    def reoffer(self, key: str) -> None:
        """`key`, settled done by this process, may be offered again here (a `--wait` pool's
        feedback rerun)."""
        with self._lock:
            self._done_here.discard(key)

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        """As every comment claim; a won rerun of the feedback loop gets its feedback, unless a
        person pushed since it was recorded: then the claim is given back and the issue goes
        back in review, where the loop stays stopped (`feedback.py`)."""
        won = super().claim(item, holder, lease)
        if won and self.feedback_loop is not None and not self.feedback_loop.won(item):
            self.release(item.id, holder)
            self.relabel(item.id, drop=self.config.claim_label, add=self.config.review_label)
            return False
        return won

    def _to_review(self, key: str) -> None:
        """After a success under `--on-success review`: the issue's PR open -> the review
        label; merged into the base already, or no PR at all -> closed as completed (each in
        the settle's one PATCH, which also takes the claim label off)."""
        cfg = self.config
        number = self._number(key)
        changes = self.reader.changes
        epoch = changes.merges.epoch if changes is not None and changes.merges else None
        issue = self.client.get(self.issue_path(key)).data
        pulls = self.reader.pulls
        state = "open"
        links = None
        pr = None
        if pulls is not None and isinstance(issue, dict) and issue.get("node_id"):
            links = pulls.read([(number, str(issue["node_id"]))])
            state, pr = judge(links.prs.get(number, []),
                              cfg.base or links.default_branch or "main", cfg.require_checks)
        if state in ("unmerged", "not_green"):
            if self.feedback_loop is not None and pr is not None:
                self.feedback_loop.entered(key, pr)  # the head its worker left
            self._settle_issue(key, {}, add=cfg.review_label)
            if pulls is not None and isinstance(issue, dict):
                self._left_open(key, links, issue, epoch)  # its judgement: just read
        else:
            self.close_issue(key)

    # -- the comment thread (for jr2_sources.kit.comment_claims) -----------------------------------

    def refused(self, key: str, exc: SourceHTTPError) -> Exception:
        """An error status about one issue as an `ItemError` (the rest unchanged)."""
        what = str(exc).lower()
        if exc.status == 410:
            return ItemError(f"{self.name}: {key} was deleted (HTTP 410)")
        if exc.status == 404:
            return ItemError(f"{self.name}: {key} is gone (HTTP 404: deleted, transferred or "
                             "hidden)")
        if exc.status == 403 and "locked" in what:
            return ItemError(f"{self.name}: {key} is locked, and GitHub refuses comments on it "
                             "(HTTP 403): unlock the issue to offer it again")
        return exc

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        try:
            return self.reader.read_comments(self._number(key))
        except GitHubHTTPError as exc:
            raise self.refused(key, exc) from None

    def add_label(self, key: str, label: str) -> None:
        self.write(key, "POST", f"{self.issue_path(key)}/labels", {"labels": [label]})

    def mark_claimed(self, key: str) -> None:
        super().mark_claimed(key)
        if self.config.assign:
            self.write(key, "POST", f"{self.issue_path(key)}/assignees",
                       {"assignees": [self._user()]})

    def unmark(self, key: str) -> None:
        with self._lock:
            if key in self._unmarked:  # the settle's one PATCH took the claim label off
                self._unmarked.discard(key)
                return
        super().unmark(key)

    def remove_label(self, key: str, label: str) -> None:
        self.forget_issue(key)
        try:
            self.client.write("DELETE", f"{self.issue_path(key)}/labels/{quote(label, '')}",
                              need=self.need_issues)
        except GitHubHTTPError as exc:
            if exc.status != 404:  # 404: the label is not on the issue (someone removed it)
                raise

    # -- settle ---------------------------------------------------------------------------------

    def close_issue(self, key: str) -> None:
        """Close as completed, taking the claim label off in the same PATCH."""
        self._settle_issue(key, {"state": "closed", "state_reason": "completed"})

    def mark_done(self, key: str) -> None:
        if self.config.on_success == "review":
            self._to_review(key)
        elif self.config.on_success == "label" and self.config.done_label:
            self._settle_issue(key, {}, add=self.config.done_label)
        else:
            super().mark_done(key)
            if self.config.on_success == "nothing":
                self._left_open(key)  # only the claim label goes (`unmark`)

    def mark_failed(self, key: str) -> None:
        self._settle_issue(key, {}, add=self.config.failed_label)

    def _settle_issue(self, key: str, change: dict[str, Any], *, add: str | None = None) -> None:
        """One `PATCH` that applies an outcome (close, or add the done / failed label) and
        takes the claim label off: the issue's labels are read (a conditional GET) just
        before and written back without the claim label, so a label a person set stays."""
        self._relabel(key, change, drop=self.config.claim_label, add=add)
        with self._lock:
            self._unmarked.add(key)
        if change.get("state") != "closed":
            self._left_open(key)

    def _left_open(self, key: str, links: Links | None = None,
                   issue: dict[str, Any] | None = None, epoch: int | None = None) -> None:
        """Our settle left `key` open: a reading by merge-aware deltas need not judge its pull
        requests again for that change (`MergeDelta.left_open`; `links`, `issue`: what a
        settle into review read of it, from `epoch`)."""
        changes = self.reader.changes
        if changes is not None and changes.merges is not None:
            changes.merges.left_open(self._number(key), links, issue, epoch)

    def _relabel(self, key: str, change: dict[str, Any], *, drop: str,
                 add: str | None = None) -> None:
        """One `PATCH` of `change` with the issue's labels (read just before, conditionally)
        less jr2's own label `drop`, plus `add`."""
        cfg = self.config
        path = self.issue_path(key)
        issue = self.fresh_issue(key)  # the watch just before a settle read it (labeltracker)
        if issue is None:
            issue = self.client.get(path).data
        labels = labels_of(issue) if isinstance(issue, dict) else []
        # jr2's own labels only: `drop`, and the awaiting label once the item moves on
        gone = {cfg.label_key(drop)} | ({cfg.label_key(AWAITING_LABEL)} if add != AWAITING_LABEL
                                        else set())
        keep = [lab for lab in labels if cfg.label_key(lab) not in gone]
        if add is not None and not cfg.has_label(keep, add):
            keep.append(add)
        self.write(key, "PATCH", path, {**change, "labels": keep})

    def can_answer(self, who: str) -> bool | None:
        return self.reader.gates.can_answer(who)

    def mark_parked(self, key: str) -> None:
        """Park (`jr2_sources.capabilities.approvals.policy`): ONE PATCH swaps the claim label for
        the awaiting label."""
        self._settle_issue(key, {}, add=AWAITING_LABEL)

    def take_off_awaiting(self, key: str) -> None:
        with self._lock:
            relabelled = key in self._unmarked  # the settle's one PATCH took it off already
        if relabelled:
            with self._lock:
                self._gated.discard(key)
            return
        super().take_off_awaiting(key)

    def finish(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        self._writable()
        self._number(item_id)  # a foreign id is refused before anything is written
        super().finish(item_id, holder, outcome, attempt)

    def identity(self) -> list[str]:
        """The account of the pool's credentials (ISSUE-NOTES 6): an App's `<slug>[bot]`, the
        Actions token's `github-actions[bot]` (any other installation token's comments are
        trusted once the pool has posted one: `MarkerTrust.posted_by`), else the user of the
        token (`GET /user`, once)."""
        if self._app is not None:
            return [self._app.bot_login()]
        if self.client.app_token():
            return [ACTIONS_BOT]
        return [self._user()]

    def canonical(self, key: str) -> str:
        return item_id(self.repo, self._number(key))

    def author_of(self, comment: Any) -> str | None:
        user = comment.get("user") if isinstance(comment, dict) else None
        login = user.get("login") if isinstance(user, dict) else None
        return str(login) if login else None

    def _user(self) -> str:
        if self._login is None:
            resp = self.client.get("/user", need="read its own user")
            self._login = str(resp.data["login"])
        return self._login

    # -- the dashboard issue -----------------------------------------------------------------

    def dashboard(self, issue: str | int) -> Any:
        """The issue `issue` of this repository as the dashboard (`trackers/github/board.py`)."""
        return GitHubBoard(self, issue)

    # -- wake ------------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Verify a GitHub delivery and say whether it can change this repo's Ready-set."""
        events = WAKE_EVENTS | PR_EVENTS if self.config.done_when == "merged" else WAKE_EVENTS
        if self.feedback_loop is not None:  # a review submitted on a PR in review
            events |= {"pull_request_review"}
        repo = self.client.repo_name(self.repo)
        verdict = receive(headers, body, secret, repo=repo, deduper=self._deliveries,
                          events=events,
                          scope=lambda event, payload: scope_change(event, payload, repo,
                                                                    self.config))
        if verdict.full:  # a label or milestone the filter names changed (scopehooks.py)
            self.reader.milestone_changed()
            if self.reader.changes is not None:
                self.reader.changes.window.want_full(verdict.reason)
        elif verdict.wake and self.reader.changes is not None:  # read them directly next
            self.reader.changes.window.mark(int(n) for n in verdict.touched if n.isdigit())
        return verdict
