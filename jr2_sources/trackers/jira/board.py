"""The dashboard issue on Jira (`--issue KEY`): the `Board` over one issue's description.

* Cloud: an ADF document with action items for boxes, read with `expand=changelog` and written
  with `{"fields": {"description": DOC}}` only (`capabilities.dashboard.adf`). Data Center:
  read-only wiki markup without boxes (`capabilities.dashboard.wiki`).
* Who ticked: every author of a description edit since jr2's own last one must have *Edit
  Issues* on the item a tick acts on (cached 5 minutes), else the tick is ignored, drawn
  unticked and said. A retry tick removes the failed label.
* Limits (`JIRA`): 32,767 characters as Jira counts them, writes at least 10 s apart. `about`:
  a `jira:issue_updated` delivery naming this key; jr2's own edit is told apart by its author.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from jr2_core.errors import SourceHTTPError, UsageError
from jr2_sources.capabilities.dashboard.adf import ADF_LAYOUT, ADF_LIMIT, dumps, empty_doc
from jr2_sources.capabilities.dashboard.body import Tick
from jr2_sources.capabilities.dashboard.layout import Layout
from jr2_sources.capabilities.dashboard.target import Target
from jr2_sources.capabilities.dashboard.wiki import WIKI_LAYOUT

from .client import API, API3, JiraClient

if TYPE_CHECKING:
    from .tracker import JiraTracker

__all__ = ["JIRA", "JiraBoard", "parse_key"]

log = logging.getLogger("jr2.jira")

JIRA = Target(
    limit=ADF_LIMIT, min_interval=10.0, limit_words="Jira's limit on a text field",
    interval_words="each edit of the description is recorded in the issue's history and "
                   "e-mailed to its watchers on Jira")
"""What a Jira dashboard allows, on Cloud and Data Center alike (see the notes: Limits)."""

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*-[1-9][0-9]*")


def parse_key(issue: str | int) -> str:
    """`ENG-7` (any case) -> `ENG-7`; a usage error for anything else."""
    text = str(issue).strip()
    if not _KEY.fullmatch(text):
        raise UsageError(f"--issue {issue!r}: expected a Jira issue key, e.g. ENG-7")
    return text.upper()


class JiraBoard:
    """One Jira issue used as the dashboard of a tracker's JQL scope (Cloud: ADF with boxes;
    Data Center: wiki markup, read-only)."""

    target = JIRA

    def __init__(self, tracker: JiraTracker, issue: str | int) -> None:
        self.tracker = tracker
        self.key = parse_key(issue)
        self.item_id = self.key
        self.name = f"jira:{self.key}"
        self.path = f"/issue/{self.key}"
        self._writer: JiraClient | None = None
        self._editors: list[tuple[str, str]] | None = []  # since jr2's last edit; None: unknown
        self._vetted: set[str] = set()  # tick keys found fit before
        self._echoes = 0  # own writes whose webhook delivery has not come back yet
        self._lock = threading.Lock()

    @property
    def cloud(self) -> bool:
        return self.tracker.client.is_cloud

    @property
    def layout(self) -> Layout:
        """ADF on Cloud (REST v3), wiki markup on Data Center (REST v2)."""
        return ADF_LAYOUT if self.cloud else WIKI_LAYOUT

    # -- reading --------------------------------------------------------------------------------

    def _issue(self, fields: str, expand: str | None = None) -> dict[str, Any]:
        params = {"fields": fields, **({"expand": expand} if expand else {})}
        try:
            data = self.tracker.client.get(self.path, params, api=API3 if self.cloud else API,
                                           need="read the dashboard issue").data
        except SourceHTTPError as exc:
            if exc.status == 404:
                raise UsageError(f"{self.name}: no such issue (HTTP 404: deleted, moved or not "
                                 "visible to the account)") from None
            raise
        if not isinstance(data, dict):
            raise UsageError(f"{self.name}: Jira answered something other than an issue")
        return data

    def check(self) -> None:
        """Refuse (one `UsageError` line) an issue that does not exist; on Data Center, say
        once that the dashboard is read-only there."""
        self._issue("summary")
        if not self.cloud:
            log.warning("%s: Jira Data Center keeps the description as wiki markup, which has "
                        "no checkboxes: the dashboard is read-only there (ticks need Jira "
                        "Cloud)", self.name)

    def read(self) -> str:
        if not self.cloud:
            fields = self._issue("description").get("fields")
            text = fields.get("description") if isinstance(fields, dict) else None
            return text if isinstance(text, str) else ""
        data = self._issue("description", "changelog")
        fields = data.get("fields")
        doc = fields.get("description") if isinstance(fields, dict) else None
        editors = self._editors_of(data.get("changelog"))
        with self._lock:
            self._editors = editors
        return dumps(doc if isinstance(doc, dict) else empty_doc())

    def _editors_of(self, changelog: Any) -> list[tuple[str, str]] | None:
        """(account, name) of each description edit newer than jr2's own last one, newest
        first; None when the history Jira returned ends before reaching one and is cut."""
        page: dict[str, Any] = changelog if isinstance(changelog, dict) else {}
        raw = page.get("histories")
        histories: list[Any] = raw if isinstance(raw, list) else []
        out: list[tuple[str, str]] = []
        for h in histories:
            if not isinstance(h, dict) or not any(
                    isinstance(i, dict) and (i.get("fieldId") or i.get("field")) == "description"
                    for i in h.get("items") or []):
                continue
            raw_author = h.get("author")
            author: dict[str, Any] = raw_author if isinstance(raw_author, dict) else {}
            who = str(author.get("accountId") or author.get("name") or "")
            if who and self.tracker._is_me({"accountId": who, "name": who}):
                return out
            out.append((who, str(author.get("displayName") or who or "someone unknown")))
        # a full page ("maxResults: The maximum number of results that could be on the page")
        # may leave older edits out; so may a `total` above what came
        most, total = page.get("maxResults"), page.get("total")
        cut = (isinstance(most, int) and 0 < most <= len(histories)) or (
            isinstance(total, int) and total > len(histories))
        return None if cut else out

    # -- ticks ----------------------------------------------------------------------------------

    def vet(self, tick: Tick) -> str | None:
        """Why the ticked `tick` must be ignored (see the notes), or None to act on it."""
        with self._lock:
            editors, vetted = self._editors, tick.key in self._vetted
        if editors is None:
            return ("the issue's history is too long to tell who ticked it; tick it again")
        if not editors:
            return None if vetted else "who ticked it is not in the issue's history"
        for who, name in editors:
            can = self.tracker._gates.can_edit(who, tick.item_id) if who else False
            if can is False and self.tracker._gates._warned:
                return (f"ticked in an edit by {name}, whose Edit Issues jr2 cannot check "
                        "(its account needs Administer Projects)")
            if can is False:
                return f"ticked in an edit by {name}, who may not edit {tick.item_id}"
        with self._lock:
            self._vetted.add(tick.key)
        return None

    # -- writing --------------------------------------------------------------------------------

    def _client(self) -> JiraClient:
        if self._writer is None:
            client = self.tracker.client
            self._writer = client.for_writes() if client.read_only else client
        return self._writer

    def write(self, body: str) -> None:
        value = json.loads(body) if self.cloud else body
        self._client().request("PUT", self.path, api=API3 if self.cloud else API,
                               body={"fields": {"description": value}},
                               need="edit the dashboard issue (Edit Issues)")
        with self._lock:
            self._echoes += 1
            self._editors = []  # jr2's own edit is now the last

    def retry(self, item_id: str) -> None:
        self.tracker._guard(item_id)
        label = self.tracker.config.failed_label
        self.tracker._echoes.expect(item_id, "labels", f"-{label}")
        self._client().request("PUT", f"/issue/{item_id}",
                               body={"update": {"labels": [{"remove": label}]}},
                               need="edit issues (labels need Edit Issues)")
        self.tracker._deltas.note(item_id)

    # -- webhooks -------------------------------------------------------------------------------

    def about(self, headers: Mapping[str, str], body: bytes) -> Literal["own", "person"] | None:
        """Whether a (verified) delivery is about the dashboard issue: `own` (jr2's own edit of
        its description, see the notes), `person` (any other change of it), None (not)."""
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return None
        issue = payload.get("issue") if isinstance(payload, dict) else None
        if not isinstance(issue, dict) or str(issue.get("key") or "").upper() != self.key:
            return None
        log = payload.get("changelog")
        items = log.get("items") if isinstance(log, dict) else None
        described = any(isinstance(i, dict) and (i.get("fieldId") or i.get("field"))
                        == "description" for i in items or [])
        raw_user = payload.get("user")
        user: dict[str, Any] = raw_user if isinstance(raw_user, dict) else {}
        who = str(user.get("accountId") or user.get("name") or "")
        with self._lock:
            if described and who and self._echoes > 0 and self.tracker._is_me(
                    {"accountId": who, "name": who}):
                self._echoes -= 1
                return "own"
        return "person"
