"""A stateful fake of the Jira REST v2 endpoints jr2 uses, on 127.0.0.1, with fault injection.

Every behaviour follows Atlassian's documented objects and descriptions (the list, with its
sources, is docs/design/fakes.md):

* Documented shapes only: `serverInfo` (Cloud, or Server for Data Center), issues with the
  requested `fields`, links, subtasks, comments, transitions, the error body.
* Search: Cloud `/search/jql` (page tokens; `/search` answers 410), Data Center `/search`
  (`startAt`); a JQL subset is evaluated, anything else is Jira's 400. `search_lag` models
  Cloud's eventually consistent search, `reconcileIssues` its read-after-write.
* `updated` moves for edits and transitions, not for comments or links (the side jr2 must
  survive). Comments get growing ids and server times; every answer has a `Date`; the clock is
  `time.time() + offset` (`advance()`).
* Cloud stores comments and descriptions as ADF (HTML comments are lost); comment `properties`
  come back only from `POST /comment/list?expand=properties`; the change history comes with
  `expand=changelog`; the dashboard's REST v3 description takes an ADF document; text over
  32,767 characters is Jira's 400.
* Webhooks (`webhook(url, secret)`) as Jira delivers them, signed, in order.
* A request log and queued faults (`fault()`: a status with `Retry-After`, a reset, a slow or a
  truncated answer).
* Standalone: `python -m jr2_sources.testing.fakes.jira_server --port 0 --issues 200 [--dc]`
  prints its URL (`jr2 playground jira` serves it seeded from a file).
"""

from __future__ import annotations

import argparse
import contextlib
import email.utils
import hashlib
import hmac
import itertools
import json
import queue
import re
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

API = "/rest/api/2"
API3 = "/rest/api/3"
TEXT_LIMIT = 32_767  # Jira's default limit of a text field (jira.text.field.character.limit)
TOO_LONG = ("The entered text is too long. It exceeds the allowed limit of "
            f"{TEXT_LIMIT:,} characters.")
NOT_ADF = "Operation value must be an Atlassian Document (see the Atlassian Document Format)"
_MARKER = re.compile(r"<!--\s*jr2:(\w+)\s+(\{.*?\})\s*-->", re.DOTALL)
CATEGORIES = {
    "new": {"id": 2, "key": "new", "colorName": "blue-gray", "name": "To Do"},
    "indeterminate": {"id": 4, "key": "indeterminate", "colorName": "yellow",
                      "name": "In Progress"},
    "done": {"id": 3, "key": "done", "colorName": "green", "name": "Done"},
}
STATUSES = {"To Do": ("10000", "new"), "In Progress": ("3", "indeterminate"),
            "Done": ("10001", "done")}
TRANSITIONS = {"11": "To Do", "21": "In Progress", "31": "Done"}
PRIORITIES = {"1": "Highest", "2": "High", "3": "Medium", "4": "Low", "5": "Lowest"}
LINK_TYPES = {"Blocks": ("10000", "is blocked by", "blocks"),
              "Relates": ("10003", "relates to", "relates to")}
ME_CLOUD = {"accountId": "5b10ac8d82e05b22cc7d4ef5", "accountType": "atlassian",
            "displayName": "jr2 bot", "active": True, "timeZone": "UTC"}
ME_DC = {"key": "jr2bot", "name": "jr2bot", "displayName": "jr2 bot", "active": True}


_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def to_doc(body: str) -> dict[str, Any]:
    """A plain body as an ADF document (paragraphs of text); HTML comments are dropped."""
    text = _HTML_COMMENT.sub("", body).strip("\n")
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    return {"type": "doc", "version": 1, "content": [
        {"type": "paragraph", "content": [{"type": "text", "text": p}]} for p in paras]}


def from_doc(doc: dict[str, Any]) -> str:
    """An ADF document of paragraphs back as a plain body."""
    return "\n\n".join("".join(str(t.get("text", "")) for t in para.get("content") or [])
                       for para in doc.get("content") or [])


def _check_length(value: Any) -> None:
    """Jira's 400 for a description over `TEXT_LIMIT` (an ADF document as compact JSON)."""
    if value is None:
        return
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"),
                                                           ensure_ascii=False)
    if len(text.encode("utf-16-le")) // 2 > TEXT_LIMIT:
        raise Reply(400, {"errorMessages": [], "errors": {"description": TOO_LONG}})


def jira_time(t: float) -> str:
    ms = int((t % 1) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{ms:03d}+0000"


@dataclass
class Fault:
    """One injected fault: `kind` is status, reset, slow or truncate."""

    kind: str = "status"
    status: int = 500
    times: int = 1
    method: str | None = None
    path: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    message: str = "Internal server error"

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and (
            self.path is None or re.search(self.path, path) is not None)


@dataclass
class Issue:
    key: str
    id: int
    summary: str
    created: float
    updated: float
    status: str = "To Do"
    labels: list[str] = field(default_factory=list)
    assignee: dict[str, Any] | None = None
    priority: str = "3"
    parent: str | None = None
    comments: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    old_keys: list[str] = field(default_factory=list)  # keys it had before a move
    description: Any = None  # Cloud: an ADF document; Data Center: a wiki-markup string
    history: list[dict[str, Any]] = field(default_factory=list)  # Changelogs, oldest first


@dataclass
class Link:
    id: int
    type: str
    blocker: str  # the inward issue, seen from the blocked one
    blocked: str


class Reply(Exception):
    """An HTTP answer raised from inside a route."""

    def __init__(self, status: int, data: Any = None, headers: dict[str, str] | None = None):
        super().__init__(status)
        self.status, self.data, self.headers = status, data, headers or {}


def _error(status: int, *messages: str) -> Reply:
    return Reply(status, {"errorMessages": list(messages), "errors": {}})


# -- a JQL subset ---------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')'
                    r'|(?P<op>!=|>=|<=|=|>|<|~|\(|\)|,)'
                    r'|(?P<word>[^\s=!<>(),"\']+))')
_FIELDS = {"project", "key", "issuekey", "labels", "status", "statuscategory", "assignee",
           "priority", "updated", "created", "comment"}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _has_run(texts: list[list[str]], words: list[str]) -> bool:
    """Does one of `texts` (each a comment's words) hold `words` in a row?"""
    n = len(words)
    return bool(n) and any(t[k:k + n] == words for t in texts for k in range(len(t) - n + 1))
