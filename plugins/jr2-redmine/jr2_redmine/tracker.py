"""`RedmineTracker`: the `Tracker` of `redmine:URL --project P`, a `LabelCommentTracker` whose
comments are journal notes and whose labels are words in one custom field.

Redmine's `lock_version` is a compare-and-set no REST answer shows, so claims follow the kit's
comment protocol (`jr2_sources.kit.claims`) on journals, whose ids only grow:

0. look: read the issue with its journals and relations (`GET /issues/N.json?include=...`);
   post nothing when a live claim holds it, it is settled or out of scope, or a relation blocks it;
1. add a note `<!-- jr2:claim {"holder", "lease", "nonce"} -->` (`PUT /issues/N.json` with
   `notes`; the 204 carries no id, so the nonce finds it);
2. read the issue with its journals again, and the server's `Date`;
3. the live claim with the lowest journal id holds the issue; a loser blanks its note (Redmine
   deletes the journal); the winner adds the claim word to the field as that read shows it.

Renewing edits the note (`PUT /journals/J.json`, "Edit own notes"); the note carries the server
time it was renewed at (`at`). A 422 with no reason on a note is Redmine's stale lock: the write
is asked again. Settling closes the issue or adds the failed word and removes the claim word in
one PUT, then edits the note into its outcome. A close Redmine refuses silently (a workflow, an
open subtask or `blocks` relation) is read back, and the issue is marked failed with the reason.

An issue read (`read_issue`) serves what follows it for `REUSE_LISTING` seconds until a write of
ours about it: the claim's check and its marks, the watch and the settle's words. A word a person
writes into the field in that second can be overwritten.

Design notes: docs/design/plugins.md.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from jr2_core import Outcome, UsageError
from jr2_core.errors import ItemError, SourceHTTPError
from jr2_sources import Attempt, Delta, Snapshot, SourceEnv
from jr2_sources.kit import claims
from jr2_sources.kit.comment_claims import REUSE_LISTING
from jr2_sources.kit.labeltracker import LabelCommentTracker
from jr2_sources.kit.rest import RestResponse
from jr2_sources.kit.retry import RetryPolicy

from .client import RedmineClient, RedmineHTTPError, now_text, resolve_key
from .config import RedmineConfig
from .delta import RedmineChanges
from .reader import IssueReader, issue_number

STALE_TRIES = 8


def stale(exc: RedmineHTTPError) -> bool:
    """A 422 with an empty `errors` list: Redmine's answer to a save that lost a race."""
    return exc.status == 422 and "no reason given" in str(exc)


