"""The feedback loop on GitHub (`--on-feedback rerun`): what sends an issue in review back.

* Signal, at no extra request: the PR query of `pulls.py` carries the head's
  `statusCheckRollup` and `latestOpinionatedReviews(writersOnly: true)`; a FAILURE/ERROR or a
  writer's CHANGES_REQUESTED is looked at once per head and signal.
* Feedback (REST, only then): the head's failing check runs and statuses, and the
  CHANGES_REQUESTED reviews on that head by writers (`can_answer`), with their comments.
* Once per head SHA and feedback (`report.Feedback.key`): a trusted `jr2:feedback {"rerun": key}`
  marker, the review label off, the issue offered again; the winning claim reads the feedback
  for the worker (`extra["feedback"]`). Two pools posting one at once: only the first marker's
  pool offers the issue, the other deletes its copy; a copy is never pending. Attempts spent:
  failed, the feedback as the reason.
* People win: a head other than the worker's (a person pushed, also after the feedback was
  recorded: `won` reads the head before a rerun) or a PR closed unmerged stops the loop for that
  issue (`extra["feedback_stopped"]`). One issue that refuses is one warning.
* A report (`jr2 ready`) reads no thread its listing counts under `MARKED` comments on.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from jr2_core.errors import SourceHTTPError
from jr2_sources.capabilities.feedback.report import Check, Feedback, Note
from jr2_sources.kit import claims

from .refs import item_id

if TYPE_CHECKING:
    from jr2_sources.readyset import SnapshotItem

    from .pulls import PullRequest
    from .tracker import GitHubTracker

FAILING = frozenset({"failure", "cancelled", "timed_out", "action_required", "startup_failure"})
"""Check-run conclusions that fail a head (GitHub's `statusCheckRollup` counts them so)."""
MARKED = 2
"""The fewest comments a thread holding a review marker has: the marker and its run's claim."""
log = logging.getLogger("jr2.github")


def signal(pr: PullRequest) -> str | None:
    """What the judging query says of a PR's head (`sha:checks:reviewers`), None: nothing."""
    red = pr.head_checks in ("FAILURE", "ERROR")
    if not red and not pr.changes_requested:
        return None
    return f"{pr.head_sha}:{int(red)}:{','.join(pr.changes_requested)}"


def attempts_used(found: list[claims.Marker]) -> int:
    """The attempts an issue's markers record: settled claims' `attempts`, reruns' `attempt`."""
    used = 1
    for mk in found:
        n = mk.fields.get("attempts") if mk.kind in ("done", "failed") else (
            mk.fields.get("attempt") if mk.kind == "feedback" else None)
        if isinstance(n, int):
            used = max(used, n)
    return used


def pending(found: list[claims.Marker]) -> claims.Marker | None:
    """The rerun marker no settled claim has answered yet (the rerun still to run); a later
    marker of a feedback already marked is a second pool's copy, never a rerun of its own."""
    last = None
    marked: set[object] = set()
    for mk in found:
        if mk.kind == "feedback" and "rerun" in mk.fields:
            if mk.fields["rerun"] in marked:
                continue
            marked.add(mk.fields["rerun"])
            last = mk
        elif mk.kind in ("done", "failed") and last is not None and mk.comment_id > (
                last.comment_id):
            last = None
    return last


class FeedbackLoop:
    """The loop of one `GitHubTracker` (module notes); `judged` is called by the reader."""

    def __init__(self, tracker: GitHubTracker, attempts: int) -> None:
        self.t = tracker
        self.attempts = attempts
        self.here = False  # a --wait pool: a reopened issue may run again in this process
        self.due: dict[int, PullRequest] = {}
        self.stopped: dict[int, str] = {}
        self._left: dict[int, str | None] = {}  # issue -> the head its worker left
        self._checked: dict[int, str | None] = {}  # issue -> the head its markers were read at
        self._looked: dict[int, str] = {}  # issue -> the signal already looked at
        self.watched: set[int] = set()  # in review with an open PR: judged at every delta

    @property
    def repo(self) -> str:
        return self.t.repo

    # -- judging (reader thread) ----------------------------------------------------------------

    def judged(self, number: int, state: str, pr: PullRequest | None,
               prs: list[PullRequest]) -> bool:
        """Issue `number`, held in review, was just judged: note feedback and people. True when
        it stays in review although no PR is open (a person closed it: no reopen)."""
        self.stopped.pop(number, None)
        self.due.pop(number, None)
        self.watched.discard(number)
        if state == "unmerged":
            self.watched.add(number)
        if state == "open":
            closed = [p for p in prs if p.state == "CLOSED" and p.head == pr_head(number, prs)]
            if closed and not (self.t.read_only and self.left(number, None) is None):
                self.stopped[number] = (f"a person closed its pull request #{closed[0].number} "
                                        "unmerged")
                return True
            return False
        if state != "unmerged" or pr is None or not pr.head_sha:
            return False
        left = self.left(number, pr.head_sha)
        if left is not None and left != pr.head_sha:
            self.stopped[number] = (f"a person pushed to {pr.head} (head {pr.head_sha[:7]} is not "
                                    f"the {left[:7]} jr2's worker left)")
            return False
        seen = signal(pr)
        if seen is not None and self._looked.get(number) != seen:
            self.due[number] = pr
        return False

    def left(self, number: int, head: str | None) -> str | None:
        """The head jr2's worker left on issue `number`'s branch (its newest review marker),
        read from the issue's comments when not known or when `head` is new; a report does
        not read a thread too thin to hold one (module notes)."""
        if self.t.read_only and self.t.reader.comment_counts.get(number, MARKED) < MARKED:
            return None
        if number in self._left and (self._left[number] in (head, None)
                                     or self._checked.get(number) == head):
            return self._left[number]
        self._checked[number] = head
        try:
            comments, _ = self.t.reader.read_comments(number)
        except SourceHTTPError as exc:  # that one issue: its loop is judged at the next read
            log.warning("%s: could not read the comments of #%d: %s", self.t.name, number, exc)
            self._checked.pop(number, None)
            return None
        heads = [mk.fields["review"] for mk in claims.markers(comments)
                 if mk.kind == "feedback" and isinstance(mk.fields.get("review"), str)]
        self._left[number] = heads[-1] if heads else None
        return self._left[number]

    # -- acting (tracker, never read-only) ------------------------------------------------------

    def entered(self, key: str, pr: PullRequest) -> None:
        """The issue went into review with its worker's head `pr.head_sha`: record it."""
        if not pr.head_sha:
            return
        number = int(key.rsplit("#", 1)[1])
        self.t.post_comment(key, claims.render_marker(
            "feedback", {"review": pr.head_sha, "pr": pr.number},
            f"jr2: in review at {pr.head_sha[:12]}; red checks or requested changes on it send "
            "this issue back to its worker."))
        self._left[number] = self._checked[number] = pr.head_sha

    def act(self) -> int:
        """Send back (or fail) each issue in review whose feedback is new (module notes); how
        many were sent back."""
        due, self.due = self.due, {}
        sent = 0
        for number, pr in sorted(due.items()):
            try:
                sent += self._act(number, pr)
            except SourceHTTPError as exc:
                log.warning("%s: could not act on the feedback of #%d: %s", self.t.name,
                            number, exc)
        return sent

    def _act(self, number: int, pr: PullRequest) -> int:
        """`act` for one issue: 1 when it was sent back."""
        seen = signal(pr)
        if seen is not None:
            self._looked[number] = seen
        feedback = self.read(pr.number, str(pr.head_sha), pr.url)
        if not feedback:
            return 0
        key = item_id(self.repo, number)
        comments, _ = self.t.reader.read_comments(number)
        found = claims.markers(comments)
        if any(mk.kind == "feedback" and mk.fields.get("rerun") == feedback.key for mk in found):
            return 0  # this feedback was acted on (a restart, another pool)
        used = attempts_used(found)
        cfg = self.t.config
        if used >= self.attempts:
            reason = feedback.reason()
            self.t.post_comment(key, claims.render_marker(
                "failed", {"reason": reason, "attempts": used},
                f"jr2: failed after {used} attempts: {reason}\n\nRemove the "
                f"`{cfg.failed_label}` label to offer it again."))
            self.t.relabel(key, drop=cfg.review_label, add=cfg.failed_label)
            return 0
        posted = self.t.post_comment(key, claims.render_marker(
            "feedback", {"rerun": feedback.key, "head": pr.head_sha, "pr": pr.number,
                         "url": pr.url, "attempt": used + 1},
            f"jr2: {feedback.reason()}; offered again (attempt {used + 1} of "
            f"{self.attempts})."))
        if not self._first(number, feedback.key, posted):
            return 0  # another pool marked this feedback first: it offers the issue
        self.t.relabel(key, drop=cfg.review_label)
        if self.here:
            self.t.reoffer(key)
        return 1

    def _first(self, number: int, key: str, posted: int | None) -> bool:
        """Is comment `posted` the first rerun marker of feedback `key` on issue `number` (read
        again after posting)? When another pool's came first, ours is deleted."""
        if posted is None:
            return True
        comments, _ = self.t.reader.read_comments(number)
        marks = [mk.comment_id for mk in claims.markers(comments)
                 if mk.kind == "feedback" and mk.fields.get("rerun") == key]
        if not marks or marks[0] == posted:
            return True
        self.t.delete_comment(item_id(self.repo, number), posted)
        return False

    def won(self, item: SnapshotItem) -> bool:
        """A claim on `item` was just won: a pending rerun gives it its feedback and attempt.
        False when a person pushed since the feedback was recorded: they took over, so the
        rerun must not run (the caller gives the claim back and the issue stays in review)."""
        number = int(item.id.rsplit("#", 1)[1])
        comments, _ = self.t.reader.read_comments(number)
        mk = pending(claims.markers(comments))
        pr_number = mk.fields.get("pr") if mk is not None else None
        if mk is None or not isinstance(pr_number, int):
            return True
        head = str(mk.fields.get("head") or "")
        pulls = self.t.reader.pulls
        now = pulls.head_sha(pr_number) if pulls is not None and head else None
        if now is not None and now != head:
            self.stopped[number] = (f"a person pushed to pull request #{pr_number} after the "
                                    f"feedback on {head[:7]} (head {now[:7]})")
            return False
        url = str(mk.fields.get("url") or "") or None
        feedback = self.read(pr_number, head, url) or Feedback(head, url)  # (re-run: gone)
        item.extra["feedback"] = json.loads(feedback.bounded()[0])
        attempt = mk.fields.get("attempt")
        if isinstance(attempt, int) and attempt > 1:
            item.attempts = attempt - 1
        return True

    def read(self, pr: int, sha: str, url: str | None) -> Feedback:
        """The feedback on head `sha` of pull request `pr` (module notes): REST GETs."""
        client, base = self.t.client, f"/repos/{self.repo}"
        out = Feedback(sha, url)
        runs = client.get(f"{base}/commits/{sha}/check-runs", {"per_page": 100},
                          need="read checks (Checks: read)").data or {}
        for run in runs.get("check_runs") or []:
            if run.get("status") == "completed" and run.get("conclusion") in FAILING:
                output = run.get("output") or {}
                out.checks.append(Check(str(run.get("name")), str(run.get("conclusion")),
                                        output.get("summary") or output.get("title"),
                                        run.get("details_url") or run.get("html_url"),
                                        str(run.get("id") or run.get("name"))))
        combined = client.get(f"{base}/commits/{sha}/status",
                              need="read commit statuses (Commit statuses: read)").data or {}
        for st in combined.get("statuses") or []:
            if st.get("state") in ("failure", "error"):
                out.checks.append(Check(str(st.get("context")), str(st.get("state")),
                                        st.get("description"), st.get("target_url"),
                                        f"s:{st.get('context')}"))
        reviews, _ = client.get_all(f"{base}/pulls/{pr}/reviews",
                                    need="read pull requests (Pull requests: read)")
        latest: dict[str, dict[str, Any]] = {}
        for r in reviews:
            who = str((r.get("user") or {}).get("login") or "")
            if who and r.get("state") not in ("COMMENTED", "PENDING"):
                latest[who.casefold()] = r
        asked = [r for r in latest.values() if r.get("state") == "CHANGES_REQUESTED"
                 and r.get("commit_id") == sha
                 and self.t.can_answer(str(r["user"]["login"])) is True]
        for r in asked:
            out.reviews.append(Note(str(r["user"]["login"]), str(r.get("body") or ""),
                                    ref=str(r.get("id"))))
        if asked:
            ids = {r.get("id") for r in asked}
            notes, _ = client.get_all(f"{base}/pulls/{pr}/comments",
                                      need="read pull requests (Pull requests: read)")
            for c in notes:
                if c.get("pull_request_review_id") in ids:
                    line = c.get("line") if c.get("line") is not None else c.get("original_line")
                    out.comments.append(Note(str((c.get("user") or {}).get("login") or ""),
                                             str(c.get("body") or ""), c.get("path"),
                                             line if isinstance(line, int) else None,
                                             str(c.get("id"))))
        return out


def pr_head(number: int, prs: list[PullRequest]) -> str:
    """The head branch of jr2's own PR for issue `number` (its branch), else the first PR's."""
    from .pulls import item_branch

    branch = item_branch(number)
    return branch if any(p.head == branch for p in prs) else (prs[0].head if prs else "")