_DATES = {"updated", "created"}
_COMPARE = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
            "<": lambda a, b: a < b}
_RELATIVE = re.compile(r"([-+]?\d+)([wdhm]?)")
_UNIT = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "": 60}


class JqlError(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise JqlError(f"Error in the JQL Query: unexpected character at position {pos}.")
        pos = m.end()
        if m.group("str") is not None:
            s = m.group("str")[1:-1]
            out.append(("str", re.sub(r"\\(.)", r"\1", s)))
        elif m.group("op") is not None:
            out.append(("op", m.group("op")))
        else:
            out.append(("word", m.group("word")))
    return out


class _Parser:
    def __init__(self, text: str, fake: FakeJira) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.fake = fake

    def peek(self, n: int = 0) -> tuple[str, str] | None:
        j = self.i + n
        return self.toks[j] if j < len(self.toks) else None

    def kw(self, word: str, n: int = 0) -> bool:
        t = self.peek(n)
        return t is not None and t[0] == "word" and t[1].lower() == word

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise JqlError("Error in the JQL Query: the query ended unexpectedly.")
        self.i += 1
        return t

    def parse(self) -> tuple[Any, list[tuple[str, bool]]]:
        pred: Any = (lambda i: True) if self.kw("order") else self.or_()
        order: list[tuple[str, bool]] = []
        if self.kw("order"):
            self.take()
            if not self.kw("by"):
                raise JqlError("Error in the JQL Query: expecting 'by' after 'order'.")
            self.take()
            while True:
                name = self.take()[1].lower()
                desc = False
                if self.kw("asc") or self.kw("desc"):
                    desc = self.take()[1].lower() == "desc"
                order.append((name, desc))
                if self.peek() == ("op", ","):
                    self.take()
                    continue
                break
        if self.peek() is not None:
            raise JqlError(f"Error in the JQL Query: expecting operator but got "
                           f"'{self.peek()[1]}'.")  # type: ignore[index]
        return pred, order

    def or_(self) -> Any:
        left = self.and_()
        while self.kw("or"):
            self.take()
            right = self.and_()
            left = (lambda a, b: lambda i: a(i) or b(i))(left, right)
        return left

    def and_(self) -> Any:
        left = self.not_()
        while self.kw("and"):
            self.take()
            right = self.not_()
            left = (lambda a, b: lambda i: a(i) and b(i))(left, right)
        return left

    def not_(self) -> Any:
        if self.kw("not"):
            self.take()
            inner = self.not_()
            return lambda i: not inner(i)
        if self.peek() == ("op", "("):
            self.take()
            inner = self.or_()
            if self.take() != ("op", ")"):
                raise JqlError("Error in the JQL Query: expecting ')'.")
            return inner
        return self.clause()

    def values(self) -> list[str]:
        if self.peek() == ("op", "("):
            self.take()
            vals = []
            while True:
                kind, v = self.take()
                if kind == "op":
                    raise JqlError(f"Error in the JQL Query: unexpected '{v}'.")
                vals.append(v)
                sep = self.take()
                if sep == ("op", ")"):
                    return vals
                if sep != ("op", ","):
                    raise JqlError("Error in the JQL Query: expecting ',' or ')'.")
        kind, v = self.take()
        if kind == "op":
            raise JqlError(f"Error in the JQL Query: expecting a value but got '{v}'.")
        return [v]

    def clause(self) -> Any:
        kind, name = self.take()
        fname = name.lower()
        if kind == "op" or fname not in _FIELDS:
            raise JqlError(f"Error in the JQL Query: Field '{name}' does not exist or you do not "
                           "have permission to view it.")
        t = self.take()
        if fname == "comment":
            if t != ("op", "~"):
                raise JqlError(f"Error in the JQL Query: the operator '{t[1]}' is not supported "
                               f"by the '{name}' field here.")
            words = _words(self.take()[1])
            text = self.fake.comment_words
            return lambda i: _has_run(text(i), words)
        if fname in _DATES:
            if t[0] != "op" or t[1] not in _COMPARE:
                raise JqlError(f"Error in the JQL Query: the operator '{t[1]}' is not supported "
                               f"by the '{name}' field here.")
            at = self.fake.jql_date(self.take()[1])
            cmp: Callable[[float, float], bool] = _COMPARE[t[1]]
            return lambda i: cmp(getattr(i, fname), at)
        if t == ("op", "="):
            op = "in"
        elif t == ("op", "!="):
            op = "not in"
        elif t[0] == "word" and t[1].lower() == "in":
            op = "in"
        elif t[0] == "word" and t[1].lower() == "not" and self.kw("in"):
            self.take()
            op = "not in"
        elif t[0] == "word" and t[1].lower() == "is":
            neg = self.kw("not")
            if neg:
                self.take()
            if not (self.kw("empty") or self.kw("null")):
                raise JqlError("Error in the JQL Query: expecting EMPTY after IS.")
            self.take()
            get = self.fake.field_values
            return lambda i: (len(get(i, fname)) == 0) != neg
        else:
            raise JqlError(f"Error in the JQL Query: expecting operator but got '{t[1]}'.")
        vals = {v.lower() for v in self.values()}
        get = self.fake.field_values
        if op == "in":
            return lambda i: bool(vals & get(i, fname))
        return lambda i: not (vals & get(i, fname))


# -- the fake ---------------------------------------------------------------------------------


class FakeJira:
    """The fake server; `start()` serves it in a thread, `url` is its base."""

    def __init__(self, *, cloud: bool = True, old_server: bool = False,
                 page_cap: int = 100, transition_delay: float = 0.02,
                 time_zone: str = "UTC", search_lag: float = 0.0) -> None:
        self.cloud = cloud
        self.old_server = old_server
        self.page_cap = page_cap
        self.transition_delay = transition_delay
        self.offset = 0.0
        self.issues: dict[str, Issue] = {}
        self.links: list[Link] = []
        self.faults: list[Fault] = []
        self.log: list[dict[str, Any]] = []
        self.next_id = 10000
        self.next_comment = 10000
        self.next_number: dict[str, int] = {}
        self.lock = threading.RLock()
        self.deny_auth = False
        self.me = dict(ME_CLOUD if cloud else ME_DC, timeZone=time_zone)
        self.search_lag = search_lag
        # who holds the Edit Issues permission (account ids on Cloud, user names on DC);
        # jr2's own account always does
        self.editors: set[str] = set()
        # people's credentials (the `Authorization` header's value -> a name for `person`):
        # a comment posted with them is that person's (Jira authors a comment as the
        # authenticated user); any other credentials act as jr2's own account (`me`)
        self.people: dict[str, str] = {}
        self._server: ThreadingHTTPServer | None = None
        self.url = ""
        self.notifications: list[tuple[str, str]] = []  # (issue key, why) per watcher e-mail
        self.deliveries: list[dict[str, Any]] = []
        self._hook: tuple[str, str | None] | None = None
        self._outbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._sender: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self, port: int = 0) -> FakeJira:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._sender is not None:
            self._outbox.put(None)
            self._sender.join(timeout=10)
            self._sender = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- webhooks -------------------------------------------------------------------------------

    def webhook(self, url: str, secret: str | None = None) -> None:
        """Deliver every later change to `url` (signed with `secret` when given)."""
        self._hook = (url, secret)
        if self._sender is None:
            self._sender = threading.Thread(target=self._send_loop, daemon=True)
            self._sender.start()

    def capture(self) -> None:
        """Keep every later delivery instead of sending it (`pending()` hands them over): for
        tests that pass deliveries to a tracker's `webhook()` themselves."""
        self._hook = ("", None)

    def pending(self) -> list[dict[str, Any]]:
        """The deliveries kept by `capture()` since the last call, oldest first."""
        out: list[dict[str, Any]] = []
        while True:
            try:
                payload = self._outbox.get_nowait()
            except queue.Empty:
                return out
            self._outbox.task_done()
            if payload is not None:
                out.append(payload)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued delivery was sent."""
        deadline = time.monotonic() + timeout
        while self._outbox.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)

    def _emit(self, event: str, it: Issue, kind: str | None = None, *,
              items: list[dict[str, Any]] | None = None,
              comment: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> None:
        if self._hook is None:
            return
        payload: dict[str, Any] = {"timestamp": int(self.now() * 1000), "webhookEvent": event,
                                   "user": self._user(self.me)}
        if kind is not None:
            payload["issue_event_type_name"] = kind
        payload["issue"] = {"id": str(it.id), "self": f"{self.url}{API}/issue/{it.id}",
                            "key": it.key, "fields": {
                                "summary": it.summary, "labels": list(it.labels),
                                "status": self._status(it.status),
                                "project": {"key": it.key.split("-")[0]}}}
        if items is not None:
            self.next_id += 1
            payload["changelog"] = {"id": str(self.next_id), "items": items}
        if comment is not None:
            payload["comment"] = self._render_comment(comment)
        payload.update(extra or {})
        self._outbox.put(payload)

    def _send_loop(self) -> None:
        while True:
            payload = self._outbox.get()
            try:
                if payload is None or self._hook is None:
                    return
                url, secret = self._hook
                body = json.dumps(payload).encode()
                headers = {"Content-Type": "application/json",
                           "X-Atlassian-Webhook-Identifier": str(uuid.uuid4())}
                if secret:
                    headers["X-Hub-Signature"] = "sha256=" + hmac.new(
                        secret.encode(), body, hashlib.sha256).hexdigest()
                answer: Any = None
                try:
                    req = urllib.request.Request(url, body, headers, method="POST")
                    with urllib.request.urlopen(req, timeout=10) as resp:
                        answer = json.loads(resp.read() or b"null")
                except Exception as exc:  # the receiver is down or refused: keep going
                    answer = {"error": f"{type(exc).__name__}: {exc}"}
                with self.lock:
                    self.deliveries.append({"event": payload["webhookEvent"],
                                            "type": payload.get("issue_event_type_name"),
                                            "key": payload.get("issue", {}).get("key"),
                                            "answer": answer})
            finally:
                self._outbox.task_done()

    # -- the clock ------------------------------------------------------------------------------

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.offset += seconds

    # -- setting up -----------------------------------------------------------------------------

    def add_issue(self, summary: str, project: str = "ENG", *, status: str = "To Do",
                  labels: list[str] | None = None, priority: str = "3",
                  parent: str | None = None, assignee: dict[str, Any] | None = None,
                  created: float | None = None, description: str | None = None) -> str:
        with self.lock:
            n = self.next_number.get(project, 1)
            self.next_number[project] = n + 1
            key = f"{project}-{n}"
            self.next_id += 1
            t = self.now() if created is None else created
            self.issues[key] = Issue(key, self.next_id, summary, t, t, status,
                                     list(labels or []), assignee, priority, parent)
            if description is not None:
                self.issues[key].description = self._store_body(description)
            return key

    def _record(self, it: Issue, author: dict[str, Any], items: list[dict[str, Any]]) -> None:
        """One Changelog of `it` (the change history `expand=changelog` reads)."""
        self.next_id += 1
        it.history.append({"id": str(self.next_id), "author": author, "created": self.now(),
                           "items": items})

    def set_description(self, key: str, text: Any, name: str | None = "alice") -> None:
        """A person (`person(name)`; jr2's own account when None) edits an issue's description
        (`updated` moves): `text` a string (stored as Cloud or Data Center stores it), or an
        ADF document (Cloud, as its editor saves it)."""
        with self.lock:
            it = self.issues[key]
            stored = text if isinstance(text, dict) else self._store_body(text)
            self._describe(it, stored, self.person(name) if name else self.me)

    def _describe(self, it: Issue, stored: Any, author: dict[str, Any]) -> None:
        old, it.description = it.description, stored
        it.updated = self.now()
        items = [{"field": "description", "fieldtype": "jira", "fieldId": "description",
                  "from": None, "fromString": self._text(old), "to": None,
                  "toString": self._text(stored)}]
        self._record(it, author, items)
        self._emit("jira:issue_updated", it, "issue_updated", items=items)

    def _changelog(self, it: Issue) -> dict[str, Any]:
        """`expand=changelog`: the most recent 100, newest first (see the notes)."""
        recent = [{**h, "author": self._user(h["author"]), "created": jira_time(h["created"])}
                  for h in reversed(it.history)][:100]
        return {"startAt": 0, "maxResults": 100, "total": len(recent), "histories": recent}

    def _v3_issue(self, method: str, it: Issue, query: dict[str, str], body: Any) -> Any:
        """"Get issue" / "Edit issue" of REST v3 for the one field modelled there, the
        description (see the notes)."""
        if method == "GET":
            fields = query.get("fields")
            out = self.render(it, fields.split(",") if fields else None)
            if "description" in out["fields"]:
                out["fields"]["description"] = it.description  # ADF, as stored
            if "changelog" in str(query.get("expand") or "").split(","):
                out["changelog"] = self._changelog(it)
            return out
        edit = (body or {}).get("fields") or {}
        if set(edit) != {"description"}:
            raise _error(400, "Only the description is modelled on REST v3 here")
        doc = edit["description"]
        if doc is not None and not (isinstance(doc, dict) and doc.get("type") == "doc"
                                    and doc.get("version") == 1):
            raise Reply(400, {"errorMessages": [], "errors": {"description": NOT_ADF}})
        _check_length(doc)
        self._describe(it, doc, self.me)
        self.notifications.append((it.key, "issue edited"))
        raise Reply(204)

    @staticmethod
    def _text(stored: Any) -> str | None:
        """A stored description as the string a REST v2 answer gives (None: empty)."""
        if stored is None:
            return None
        return from_doc(stored) if isinstance(stored, dict) else str(stored)

    def add_link(self, blocker: str, blocked: str, link_type: str = "Blocks") -> None:
        with self.lock:
            self.next_id += 1
            self.links.append(Link(self.next_id, link_type, blocker, blocked))
            if self._hook is not None and self._outbox is not None:
                tid = LINK_TYPES.get(link_type, ("0",))[0]
                self._outbox.put({
                    "timestamp": int(self.now() * 1000), "webhookEvent": "issuelink_created",
                    "issueLink": {"id": self.next_id,
                                  "sourceIssueId": self.issues[blocker].id,
                                  "destinationIssueId": self.issues[blocked].id,
                                  "issueLinkType": {"id": int(tid), "name": link_type},
                                  "systemLink": False}})

    def remove_link(self, blocker: str, blocked: str, link_type: str = "Blocks") -> None:
        """A person removes a link (`issuelink_deleted`; neither issue's `updated` changes)."""
        with self.lock:
            ln = next(ln for ln in self.links
                      if (ln.blocker, ln.blocked, ln.type) == (blocker, blocked, link_type))
            self.links.remove(ln)
            if self._hook is not None:
                tid = LINK_TYPES.get(link_type, ("0",))[0]
                self._outbox.put({
                    "timestamp": int(self.now() * 1000), "webhookEvent": "issuelink_deleted",
                    "issueLink": {"id": ln.id, "sourceIssueId": self.issues[blocker].id,
                                  "destinationIssueId": self.issues[blocked].id,
                                  "issueLinkType": {"id": int(tid), "name": link_type},
                                  "systemLink": False}})

    def move_issue(self, key: str, project: str) -> str:
        """A person moves an issue to another project: it gets a key there, keeps its id, and
        its old key still finds it (Atlassian's "Move an issue": the old key redirects);
        `updated` moves and the delivery is a `jira:issue_updated` with `project` and `Key`
        changelog items. Returns the new key."""
        with self.lock:
            it = self.issues.pop(key)
            n = self.next_number.get(project, 1)
            self.next_number[project] = n + 1
            new = f"{project}-{n}"
            it.old_keys.append(key)
            it.key = new
            it.updated = self.now()
            self.issues[new] = it
            for ln in self.links:
                ln.blocker = new if ln.blocker == key else ln.blocker
                ln.blocked = new if ln.blocked == key else ln.blocked
            for other in self.issues.values():
                if other.parent == key:
                    other.parent = new
            self._emit("jira:issue_updated", it, "issue_moved", items=[
                {"field": "project", "fieldtype": "jira", "fieldId": "project", "from": None,
                 "fromString": key.split("-")[0], "to": None, "toString": project},
                {"field": "Key", "fieldtype": "jira", "from": None, "fromString": key,
                 "to": None, "toString": new}])
            return new

    def delete_issue(self, key: str) -> None:
        """A person deletes an issue: it and its links are gone (`jira:issue_deleted`)."""
        with self.lock:
            it = self.issues.pop(key)
            self.links = [ln for ln in self.links if key not in (ln.blocker, ln.blocked)]
            self._emit("jira:issue_deleted", it, "issue_deleted")

    def edit(self, key: str, *, add: str | None = None, remove: str | None = None,
             assignee: dict[str, Any] | bool | None = False, by: str = "someone") -> None:
        """A person (`person(by)`) edits labels (or the assignee: a dict, or None to
        unassign)."""
        with self.lock:
            it = self.issues[key]
            before = list(it.labels)
            if add is not None and add not in it.labels:
                it.labels.append(add)
            if remove is not None and remove in it.labels:
                it.labels.remove(remove)
            if assignee is not False:
                it.assignee = assignee if isinstance(assignee, dict) else None
            it.updated = self.now()
            items = [{"field": "labels", "fieldtype": "jira", "fieldId": "labels", "from": None,
                      "fromString": " ".join(before), "to": None,
                      "toString": " ".join(it.labels)}]
            if before != it.labels:
                self._record(it, self.person(by), items)
            self._emit("jira:issue_updated", it, "issue_updated", items=items)

    def set_status(self, key: str, status: str) -> None:
        """A person's transition (the issue's `updated` moves)."""
        with self.lock:
            it = self.issues[key]
            old, it.status = it.status, status
            it.updated = self.now()
            self._emit("jira:issue_updated", it, "issue_generic", items=[
                {"field": "status", "fieldtype": "jira", "fieldId": "status",
                 "from": STATUSES[old][0], "fromString": old, "to": STATUSES[status][0],
                 "toString": status}])

    def person(self, name: str) -> dict[str, Any]:
        """A person's user object, as this deployment spells one (Cloud: `accountId`)."""
        if self.cloud:
            return {"accountId": f"acc-{name}", "accountType": "atlassian",
                    "displayName": name.title(), "active": True, "timeZone": "UTC"}
        return {"key": name, "name": name, "displayName": name.title(), "active": True}

    def add_comment(self, key: str, body: str, name: str) -> int:
        """A comment a person (`person(name)`) posts on an issue; its id."""
        with self.lock:
            it = self.issue(key)
            self.next_comment += 1
            t = self.now()
            c = {"id": self.next_comment, "issue": it.id, "body": self._store_body(body),
                 "author": self.person(name), "created": t, "updated": t, "properties": []}
            it.comments.append(c)
            return int(c["id"])

    def _permission_search(self, query: dict[str, str]) -> list[dict[str, Any]]:
        """"Find users with permissions", `GET /rest/api/2/user/permission/search`
        (fixtures/jira/atlassian: `/rest/api/3/user/permission/search`): the users matching
        `accountId` (Cloud; `username` on Data Center) that hold every permission in
        `permissions` for `issueKey`; only EDIT_ISSUES is modelled."""
        if query.get("permissions") != "EDIT_ISSUES" or not query.get("issueKey"):
            raise _error(400, "The permissions parameter is invalid.")
        self.issue(query["issueKey"])
        who = query.get("accountId") if self.cloud else query.get("username")
        if not who:
            raise _error(400, "accountId or query is required")
        mine = self.me.get("accountId") if self.cloud else self.me.get("name")
        if who != mine and who not in self.editors:
            return []
        if who == mine:
            return [self._user(self.me)]
        return [self._user(self.person(who.removeprefix("acc-")))]

    def issue(self, key: str) -> Issue:
        return self.issues[key]

    def comment_bodies(self, key: str) -> list[str]:
        """Each comment of `key` as jr2 reads it back: the body as the API returns it, behind
        the marker of its `jr2` property when it has one (tests look for jr2's markers)."""
        with self.lock:
            out = []
            for c in self.issues[key].comments:
                text = self._render_comment(c)["body"]
                for prop in c.get("properties") or []:
                    value = prop.get("value")
                    if prop.get("key") == "jr2" and isinstance(value, dict):
                        text = (f"<!-- jr2:{value.get('kind')} "
                                f"{json.dumps(value.get('fields'), sort_keys=True)} -->\n{text}")
                out.append(text)
            return out

    def fault(self, status: int = 500, **kw: Any) -> Fault:
        f = Fault(status=status, **kw)
        with self.lock:
            self.faults.append(f)
        return f

    def requests(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.log if (method is None or e["method"] == method)
                    and (path is None or re.search(path, e["path"]))]

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    # -- rendering ------------------------------------------------------------------------------

    def _status(self, name: str, *, category: bool = True) -> dict[str, Any]:
        sid, cat = STATUSES[name]
        out: dict[str, Any] = {"self": f"{self.url}{API}/status/{sid}", "description": "",
                               "iconUrl": f"{self.url}/images/icons/statuses/generic.png",
                               "name": name, "id": sid}
        if category:
            out["statusCategory"] = {"self": f"{self.url}{API}/statuscategory/"
                                             f"{CATEGORIES[cat]['id']}", **CATEGORIES[cat]}
        return out

    def _priority(self, pid: str) -> dict[str, Any]:
        return {"self": f"{self.url}{API}/priority/{pid}", "name": PRIORITIES.get(pid, pid),
                "id": pid, "iconUrl": f"{self.url}/images/icons/priorities/{pid}.svg"}

    def _issuetype(self, sub: bool) -> dict[str, Any]:
        return {"self": f"{self.url}{API}/issuetype/{10002 if sub else 10001}",
                "id": "10002" if sub else "10001", "name": "Sub-task" if sub else "Task",
                "subtask": sub}

    def _ref(self, key: str) -> dict[str, Any]:
        it = self.issues.get(key)
        if it is None:
            return {"key": key, "self": f"{self.url}{API}/issue/{key}"}
        return {"id": str(it.id), "key": key, "self": f"{self.url}{API}/issue/{it.id}",
                "fields": {"summary": it.summary,
                           "status": self._status(it.status, category=not self.old_server),
                           "priority": self._priority(it.priority),
                           "issuetype": self._issuetype(it.parent is not None)}}

    def _user(self, user: dict[str, Any]) -> dict[str, Any]:
        return {"self": f"{self.url}{API}/user", **user}

    def _index(self) -> tuple[dict[str, list[Link]], dict[str, list[str]]]:
        """Links by issue key and sub-tasks by parent, rebuilt when issues or links were added
        or removed (an issue's parent never changes here): rendering a page of a 10,000-issue
        backlog stays linear."""
        stamp = (self.next_id, len(self.links), len(self.issues))
        if getattr(self, "_indexed", None) != stamp:
            links: dict[str, list[Link]] = {}
            for ln in self.links:
                links.setdefault(ln.blocker, []).append(ln)
                if ln.blocked != ln.blocker:
                    links.setdefault(ln.blocked, []).append(ln)
            children: dict[str, list[str]] = {}
            for k, c in self.issues.items():
                if c.parent is not None:
                    children.setdefault(c.parent, []).append(k)
            self._by_key, self._children, self._indexed = links, children, stamp
        return self._by_key, self._children

    def render(self, it: Issue, fields: list[str] | None) -> dict[str, Any]:
        want = None if not fields or "*all" in fields or "*navigable" in fields else set(fields)
        links = []
        by_key, children = self._index()
        for ln in by_key.get(it.key, []):
            if ln.type not in LINK_TYPES:
                continue
            tid, inward, outward = LINK_TYPES[ln.type]
            entry: dict[str, Any] = {
                "id": str(ln.id), "self": f"{self.url}{API}/issueLink/{ln.id}",
                "type": {"id": tid, "name": ln.type, "inward": inward, "outward": outward,
                         "self": f"{self.url}{API}/issueLinkType/{tid}"}}
            if ln.blocked == it.key:
                entry["inwardIssue"] = self._ref(ln.blocker)
            else:
                entry["outwardIssue"] = self._ref(ln.blocked)
            links.append(entry)
        all_fields: dict[str, Any] = {
            "summary": it.summary,
            "status": self._status(it.status),
            "labels": list(it.labels),
            "assignee": self._user(it.assignee) if it.assignee else None,
            "priority": self._priority(it.priority),
            "created": jira_time(it.created),
            "updated": jira_time(it.updated),
            "issuelinks": links,
            "subtasks": [self._ref(k) for k in children.get(it.key, [])],
            "issuetype": self._issuetype(it.parent is not None),
            "description": self._text(it.description),
        }
        if it.parent is not None:
            all_fields["parent"] = self._ref(it.parent)
        out_fields = {k: v for k, v in all_fields.items() if want is None or k in want}
        return {"expand": "renderedFields,names,schema,operations,editmeta,changelog",
                "id": str(it.id), "self": f"{self.url}{API}/issue/{it.id}", "key": it.key,
                "fields": out_fields}

    def jql_date(self, text: str) -> float:
        """A JQL date literal as a time: a date-time in the account's time zone, or relative."""
        rel = _RELATIVE.fullmatch(text.strip())
        if rel:
            return self.now() + int(rel.group(1)) * _UNIT[rel.group(2)]
        for fmt in ("%Y/%m/%d %H:%M", "%Y-%m-%d %H:%M", "%Y/%m/%d", "%Y-%m-%d"):
            try:
                local = datetime.strptime(text.strip(), fmt)
            except ValueError:
                continue
            return local.replace(tzinfo=ZoneInfo(str(self.me.get("timeZone") or "UTC"))
                                 ).timestamp()
        raise JqlError(f"Error in the JQL Query: Date value '{text}' for field 'updated' is "
                       "invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', "
                       "'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.")

    def comment_words(self, it: Issue) -> list[list[str]]:
        """The words of each comment's text as people see it (a text search's field)."""
        return [_words(str(self._render_comment(c)["body"])) for c in it.comments]

    def field_values(self, it: Issue, name: str) -> set[str]:
        if name == "project":
            return {it.key.split("-")[0].lower()}
        if name in ("key", "issuekey"):
            return {it.key.lower(), str(it.id), *(k.lower() for k in it.old_keys)}
        if name == "labels":
            return {x.lower() for x in it.labels}
        if name == "status":
            return {it.status.lower(), STATUSES[it.status][0]}
        if name == "statuscategory":
            cat = CATEGORIES[STATUSES[it.status][1]]
            return {str(cat["key"]).lower(), str(cat["name"]).lower(), str(cat["id"])}
        if name == "assignee":
            a = it.assignee or {}
            return {str(v).lower() for k, v in a.items() if k in ("accountId", "name")}
        if name == "priority":
            return {it.priority, PRIORITIES.get(it.priority, "").lower()}
        return set()

    def _search(self, jql: str, reconcile: frozenset[int] = frozenset()) -> list[Issue]:
        try:
            pred, order = _Parser(jql, self).parse()
        except JqlError as exc:
            raise _error(400, str(exc)) from None
        lag, now = self.search_lag, self.now()
        found = [it for it in self.issues.values() if pred(it) and (
            lag <= 0 or now - it.updated >= lag or it.id in reconcile)]
        found.sort(key=lambda i: i.id)
        for name, desc in reversed(order):
            keyf: Any = {"created": lambda i: i.created, "updated": lambda i: i.updated,
                         "priority": lambda i: int(i.priority),
                         "key": lambda i: (i.key.split("-")[0], int(i.key.split("-")[1]))}.get(
                name, lambda i: i.id)
            found.sort(key=keyf, reverse=desc)
        return found

    # -- routes ---------------------------------------------------------------------------------

    def author(self, auth: str | None) -> dict[str, Any]:
        """Who a request's `Authorization` acts as (`people`, else `me`)."""
        name = self.people.get(auth or "")
        return self.me if name is None else self.person(name)

    def route(self, method: str, path: str, query: dict[str, str], body: Any,
              auth: str | None = None) -> Any:
        if path == f"{API}/serverInfo" and method == "GET":
            return {"baseUrl": self.url, "version": "1001.0.0-SNAPSHOT" if self.cloud else
                    "9.12.2", "versionNumbers": [1001, 0, 0] if self.cloud else [9, 12, 2],
                    "deploymentType": "Cloud" if self.cloud else "Server",
                    "buildNumber": 100000, "buildDate": "2024-01-01T00:00:00.000+0000",
                    "serverTime": jira_time(self.now()), "scmInfo": "0" * 40,
                    "serverTitle": "Fake Jira"}
        if path == f"{API}/field" and method == "GET":
            return [{"id": f, "key": f, "name": f.title(), "custom": False, "orderable": True,
                     "navigable": True, "searchable": True, "clauseNames": [f]}
                    for f in ("summary", "status", "labels", "assignee", "priority", "created",
                              "issuelinks", "subtasks", "parent", "description")]
        if path == f"{API}/myself" and method == "GET":
            return self._user(self.me)
        if path == f"{API}/user/permission/search" and method == "GET":
            with self.lock:
                return self._permission_search(query)
        m = re.fullmatch(rf"{API}/status/(\w+)", path)
        if m and method == "GET":
            for name, (sid, _) in STATUSES.items():
                if sid == m.group(1):
                    return self._status(name)
            raise _error(404, "The status with id does not exist")
        if path == f"{API}/comment/list" and method == "POST":
            return self.comment_list(query, body)
        if path in (f"{API}/search/jql", f"{API}/search"):
            return self._route_search(method, path, query, body)
        m = re.fullmatch(rf"{API3}/issue/([A-Z][A-Z0-9]*-\d+)", path)
        if m and self.cloud and method in ("GET", "PUT"):
            with self.lock:
                it = self.issues.get(m.group(1))
                if it is None:
                    raise _error(404, "Issue does not exist or you do not have permission to "
                                      "see it.")
                return self._v3_issue(method, it, query, body)
        m = re.fullmatch(rf"{API}/issue/([A-Z][A-Z0-9]*-\d+)(/.*)?", path)
        if m:
            with self.lock:
                it = self.issues.get(m.group(1)) or next(
                    (i for i in self.issues.values() if m.group(1) in i.old_keys), None)
                if it is None:
                    raise _error(404, "Issue does not exist or you do not have permission to "
                                      "see it.")
            return self._route_issue(method, it, m.group(2) or "", query, body, auth)
        raise _error(404, "null for uri: " + path)

    def _route_search(self, method: str, path: str, query: dict[str, str], body: Any) -> Any:
        enhanced = path.endswith("/jql")
        if enhanced and not self.cloud:
            raise _error(404, "null for uri: " + path)
        if not enhanced and self.cloud:
            raise _error(410, "The requested API has been removed. Please migrate to the "
                              "/rest/api/3/search/jql API.")
        args: dict[str, Any] = dict(body) if method == "POST" and isinstance(body, dict) \
            else dict(query)
        jql = str(args.get("jql") or "")
        fields = args.get("fields")
        if isinstance(fields, str):
            fields = fields.split(",")
        size = min(int(args.get("maxResults") or 50), self.page_cap)
        with self.lock:
            ids = args.get("reconcileIssues") if enhanced else None
            found = self._search(jql, frozenset(int(i) for i in ids or [] if str(i).isdigit()))
            if enhanced:
                token = args.get("nextPageToken")
                start = int(str(token).split("-")[1]) if token else 0
                page = found[start:start + size]
                out: dict[str, Any] = {"issues": [self.render(i, fields) for i in page]}
                if start + size < len(found):
                    out["nextPageToken"] = f"tok-{start + size}"
                    out["isLast"] = False
                else:
                    out["isLast"] = True
                return out
            start = int(args.get("startAt") or 0)
            page = found[start:start + size]
            return {"expand": "schema,names", "startAt": start, "maxResults": size,
                    "total": len(found), "issues": [self.render(i, fields) for i in page]}

    def _route_issue(self, method: str, it: Issue, sub: str, query: dict[str, str],
                     body: Any, auth: str | None = None) -> Any:
        if sub == "" and method == "GET":
            fields = query.get("fields")
            with self.lock:
                out = self.render(it, fields.split(",") if fields else None)
                if "changelog" in str(query.get("expand") or "").split(","):
                    recent = [{**h, "author": self._user(h["author"]),
                               "created": jira_time(h["created"])}
                              for h in reversed(it.history)][:100]
                    out["changelog"] = {"startAt": 0, "maxResults": len(recent),
                                        "total": len(recent), "histories": recent}
                return out
        if sub == "" and method == "PUT":
            return self._edit(it, body or {}, auth)
        if sub == "/assignee" and method == "PUT":
            with self.lock:
                who = body or {}
                it.assignee = dict(self.me) if who.get("accountId") == self.me.get(
                    "accountId") or who.get("name") == self.me.get("name") else (
                    {k: v for k, v in who.items() if k in ("accountId", "name")} or None)
                it.updated = self.now()
                self._emit("jira:issue_updated", it, "issue_assigned", items=[
                    {"field": "assignee", "fieldtype": "jira", "fieldId": "assignee",
                     "from": None, "fromString": None, "to": str(who.get("accountId") or ""),
                     "toString": str((it.assignee or {}).get("displayName") or "")}])
            raise Reply(204)
        if sub == "/comment":
            return self._comments(method, it, query, body, auth)
        m = re.fullmatch(r"/comment/(\d+)", sub)
        if m:
            return self._comment(method, it, int(m.group(1)), body, query)
        if sub == "/transitions":
            return self._transitions(method, it, body)
        raise _error(404, "null for uri")

    def _edit(self, it: Issue, body: dict[str, Any], auth: str | None = None) -> Any:
        fields = body.get("fields") or {}
        if "description" in fields:  # Data Center (REST v2): a string of wiki markup
            text = fields["description"]
            if self.cloud or not (text is None or isinstance(text, str)):
                raise _error(400, "Only Data Center's wiki-markup description is modelled on v2")
            _check_length(text)
            with self.lock:
                self._describe(it, text, self.me)
                self.notifications.append((it.key, "issue edited"))
            if set(fields) == {"description"} and not body.get("update"):
                raise Reply(204)
        with self.lock:
            before = list(it.labels)
            for op in (body.get("update") or {}).get("labels") or []:
                if "add" in op and op["add"] not in it.labels:
                    it.labels.append(str(op["add"]))
                elif "remove" in op and op["remove"] in it.labels:
                    it.labels.remove(op["remove"])
                elif "set" in op:
                    it.labels = [str(x) for x in op["set"]]
            if "labels" in (body.get("fields") or {}):
                it.labels = [str(x) for x in body["fields"]["labels"]]
            it.updated = self.now()
            if before != it.labels:
                self.notifications.append((it.key, "issue edited"))
                items = [{"field": "labels", "fieldtype": "jira", "fieldId": "labels",
                          "from": None, "fromString": " ".join(before), "to": None,
                          "toString": " ".join(it.labels)}]
                self._record(it, self.author(auth), items)
                self._emit("jira:issue_updated", it, "issue_updated", items=items)
        raise Reply(204)

    def _store_body(self, body: str) -> Any:
        return to_doc(body) if self.cloud else body

    def _render_comment(self, c: dict[str, Any], *, properties: bool = False) -> dict[str, Any]:
        body = from_doc(c["body"]) if isinstance(c["body"], dict) else c["body"]
        out = {"self": f"{self.url}{API}/issue/{c['issue']}/comment/{c['id']}",
               "id": str(c["id"]), "author": self._user(c["author"]), "body": body,
               "updateAuthor": self._user(c["author"]), "created": jira_time(c["created"]),
               "updated": jira_time(c["updated"])}
        if properties:
            out["properties"] = [dict(p) for p in c.get("properties") or []]
        return out

    def _issue_of(self, c: dict[str, Any]) -> Issue:
        return next(it for it in self.issues.values() if it.id == c["issue"])

    def comment_list(self, query: dict[str, str], body: Any) -> Any:
        """`POST /comment/list`: the comments with the given ids (`expand=properties`)."""
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or len(ids) > 1000:
            raise _error(400, "The list of comment IDs is missing or has over 1000 ids.")
        want = "properties" in str(query.get("expand") or "").split(",")
        with self.lock:
            found = [self._render_comment(c, properties=want) for it in self.issues.values()
                     for c in it.comments if c["id"] in {int(i) for i in ids}]
        return {"maxResults": 1048576, "startAt": 0, "total": len(found), "isLast": True,
                "values": found}

    def _comments(self, method: str, it: Issue, query: dict[str, str], body: Any,
                  auth: str | None = None) -> Any:
        with self.lock:
            if method == "POST":
                if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                    raise _error(400, "Comment body can not be empty!")
                self.next_comment += 1
                t = self.now()
                c = {"id": self.next_comment, "issue": it.id,
                     "body": self._store_body(body["body"]), "author": self.author(auth),
                     "created": t,
                     "updated": t, "properties": _properties(body)}
                it.comments.append(c)
                self.notifications.append((it.key, "comment added"))
                self._emit("comment_created", it, "issue_commented", comment=c)
                self._emit("jira:issue_updated", it, "issue_commented", comment=c)
                raise Reply(201, self._render_comment(c))
            if method != "GET":
                raise _error(405, "Method not allowed")
            ordered = sorted(it.comments, key=lambda c: (c["created"], c["id"]),
                             reverse=query.get("orderBy", "") == "-created")
            start = int(query.get("startAt") or 0)
            size = min(int(query.get("maxResults") or 5000), 5000)
            page = ordered[start:start + size]
            return {"startAt": start, "maxResults": size, "total": len(ordered),
                    "comments": [self._render_comment(c) for c in page]}

    def _comment(self, method: str, it: Issue, cid: int, body: Any,
                 query: dict[str, str] | None = None) -> Any:
        with self.lock:
            c = next((c for c in it.comments if c["id"] == cid), None)
            if c is None:
                raise _error(404, "Can not find a comment for the id: " + str(cid))
            if method == "GET":
                return self._render_comment(c)
            if method == "PUT":
                c["body"] = self._store_body(str((body or {}).get("body") or ""))
                if isinstance(body, dict) and "properties" in body:
                    c["properties"] = _properties(body)
                c["updated"] = self.now()
                if (query or {}).get("notifyUsers", "true").lower() != "false":
                    self.notifications.append((it.key, "comment updated"))
                self._emit("comment_updated", it, "issue_comment_edited", comment=c)
                self._emit("jira:issue_updated", it, "issue_comment_edited", comment=c)
                return self._render_comment(c)
            if method == "DELETE":
                it.comments.remove(c)
                self._emit("comment_deleted", it, "issue_comment_deleted", comment=c)
                self._emit("jira:issue_updated", it, "issue_comment_deleted", comment=c)
                raise Reply(204)
        raise _error(405, "Method not allowed")

    def _transitions(self, method: str, it: Issue, body: Any) -> Any:
        if method == "GET":
            return {"expand": "transitions", "transitions": [
                {"id": tid, "name": name, "to": self._status(name), "hasScreen": False,
                 "isGlobal": True, "isInitial": False, "isConditional": False}
                for tid, name in TRANSITIONS.items()]}
        tid = str(((body or {}).get("transition") or {}).get("id") or "")
        if tid not in TRANSITIONS:
            raise _error(400, f"Transition id '{tid}' is not valid for this issue.")
        if not it.lock.acquire(blocking=False):
            raise _error(409, "The issue is being transitioned by another request.")
        try:
            time.sleep(self.transition_delay)
            with self.lock:
                old, it.status = it.status, TRANSITIONS[tid]
                it.updated = self.now()
                self.notifications.append((it.key, "issue transitioned"))
                items: list[dict[str, Any]] = [
                    {"field": "status", "fieldtype": "jira", "fieldId": "status",
                     "from": STATUSES[old][0], "fromString": old,
                     "to": STATUSES[it.status][0], "toString": it.status}]
                if STATUSES[it.status][1] == "done":
                    items.insert(0, {"field": "resolution", "fieldtype": "jira",
                                     "fieldId": "resolution", "from": None, "fromString": None,
                                     "to": "10000", "toString": "Done"})
                self._emit("jira:issue_updated", it, "issue_generic", items=items)
        finally:
            it.lock.release()
        raise Reply(204)


def _properties(body: Any) -> list[dict[str, Any]]:
    props = body.get("properties") if isinstance(body, dict) else None
    if not isinstance(props, list):
        return []
    return [{"key": str(p["key"]), "value": p.get("value")} for p in props
            if isinstance(p, dict) and "key" in p]


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeJira
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one write (no Nagle / delayed-ACK stalls)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        fake = self.server_fake
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        method = self.command
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        fault = None
        with fake.lock:
            for f in fake.faults:
                if f.times > 0 and f.matches(method, parts.path):
                    f.times -= 1
                    fault = f
                    break
        entry: dict[str, Any] = {"method": method, "path": parts.path, "query": query,
                                 "body": body, "time": fake.now(), "status": 0}
        if isinstance(body, dict) and isinstance(body.get("body"), str):
            mk = _MARKER.search(body["body"])
            if mk:
                entry["kind"] = mk.group(1)
                with contextlib.suppress(ValueError):
                    entry["holder"] = json.loads(mk.group(2)).get("holder")
        for prop in _properties(body):  # on Cloud jr2's marker is the comment property `jr2`
            value = prop["value"]
            if prop["key"] == "jr2" and isinstance(value, dict):
                entry["kind"] = value.get("kind")
                entry["holder"] = (value.get("fields") or {}).get("holder")
        m = re.search(r"/issue/([A-Z][A-Z0-9]*-\d+)", parts.path)
        entry["key"] = m.group(1) if m else None
        try:
            if fault is not None and fault.kind == "reset":
                entry["status"] = -1
                with fake.lock:
                    fake.log.append(entry)
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if fault is not None and fault.kind == "slow":
                time.sleep(fault.delay)
            if fault is not None and fault.kind == "status":
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = str(int(fault.retry_after))
                raise Reply(fault.status, {"errorMessages": [fault.message], "errors": {}},
                            headers)
            if fake.deny_auth or not self.headers.get("Authorization"):
                raise Reply(401, {"errorMessages": ["You are not authenticated. Authentication "
                                                    "required to perform this operation."],
                                  "errors": {}})
            result = fake.route(method, parts.path, query, body,
                                self.headers.get("Authorization"))
            reply = Reply(200, result)
        except Reply as r:
            reply = r
        except Exception as exc:  # a defect of the fake: say so
            reply = Reply(500, {"errorMessages": [f"fake: {type(exc).__name__}: {exc}"]})
        entry["status"] = reply.status
        if isinstance(reply.data, dict) and entry.get("key") and "id" in reply.data \
                and "/comment" in parts.path:
            entry["comment_id"] = int(reply.data["id"])
        with fake.lock:
            fake.log.append(entry)
        payload = b"" if reply.data is None else json.dumps(reply.data).encode()
        if fault is not None and fault.kind == "truncate" and payload:
            payload = payload[: max(1, len(payload) // 2)]
        self.log_request(reply.status)
        self.send_response_only(reply.status)
        self.send_header("Server", "fake-jira")
        self.send_header("Date", email.utils.formatdate(fake.now(), usegmt=True))
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _handle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--issues", type=int, default=20)
    ap.add_argument("--dc", action="store_true", help="act as Data Center (startAt search)")
    args = ap.parse_args()
    fake = FakeJira(cloud=not args.dc).start(args.port)
    keys = [fake.add_issue(f"Issue {i}", labels=["agent"]) for i in range(args.issues)]
    for a, b in itertools.pairwise(keys):
        if int(b.split("-")[1]) % 3 == 0:
            fake.add_link(a, b)
    print(fake.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