class RedmineTracker(LabelCommentTracker):
    """A `Tracker` over one Redmine project's issues."""

    kind = "redmine"
    tracker = "Redmine"
    open_state = "open"
    need_comments = "add and edit its own notes (the role needs Add notes and Edit own notes)"
    need_issues = "edit issues (the role needs Edit issues, and the workflow the closed status)"
    spread_claims = True  # pools start at their own offset among equal issues: fewer races

    def __init__(self, config: RedmineConfig, env: SourceEnv, *,
                 client: RedmineClient | None = None) -> None:
        if client is None:
            client = RedmineClient(config.target, resolve_key(),
                                   label=f"redmine:{config.target}",
                                   write_spacing=config.write_spacing,
                                   policy=RetryPolicy(budget=config.retry_budget))
        super().__init__(config, env, client, look_first=True)
        self.config: RedmineConfig = config
        self.client: RedmineClient = client
        self.reader = IssueReader(config, client, self.markers)
        self.reader.changes = RedmineChanges(self.reader)  # deltas (delta.py)
        self.reader.own_claim = self.own_claim
        self._closed_status: int | None = None
        self._reads: dict[str, tuple[float, RestResponse]] = {}  # key -> its last read, when
        self._unmarked: set[str] = set()  # the settle's one PUT took the claim word off
        self._writes = itertools.count(1)
        self._written: dict[str, int] = {}  # key -> the count of our last write about it

    # -- ids and reading ----------------------------------------------------------------------

    def _n(self, key: str) -> int:
        try:
            return issue_number(key)
        except ValueError as exc:
            raise UsageError(f"{self.name}: {exc}") from None

    def issue_path(self, key: str) -> str:
        return f"/issues/{self._n(key)}.json"

    def read_snapshot(self, skip: set[str]) -> Snapshot:
        return self.reader.snapshot(skip)

    def read_changes(self, skip: set[str]) -> Delta | None:
        """The issues changed since the last reading (`delta.py`), or None for a full one."""
        changes = self.reader.changes
        return None if changes is None else changes.read(skip)

    def wrote(self, key: str) -> None:
        if self.reader.changes is not None:
            self.reader.changes.window.mark([self._n(key)])

    def labels_of(self, issue: dict[str, Any]) -> list[str]:
        return self.reader.tokens(issue)

    def issue_in_scope(self, issue: dict[str, Any]) -> bool:
        return self.reader.in_scope(issue)

    def read_issue(self, key: str) -> RestResponse:
        """The issue with its journals (`IssueReader.read_issue`): the read of under
        `REUSE_LISTING` seconds ago when no write of ours about it came since, else a new one."""
        n = self._n(key)
        with self._lock:
            kept = self._reads.get(key)
        if kept is not None and 0 <= time.monotonic() - kept[0] < REUSE_LISTING:
            return kept[1]
        at = time.monotonic()
        with self._lock:
            before = self._written.get(key)
        resp = self.reader.read_issue(n)
        with self._lock:
            if self._written.get(key) == before:  # not a read from before a write of ours
                self._reads[key] = (at, resp)
        return resp

    def still_to_do(self, key: str, found: list[claims.Marker]) -> bool:
        """The kit's check, and no open blocker by relation on the issue as just read: the
        deltas ask for relations only on sweeps (`delta.py`), so a relation added since is
        caught here; the next delta reads the issue again."""
        if not super().still_to_do(key, found):
            return False
        issue = self.read_issue(key).data  # the read just judged (kept: no write since)
        if isinstance(issue, dict) and "id" in issue and self.reader.blocked_now(issue):
            self.wrote(key)
            return False
        return True

    def _wrote_to(self, key: str) -> None:
        """A write of ours about `key` (before and after it): what was read of it is stale."""
        with self._lock:
            self._reads.pop(key, None)
            self._written[key] = next(self._writes)
        self.forget_issue(key)

    def list_comments(self, key: str) -> tuple[list[claims.Comment], datetime]:
        try:  # the journals of the issue read, through `markers`
            return self.reader.read_journals(self._n(key), self.read_issue(key))
        except RedmineHTTPError as exc:
            raise self.refused(key, exc) from None

    def identity(self) -> list[str]:
        """The key's own user as journals name their authors: its id (`GET
        /users/current.json`, once)."""
        return [str(self.reader.my_id())]

    def update(self, key: str, change: Callable[[], dict[str, Any] | None], *,
               need: str | None = None) -> None:
        """`PUT /issues/N.json` with the fields `change()` gives (None: nothing to write).
        Redmine saves an issue under optimistic locking: a save that races another save of the
        same issue is refused with 422 and no reason (its `lock_version` went stale between the
        server's read and write). That refusal is asked again, `change()` computed afresh."""
        for attempt in range(STALE_TRIES):
            fields = change()
            if fields is None:
                return
            self._wrote_to(key)
            try:
                self.client.put(self.issue_path(key), {"issue": fields},
                                need=need or self.need_issues)
                return
            except RedmineHTTPError as exc:
                if not stale(exc) or attempt == STALE_TRIES - 1:
                    raise self.refused(key, exc) from None
            finally:
                self._wrote_to(key)
            time.sleep(random.uniform(0.05, 0.25) * (attempt + 1))

    def refused(self, key: str, exc: SourceHTTPError) -> Exception:
        if exc.status in (403, 404, 422):
            return ItemError(str(exc))
        return exc

    # -- journals as the comment thread -------------------------------------------------------

    def post_comment(self, key: str, body: str) -> int | None:
        body = self.markers.seal(self.canonical(key), body)  # signed when a marker key is set
        self.update(key, lambda: {"notes": body}, need=self.need_comments)
        return None  # 204 without the journal: the claim's nonce finds it in the listing

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        at = self.client.server_now().replace(microsecond=0)
        mk = claims.parse_marker(claims.Comment(comment_id, body, at, at))
        if mk is not None:
            body = claims.render_marker(mk.kind, {**mk.fields, "at": now_text(at)},
                                        body.split("\n", 1)[1] if "\n" in body else "")
        body = self.markers.seal(self.canonical(key), body)
        self._wrote_to(key)
        try:
            self.client.put(f"/journals/{comment_id}.json", {"journal": {"notes": body}},
                            need=self.need_comments)
        except SourceHTTPError as exc:
            if exc.status == 404:
                return None
            raise self.refused(key, exc) from None
        finally:
            self._wrote_to(key)
        return at

    def delete_comment(self, key: str, comment_id: int) -> None:
        self._wrote_to(key)
        try:  # a journal whose notes are blanked and that changed nothing else is deleted
            self.client.put(f"/journals/{comment_id}.json", {"journal": {"notes": ""}},
                            need=self.need_comments)
        except SourceHTTPError as exc:
            if exc.status != 404:
                raise
        finally:
            self._wrote_to(key)

    # -- marks ---------------------------------------------------------------------------------

    def _set_words(self, key: str, add: str | None = None, drop: str | None = None,
                   fields: dict[str, Any] | None = None) -> None:
        """One PUT of `fields` and the marks field as the issue shows it now (`read_issue`: the
        read just made, else a conditional GET) less `drop`, plus `add`; nothing is written
        when nothing would change. A stale save is asked again from a new read (`update`)."""
        def change() -> dict[str, Any] | None:
            issue = self.read_issue(key).data
            words = self.labels_of(issue) if isinstance(issue, dict) else []
            new = [w for w in words if w != drop]
            if add is not None and add not in new:
                new.append(add)
            out = dict(fields or {})
            if new != words:
                if self.reader.field_id is None:
                    self.reader.learn_field([issue])
                out["custom_fields"] = [{"id": self.reader.field_id, "value": " ".join(new)}]
            return out or None

        self.update(key, change)

    def add_label(self, key: str, label: str) -> None:
        self._set_words(key, add=label)

    def remove_label(self, key: str, label: str) -> None:
        self._set_words(key, drop=label)

    def _settle_issue(self, key: str, fields: dict[str, Any], add: str | None = None) -> None:
        """The settle's one PUT: `fields` (a status) and `add`, with the claim word taken off."""
        self._set_words(key, add=add, drop=self.config.claim_label, fields=fields)
        with self._lock:
            self._unmarked.add(key)

    def unmark(self, key: str) -> None:
        with self._lock:
            if key in self._unmarked:  # the settle's one PUT took the claim word off
                self._unmarked.discard(key)
                return
        super().unmark(key)

    def mark_done(self, key: str) -> None:
        if self.config.on_success == "label" and self.config.done_label:
            self._settle_issue(key, {}, add=self.config.done_label)
        else:
            super().mark_done(key)

    def mark_failed(self, key: str) -> None:
        self._settle_issue(key, {}, add=self.config.failed_label)

    def settle(self, item_id: str, holder: str, outcome: Outcome,
               attempt: Attempt | None = None) -> None:
        try:
            super().settle(item_id, holder, outcome, attempt)
        finally:
            with self._lock:  # what the settle read or took off concerns this claim only
                self._unmarked.discard(item_id)
                self._reads.pop(item_id, None)

    def closed_status(self) -> int:
        """The status a success sets: `--closed-status`, or Redmine's first closed one."""
        if self._closed_status is None:
            data = self.client.get("/issue_statuses.json", need="read the issue statuses").data
            statuses = [s for s in (data or {}).get("issue_statuses") or []
                        if isinstance(s, dict)]
            want = self.config.closed_status
            for s in statuses:
                if (want is None and s.get("is_closed")) or (
                        want is not None and want.casefold() in (str(s.get("id")),
                                                                 str(s.get("name")).casefold())):
                    self._closed_status = int(s["id"])
                    break
            else:
                raise UsageError(f"{self.name}: no closed status {want or ''!r} in Redmine")
        return self._closed_status

    def close_issue(self, key: str) -> None:
        """The closed status and the claim word off, in one PUT; then read back (Redmine keeps
        an issue open silently when its workflow, a subtask or a blocker forbids the status)."""
        self._settle_issue(key, {"status_id": self.closed_status()})
        issue = self.read_issue(key).data
        if isinstance(issue, dict) and issue.get("state") != "closed":
            why = (f"Redmine kept {key} open (204, status unchanged): its workflow, an open "
                   "subtask or an open blocker forbids closing it")
            self.add_label(key, self.config.failed_label)
            raise ItemError(f"{self.name}: {why}")

    def close(self) -> None:
        self.client.close()
