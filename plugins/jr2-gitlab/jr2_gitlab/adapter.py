"""`GitLabAdapter`: the `TrackerAdapter` of `gitlab:group/project` (snapshot, claim, renew,
settle, webhook).

Claim protocol (GitLab has no compare-and-set on labels or assignees either)
---------------------------------------------------------------------------
Claims follow `jr2_sources.claims` over issue notes, whose ids only grow and whose
`created_at`/`updated_at` come from the server:

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

import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jr2_core import Outcome, Snapshot, SnapshotItem, SourceEnv, SourceError, UsageError
from jr2_sources import DeliveryDeduper, Verdict, claims
from jr2_sources.retry import RetryPolicy

from .client import GitLabClient, GitLabHTTPError, api_url, resolve_token
from .config import GitLabConfig
from .reader import IssueReader, labels_of
from .refs import encode_project, parse_time, same_project, split_id
from .webhook import receive

_WRITE_NOTES = "write issue notes (claims need the api scope and Reporter or more)"
_WRITE_ISSUES = "update issues (labels, state: the api scope and Reporter or more)"


@dataclass
class _Held:
    iid: int
    holder: str
    note_id: int
    updated_at: datetime
    lease: float
    nonce: str
    attempt: int = 1
    extra_ids: set[int] = field(default_factory=set)


class GitLabAdapter:
    """A `TrackerAdapter` over one GitLab project's issues."""

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
        self._held: dict[str, _Held] = {}
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

    def _writable(self) -> None:
        if self.read_only:
            raise UsageError(f"{self.name}: read-only here (a report never writes to GitLab)")

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        self._writable()
        iid = self._iid(item.id)
        nonce = secrets.token_hex(8)
        fields = {"holder": holder, "lease": lease, "attempt": 1, "nonce": nonce}
        text = f"jr2: claimed by `{holder}` (lease {lease:.0f}s)."
        posted = self.client.write("POST", f"{self._issue(iid)}/notes",
                                   {"body": claims.render_marker("claim", fields, text)},
                                   need=_WRITE_NOTES)
        mine = {int(posted.data["id"])} if isinstance(posted.data, dict) else set()
        notes, now = self.reader.read_notes(iid)
        mine |= {mk.comment_id for mk in claims.markers(notes) if mk.nonce == nonce}
        winner = claims.holder_of(notes, now)
        if winner is None or winner.nonce != nonce or not self._still_open(iid, notes):
            for nid in sorted(mine):
                self._delete_note(iid, nid)
            return False
        held = _Held(iid, holder, winner.comment_id, winner.updated_at, lease, nonce,
                     extra_ids=mine - {winner.comment_id})
        with self._lock:
            self._held[item.id] = held
        for nid in sorted(held.extra_ids):
            self._delete_note(iid, nid)
        try:
            self.client.write("PUT", self._issue(iid), {"add_labels": self.config.claim_label},
                              need=_WRITE_ISSUES)
        except SourceError:
            self._edit(held, "released", {"holder": holder, "nonce": nonce},
                       "jr2: released (the claim could not be labelled).")
            self._forget(item.id)
            raise
        return True

    def _still_open(self, iid: int, notes: list[claims.Comment]) -> bool:
        issue = self.client.get(self._issue(iid)).data
        if not isinstance(issue, dict) or issue.get("state") != "opened":
            return False
        cfg = self.config
        if {cfg.failed_label, cfg.done_label} & set(labels_of(issue)):
            return False
        return cfg.on_success != "nothing" or not any(
            mk.kind == "done" for mk in claims.markers(notes))

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        self._writable()
        with self._lock:
            held = self._held.get(item_id)
        if held is None or held.holder != holder:
            return False
        held.attempt += 1
        fields = {"holder": holder, "lease": lease, "attempt": held.attempt,
                  "nonce": held.nonce}
        text = f"jr2: claimed by `{holder}` (lease {lease:.0f}s, renewed)."
        try:
            resp = self.client.write("PUT", self._note(held.iid, held.note_id),
                                     {"body": claims.render_marker("claim", fields, text)},
                                     need=_WRITE_NOTES)
        except GitLabHTTPError as exc:
            if exc.status in (404, 410):
                self._forget(item_id)
                return False
            raise
        updated = parse_time(resp.data["updated_at"])
        if (updated - held.updated_at).total_seconds() >= held.lease:
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
        iid = held.iid
        if outcome.status == "done":
            on = self.config.on_success

            def finish() -> None:
                if on == "close":
                    self.client.write("PUT", self._issue(iid), {"state_event": "close"},
                                      need=_WRITE_ISSUES)
                elif on == "label" and self.config.done_label:
                    self.client.write("PUT", self._issue(iid),
                                      {"add_labels": self.config.done_label}, need=_WRITE_ISSUES)

            self._settle(held, "done", {}, f"jr2: done by `{holder}`.", finish)
            with self._lock:
                self._done_here.add(item_id)
            return
        reason = outcome.failure.reason if outcome.failure is not None else "failed"
        reason = " ".join(str(reason).split())[:500] or "failed"

        def mark_failed() -> None:
            self.client.write("PUT", self._issue(iid), {"add_labels": self.config.failed_label},
                              need=_WRITE_ISSUES)

        self._settle(held, "failed", {"reason": reason},
                     f"jr2: failed under `{holder}`: {reason}\n\nRemove the "
                     f"`{self.config.failed_label}` label to offer it again.", mark_failed)

    # -- settle helpers -------------------------------------------------------------------------

    def _settle(self, held: _Held, kind: claims.Kind, fields: dict[str, Any], text: str,
                action: Callable[[], None] | None) -> None:
        """Act and drop the claim label only while our claim still holds; then turn the claim
        note into its outcome."""
        notes, now = self.reader.read_notes(held.iid)
        winner = claims.holder_of(notes, now)
        if winner is not None and winner.nonce == held.nonce:
            if action is not None:
                action()
            # remove_labels drops only the named label; absent labels are ignored by GitLab
            self.client.write("PUT", self._issue(held.iid),
                              {"remove_labels": self.config.claim_label}, need=_WRITE_ISSUES)
        else:
            kind, fields = "released", {}
            text = f"jr2: `{held.holder}` lost this claim before settling it."
        self._edit(held, kind, {"holder": held.holder, "nonce": held.nonce, **fields}, text)

    def _edit(self, held: _Held, kind: claims.Kind, fields: dict[str, Any], text: str) -> None:
        try:
            self.client.write("PUT", self._note(held.iid, held.note_id),
                              {"body": claims.render_marker(kind, fields, text)},
                              need=_WRITE_NOTES)
        except GitLabHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def _delete_note(self, iid: int, note_id: int) -> None:
        try:
            self.client.write("DELETE", self._note(iid, note_id), need=_WRITE_NOTES)
        except GitLabHTTPError as exc:
            if exc.status not in (404, 410):
                raise

    def _forget(self, item_id: str) -> _Held | None:
        with self._lock:
            return self._held.pop(item_id, None)

    # -- wake ------------------------------------------------------------------------------------

    def webhook(self, headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        """Check a GitLab delivery and say whether it can change this project's Ready-set."""
        return receive(headers, body, secret, project=self.project, deduper=self._deliveries)

    def close(self) -> None:
        self.client.close()

