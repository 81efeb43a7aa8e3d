"""A stateful fake of the GitHub REST endpoints jr2 uses, on 127.0.0.1, with fault injection.

Design notes
------------
* Shapes follow GitHub's documented objects (issue, issue comment, label, milestone, simple
  user) with only documented fields; `issue_dependencies_summary` {blocked_by (open blockers),
  blocking, total_blocked_by, total_blocking} and `sub_issues_summary` {total, completed,
  percent_completed} are computed from the dependency and sub-issue edges the test sets up.
* Behaviour follows the docs where jr2 depends on it: the issues list (filters `state`,
  `labels` (all of), `milestone` (number, `*`, `none`), `assignee` (login, `none`, `*`), `since`
  (updated at or after; 422 when unparsable), `sort` (`created`, `updated`), `direction`,
  `per_page` <= 100, `page`) returns pull requests too (with `pull_request`) and a
  `Link` header; every GET has an `ETag`, and a matching `If-None-Match` gets an empty 304 that
  does not count against `x-ratelimit-remaining`; comments list in ascending id; ids only grow;
  adding a label twice is fine; removing an absent label is 404; assignees accumulate; deleted
  issues answer 410, transferred ones 301, forbidden repositories 403, unknown ones 404.
* The clock is `time.time() + offset` (`advance()` moves it), used for `created_at`/
  `updated_at` and the `Date` header, so lease expiry is tested without sleeping.
* A request log (method, path, query, status, server time, claim holder and marker kind parsed
  from a comment body) lets tests check what was sent and who held what when.
* Faults are queued at run time (Python API `fault()`, or `POST /_fake/faults`): an HTTP status
  (5xx, 429/403 with `Retry-After` or rate-limit headers), a connection reset, a slow response, or
  a truncated JSON body; each applies `times` times to matching requests.
* Standalone: `python -m jr2_sources.testing.fakes.github_server --port 0 --issues 200` prints
  its URL (`jr2 playground github` serves it seeded from a file).
"""

from __future__ import annotations

import argparse
import email.utils
import functools
import hashlib
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from .github_pulls import Pulls, iso, simple_user

LOGIN = "jr2-bot"
_MARKER = re.compile(r"<!--\s*jr2:(\w+)\s+(\{.*?\})\s*-->", re.DOTALL)


def _parse_iso(text: str) -> float:
    """`since` as GitHub takes it (ISO 8601, `YYYY-MM-DDTHH:MM:SSZ`); a bad one is a 422."""
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise Reply(422, {"message": "Validation Failed",
                          "errors": [{"field": "since", "code": "invalid"}]}) from None
    return dt.replace(tzinfo=dt.tzinfo or UTC).timestamp()


_user = simple_user  # a `simple-user` (github_pulls.py: both modules answer users)


# (method, path) of each plan's operations in GitHub's vendored descriptions (fixtures/github/
# openapi), written beside this module by tools/vendor_github.py so the fake ships without them
OPERATIONS = Path(__file__).with_name("github_operations.json")


@functools.cache
def _operations(plan: str) -> list[tuple[str, re.Pattern[str]]]:
    """(method, path pattern) of every operation the vendored description of `plan` holds."""
    table = json.loads(OPERATIONS.read_text(encoding="utf-8"))
    return [(method, re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
                                + "$")) for method, template in table[plan]]


def _app_token(token: str | None) -> bool:
    """GitHub App installation tokens (App auth, Actions' GITHUB_TOKEN) start with `ghs_`
    (docs.github.com, "About authentication": token prefixes)."""
    return bool(token) and str(token).startswith("ghs_")


def _public_user(login: str, uid: int) -> dict[str, Any]:
    """`GET /user` as a `public-user` (GitHub's description: private-user or public-user)."""
    return {
        **_user(login, uid),
        "user_view_type": "public",
        "name": None,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "public_repos": 0,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": iso(0),
        "updated_at": iso(0),
    }


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
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "Server Error"

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and (
            self.path is None or re.search(self.path, path) is not None
        )


@dataclass
class Issue:
    repo: str
    number: int
    title: str
    body: str
    created: float
    updated: float
    state: str = "open"
    state_reason: str | None = None
    closed: float | None = None
    labels: list[str] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    milestone: int | None = None
    pr: bool = False
    comments: int = 0
    uid: int = 0
    locked: bool = False
    author: str = "octocat"
    author_type: str = "User"  # `Bot` for a GitHub App's user


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    body: str
    user: str
    created: float
    updated: float


class Reply(Exception):
    """An HTTP answer raised from deep inside a route."""

    def __init__(self, status: int, data: Any = None, headers: dict[str, str] | None = None):
        super().__init__(status)
        self.status = status
        self.data = data
        self.headers = headers or {}


MAX_BODY = 65536
"""The most characters of a comment's body: a longer one is refused with 422 "Validation
Failed", its `errors` saying "body is too long (maximum is 65536 characters)" (as GitHub
answers "Create an issue comment" and "Update an issue comment")."""


def _comment_body(body: Any, default: str) -> str:
    """The `body` of a comment write, or a 422 as GitHub refuses one over `MAX_BODY`."""
    text = str(body.get("body", default)) if isinstance(body, dict) else default
    if len(text) > MAX_BODY:
        raise Reply(422, {"message": "Validation Failed",
                          "errors": [{"resource": "IssueComment", "code": "custom",
                                      "field": "body",
                                      "message": f"body is too long (maximum is {MAX_BODY} "
                                                 "characters)"}],
                          "documentation_url": "https://docs.github.com/rest/issues/comments"
                                               "#create-an-issue-comment"})
    return text


class FakeGitHub:
    """The fake server: state, clock, log, faults; `start()` serves it in a thread."""

    def __init__(
        self,
        *,
        port: int = 0,
        tokens: set[str] | None = None,
        read_only_tokens: set[str] | None = None,
        login: str = LOGIN,
        capture: bool = False,
        plan: str = "api.github.com",
        summaries: bool = True,
    ) -> None:
        self.port = port
        self.tokens = tokens
        self.read_only_tokens = read_only_tokens or set()
        self.login = login
        # people's tokens (token -> login): what such a token writes is that person's (GitHub
        # authors a comment, a label event, as the token's user; `GET /user` answers them);
        # any other token acts as `login`
        self.people: dict[str, str] = {}
        self.capture = capture  # log request bodies and response data (conformance tests)
        # which GitHub this is: an operation its vendored description lacks answers 404, as
        # on that server (Enterprise Server 3.17-3.19 lack `.../sub_issues`, 3.17-3.18 also
        # `.../dependencies/blocked_by`)
        self.plan = plan
        self.operations = _operations(plan)
        self.summaries = summaries  # False: issue objects without the two summary fields
        # GitHub Apps: app id -> (public key PEM, installation id); issued installation tokens
        # -> expiry (server time); how long a new one lasts (GitHub: one hour)
        self.apps: dict[int, tuple[str, int]] = {}
        self.app_tokens: dict[str, float] = {}
        self.token_ttl = 3600.0
        self.app_slug = "jr2-app"  # every App's slug: its installation tokens act as `jr2-app[bot]`
        self.lock = threading.RLock()
        self.offset = 0.0
        self.issues: dict[tuple[str, int], Issue] = {}
        self.next_number: dict[str, int] = {}
        self.comments: dict[int, Comment] = {}
        self.next_comment = 1000
        self.deps: dict[tuple[str, int], list[tuple[str, int]]] = {}
        self.subs: dict[tuple[str, int], list[tuple[str, int]]] = {}
        self.parents: dict[tuple[str, int], tuple[str, int]] = {}
        self.milestones: dict[str, dict[int, str]] = {}
        self.label_names: dict[str, dict[str, str]] = {}  # repo -> casefold -> spelling
        self.forbidden: set[str] = set()
        self.renamed: dict[str, str] = {}  # old name (lower case) -> new name
        self.repo_ids: dict[str, int] = {}
        self.deleted: set[tuple[str, int]] = set()
        self.transferred: set[tuple[str, int]] = set()
        self.faults: list[Fault] = []
        self.log: list[dict[str, Any]] = []
        self.rate_used = 0
        self.version = 0
        self._list_cache: dict[Any, list[Issue]] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._uid = 100
        # repository permissions by login (lower case): "Get repository permissions for a
        # user" answers `admin`, `write` (also for maintain), `read` (also for triage) or
        # `none`; a login not listed is no collaborator (404)
        self.permissions: dict[str, str] = {"octocat": "admin", login.lower(): "write"}
        # called with (method, path) before each request is routed, under the lock: a test
        # acts as a person at an exact moment of jr2's protocol (e.g. between read and write)
        self.hooks: list[Any] = []
        self.pulls = Pulls(self)  # pull requests, checks and the GraphQL subset: github_pulls.py
        # issue events: `labeled`, and `connected` / `disconnected` (github_pulls.py)
        self.events: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.next_event = 5000

    def who(self, token: str | None) -> str:
        """The login a request's token acts as (`people`; an installation token, the App's bot
        user `<slug>[bot]`, as GitHub authors what an App writes; else the fake's `login`)."""
        if token in self.app_tokens:
            return f"{self.app_slug}[bot]"
        return self.people.get(token or "", self.login)

    # -- clock ----------------------------------------------------------------------------------

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.offset += seconds

    # -- seeding --------------------------------------------------------------------------------

    def _key(self, repo: str, number: int) -> tuple[str, int]:
        return (repo.lower(), number)

    def _touch(self, issue: Issue | None = None) -> None:
        self.version += 1
        if issue is not None:
            issue.updated = self.now()

    def add_issue(
        self,
        repo: str = "o/r",
        title: str | None = None,
        body: str = "",
        *,
        labels: list[str] | tuple[str, ...] = (),
        assignees: list[str] | tuple[str, ...] = (),
        milestone: int | None = None,
        created: float | None = None,
        pr: bool = False,
        state: str = "open",
        state_reason: str | None = None,
    ) -> int:
        with self.lock:
            n = self.next_number.get(repo.lower(), 1)
            self.next_number[repo.lower()] = n + 1
            t = created if created is not None else self.now() - 86400 + n
            # without `created` the issue is dated back (a stable order by number) but was
            # written now: its `updated_at` is now, as a new issue's is on GitHub, so a pool
            # asking what changed `since` its last reading sees it
            self._uid += 1
            issue = Issue(
                repo,
                n,
                title or f"Issue {n}",
                body,
                t,
                t if created is not None else self.now(),
                state,
                state_reason,
                t if state == "closed" else None,
                [self._spell(repo, n) for n in labels],
                list(assignees),
                milestone,
                pr,
                0,
                self._uid,
            )
            self.issues[self._key(repo, n)] = issue
            self._touch()
            return n

    def add_dependency(
        self, repo: str, number: int, blocker: int, blocker_repo: str | None = None
    ) -> None:
        """`repo#number` is blocked by `blocker_repo#blocker`."""
        with self.lock:
            self.deps.setdefault(self._key(repo, number), []).append(
                self._key(blocker_repo or repo, blocker)
            )
            self._touch()

    def add_sub_issue(self, repo: str, parent: int, child: int) -> None:
        with self.lock:
            self.subs.setdefault(self._key(repo, parent), []).append(self._key(repo, child))
            self.parents[self._key(repo, child)] = self._key(repo, parent)
            self._touch()

    def add_milestone(self, repo: str, title: str) -> int:
        with self.lock:
            ms = self.milestones.setdefault(repo.lower(), {})
            number = len(ms) + 1
            ms[number] = title
            return number

    def add_label(self, repo: str, name: str) -> str:
        """A person creates a repository label ("Create a label"); its spelling, which wins
        over a later case-insensitive match (see `_spell`)."""
        with self.lock:
            return self._spell(repo, name)

    def rename_label(self, repo: str, old: str, new: str) -> None:
        """A person renames a label ("Update a label", `new_name`): every issue carrying it
        carries the new name. GitHub's description does not say the issues' `updated_at`
        moves, so the fake takes the worst case (like `add_dependency`)."""
        with self.lock:
            known = self.label_names.setdefault(repo.lower(), {})
            known.pop(old.casefold(), None)
            known[new.casefold()] = new
            for issue in self.issues.values():
                if issue.repo.lower() == repo.lower():
                    issue.labels = [new if n.casefold() == old.casefold() else n
                                    for n in issue.labels]
            self._touch()

    def rename_milestone(self, repo: str, number: int, title: str) -> None:
        """A person retitles a milestone ("Update a milestone"); no issue's `updated_at` moves
        (not documented to: the worst case)."""
        with self.lock:
            self.milestones.setdefault(repo.lower(), {})[number] = title
            self._touch()

    def delete_milestone(self, repo: str, number: int) -> None:
        """A person deletes a milestone ("Delete a milestone"): its issues have none; no
        issue's `updated_at` moves (not documented to: the worst case)."""
        with self.lock:
            self.milestones.get(repo.lower(), {}).pop(number, None)
            for issue in self.issues.values():
                if issue.repo.lower() == repo.lower() and issue.milestone == number:
                    issue.milestone = None
            self._touch()

    def close_issue(self, repo: str, number: int, reason: str = "completed") -> None:
        with self.lock:
            issue = self.issues[self._key(repo, number)]
            issue.state, issue.state_reason, issue.closed = "closed", reason, self.now()
            self._touch(issue)

    def reopen_issue(self, repo: str, number: int) -> None:
        with self.lock:
            issue = self.issues[self._key(repo, number)]
            issue.state, issue.state_reason, issue.closed = "open", "reopened", None
            self._touch(issue)

    def remove_dependency(self, repo: str, number: int, blocker: int) -> None:
        """Undo `add_dependency`. Like adding one, it moves neither issue's `updated_at`:
        GitHub's description does not say that it does, so the fake takes the worst case."""
        with self.lock:
            self.deps[self._key(repo, number)].remove(self._key(repo, blocker))
            self._touch()

    def edit_body(self, repo: str, number: int, body: str) -> None:
        with self.lock:
            issue = self.issues[self._key(repo, number)]
            issue.body = body
            self._touch(issue)

    def delete_issue(self, repo: str, number: int) -> None:
        with self.lock:
            self.issues.pop(self._key(repo, number), None)
            self.deleted.add(self._key(repo, number))
            self._touch()

    def transfer_issue(self, repo: str, number: int) -> None:
        with self.lock:
            self.issues.pop(self._key(repo, number), None)
            self.transferred.add(self._key(repo, number))
            self._touch()

    def rename_repo(self, old: str, new: str) -> None:
        """Rename (or transfer) a repository: its issues, comments and edges move to `new`,
        and requests for `old` are redirected (see `_check_repo`)."""
        with self.lock:
            o, n = old.lower(), new.lower()

            def move(key: tuple[str, int]) -> tuple[str, int]:
                return (n, key[1]) if key[0] == o else key

            for key in [k for k in self.issues if k[0] == o]:
                issue = self.issues.pop(key)
                issue.repo = new
                self.issues[move(key)] = issue
            for c in self.comments.values():
                if c.repo.lower() == o:
                    c.repo = new
            self.deps = {move(k): [move(b) for b in v] for k, v in self.deps.items()}
            self.subs = {move(k): [move(b) for b in v] for k, v in self.subs.items()}
            self.parents = {move(k): move(v) for k, v in self.parents.items()}
            tables: list[dict[str, Any]] = [self.next_number, self.milestones,
                                            self.label_names, self.repo_ids]
            for table in tables:
                if o in table:
                    table[n] = table.pop(o)
            self.repo_id(new)
            self.renamed[o] = new
            self._touch()

    def repo_id(self, repo: str) -> int:
        with self.lock:
            return self.repo_ids.setdefault(repo.lower(), 9000 + len(self.repo_ids))

    def lock_issue(self, repo: str, number: int) -> None:
        with self.lock:
            issue = self.issues[self._key(repo, number)]
            issue.locked = True
            self._touch(issue)

    def set_labels(self, repo: str, number: int, labels: list[str]) -> None:
        with self.lock:
            issue = self.issues[self._key(repo, number)]
            issue.labels = [self._spell(repo, n) for n in labels]
            self._touch(issue)

    def add_comment(self, repo: str, number: int, body: str, user: str) -> int:
        """A comment a person posts (as `user`) on an issue; its id."""
        with self.lock:
            issue = self._find(repo, number)
            t = self.now()
            c = Comment(self.next_comment, issue.repo, number, body, user, t, t)
            self.next_comment += 1
            self.comments[c.id] = c
            issue.comments += 1
            self._touch(issue)
            return c.id

    def _labeled(self, issue: Issue, name: str, user: str) -> None:
        """Record a `labeled` issue event ("List issue events": `labeled-issue-event`)."""
        self.issue_event(issue, "labeled", user, label=name)

    def issue_event(self, issue: Issue, event: str, user: str, **more: Any) -> None:
        """Record an issue event of kind `event` on `issue` (docs "Issue event types")."""
        self.next_event += 1
        self.events.setdefault(self._key(issue.repo, issue.number), []).append(
            {"id": self.next_event, "actor": user, "event": event, "created": self.now(),
             **more})

    def add_label_by(self, repo: str, number: int, label: str, user: str) -> None:
        """A person (`user`) adds a label to an issue."""
        with self.lock:
            issue = self._find(repo, number)
            name = self._spell(repo, label)
            if name not in issue.labels:
                issue.labels.append(name)
                self._labeled(issue, name, user)
            self._touch(issue)

    def _event_json(self, base: str, repo: str, ev: dict[str, Any]) -> dict[str, Any]:
        """One issue event with every field the description requires: a `labeled-issue-event`
        carries its `label`; `connected` / `disconnected` have only the common properties
        (docs "Issue event types")."""
        out = {"id": ev["id"], "node_id": f"IE_{ev['id']}",
               "url": f"{self._api(base, repo)}/issues/events/{ev['id']}",
               "actor": _user(ev["actor"], 500 + len(ev["actor"])), "event": ev["event"],
               "commit_id": None, "commit_url": None, "created_at": iso(ev["created"]),
               "performed_via_github_app": None}
        if ev["event"] == "labeled":
            out["label"] = {"name": ev["label"], "color": "ededed"}
        return out

    def _repo_events(self, base: str, repo: str) -> list[dict[str, Any]]:
        """"List issue events for a repository" (`issue-event` objects, which carry their
        `issue`), newest first (the description gives no order; GitHub's answers are newest
        first)."""
        out = []
        for key, evs in self.events.items():
            if key[0] == repo.lower():
                issue = self.issues[key]
                out += [{**self._event_json(base, repo, ev),
                         "issue": self.issue_json(base, issue)} for ev in evs]
        return sorted(out, key=lambda e: -int(e["id"]))

    def fault(self, status: int = 500, **kw: Any) -> Fault:
        f = Fault(status=status, **kw)
        with self.lock:
            self.faults.append(f)
        return f

    # -- reading state (tests) ------------------------------------------------------------------

    def issue(self, repo: str, number: int) -> Issue:
        return self.issues[self._key(repo, number)]

    def comments_of(self, repo: str, number: int) -> list[Comment]:
        key = self._key(repo, number)
        with self.lock:
            return sorted(
                (c for c in self.comments.values() if (c.repo.lower(), c.number) == key),
                key=lambda c: c.id,
            )

    def requests(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                e
                for e in self.log
                if (method is None or e["method"] == method)
                and (path is None or re.search(path, e["path"]))
            ]

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    # -- JSON shapes ----------------------------------------------------------------------------

    def _api(self, base: str, repo: str) -> str:
        return f"{base}/repos/{repo}"

    def _label(self, base: str, repo: str, name: str) -> dict[str, Any]:
        h = int(hashlib.sha1(name.encode()).hexdigest()[:8], 16)
        return {
            "id": h,
            "node_id": f"LA_{h}",
            "url": f"{self._api(base, repo)}/labels/{quote(name, '')}",
            "name": name,
            "color": "ededed",
            "default": False,
            "description": None,
        }

    def _milestone(self, base: str, repo: str, number: int) -> dict[str, Any]:
        title = self.milestones.get(repo.lower(), {}).get(number, f"m{number}")
        return {
            "url": f"{self._api(base, repo)}/milestones/{number}",
            "html_url": f"https://github.com/{repo}/milestone/{number}",
            "labels_url": f"{self._api(base, repo)}/milestones/{number}/labels",
            "id": number,
            "node_id": f"MI_{number}",
            "number": number,
            "state": "open",
            "title": title,
            "description": None,
            "creator": _user("octocat"),
            "open_issues": 0,
            "closed_issues": 0,
            "created_at": iso(0),
            "updated_at": iso(0),
            "closed_at": None,
            "due_on": None,
        }

    def _spell(self, repo: str, name: str) -> str:
        """A label name as the repository spells it. GitHub label names are case-insensitive: a
        repository holds one label per case-folded name (docs.github.com, "Managing labels":
        creating `Bug` beside `bug` is refused as a duplicate), and adding `DONE` to an issue
        applies the existing `Done` label."""
        known = self.label_names.setdefault(repo.lower(), {})
        return known.setdefault(name.casefold(), name)

    def _open(self, key: tuple[str, int]) -> bool:
        other = self.issues.get(key)
        return other is not None and other.state == "open"

    def issue_json(self, base: str, i: Issue) -> dict[str, Any]:
        api = f"{self._api(base, i.repo)}/issues/{i.number}"
        key = self._key(i.repo, i.number)
        blockers = self.deps.get(key, [])
        blocking = [k for k, v in self.deps.items() if key in v]
        children = self.subs.get(key, [])
        done = sum(1 for c in children if not self._open(c))
        data: dict[str, Any] = {
            "id": i.uid,
            "node_id": f"I_{i.uid}",
            "url": api,
            "repository_url": self._api(base, i.repo),
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": f"https://github.com/{i.repo}/{'pull' if i.pr else 'issues'}/{i.number}",
            "number": i.number,
            "state": i.state,
            "state_reason": i.state_reason,
            "title": i.title,
            "body": i.body,
            "user": {**_user(i.author), "type": i.author_type},
            "labels": [self._label(base, i.repo, n) for n in i.labels],
            "assignee": _user(i.assignees[0]) if i.assignees else None,
            "assignees": [_user(a) for a in i.assignees],
            "milestone": (
                self._milestone(base, i.repo, i.milestone) if i.milestone is not None else None
            ),
            "locked": i.locked,
            "active_lock_reason": "resolved" if i.locked else None,
            "comments": i.comments,
            "closed_at": iso(i.closed) if i.closed else None,
            "created_at": iso(i.created),
            "updated_at": iso(i.updated),
            "author_association": "OWNER",
            "timeline_url": f"{api}/timeline",
            **self._summaries(children, done, blockers, blocking),
        }
        parent = self.parents.get(key)
        if parent is not None:
            data["parent_issue_url"] = (
                f"{self._api(base, self._repo_name(parent))}/issues/{parent[1]}"
            )
        if i.pr:
            data["pull_request"] = {
                "url": f"{self._api(base, i.repo)}/pulls/{i.number}",
                "html_url": f"https://github.com/{i.repo}/pull/{i.number}",
                "diff_url": f"https://github.com/{i.repo}/pull/{i.number}.diff",
                "patch_url": f"https://github.com/{i.repo}/pull/{i.number}.patch",
                "merged_at": self.pulls.merged_at(i.repo, i.number),  # github_pulls.py
            }
        return data

    def _summaries(
        self,
        children: list[tuple[str, int]],
        done: int,
        blockers: list[tuple[str, int]],
        blocking: list[tuple[str, int]],
    ) -> dict[str, Any]:
        """The `sub_issues_summary` and `issue_dependencies_summary` of an issue object (absent
        with `summaries=False`: an older server, or a recording from before they existed)."""
        if not self.summaries:
            return {}
        return {
            "sub_issues_summary": {
                "total": len(children),
                "completed": done,
                "percent_completed": (100 * done // len(children)) if children else 0,
            },
            "issue_dependencies_summary": {
                "blocked_by": sum(1 for b in blockers if self._open(b)),
                "blocking": sum(1 for b in blocking if self._open(b)),
                "total_blocked_by": len(blockers),
                "total_blocking": len(blocking),
            },
        }

    def _repo_name(self, key: tuple[str, int]) -> str:
        issue = self.issues.get(key)
        return issue.repo if issue is not None else key[0]

    def _repo_spelling(self, repo: str) -> str:
        for name in [*self.renamed.values(), *(i.repo for i in self.issues.values())]:
            if name.lower() == repo.lower():
                return name
        return repo

    def repo_json(self, base: str, repo: str) -> dict[str, Any]:
        """A `full-repository` with every field GitHub's description requires (values made up)."""
        owner, name = repo.split("/", 1)
        api, web = self._api(base, repo), f"https://github.com/{repo}"
        rid = self.repo_id(repo)
        urls = {
            f"{k}_url": f"{api}/{k}" + t
            for k, t in [
                ("archive", "/{archive_format}{/ref}"), ("assignees", "{/user}"),
                ("blobs", "/git/blobs{/sha}"), ("branches", "{/branch}"),
                ("collaborators", "{/collaborator}"), ("comments", "{/number}"),
                ("commits", "{/sha}"), ("compare", "/compare/{base}...{head}"),
                ("contents", "/contents/{+path}"), ("contributors", ""),
                ("deployments", ""), ("downloads", ""), ("events", ""), ("forks", ""),
                ("git_commits", "/git/commits{/sha}"), ("git_refs", "/git/refs{/sha}"),
                ("git_tags", "/git/tags{/sha}"), ("hooks", ""),
                ("issue_comment", "/issues/comments{/number}"),
                ("issue_events", "/issues/events{/number}"), ("issues", "{/number}"),
                ("keys", "{/key_id}"), ("labels", "{/name}"), ("languages", ""),
                ("merges", ""), ("milestones", "{/number}"),
                ("notifications", "{?since,all,participating}"), ("pulls", "{/number}"),
                ("releases", "{/id}"), ("stargazers", ""), ("statuses", "/{sha}"),
                ("subscribers", ""), ("tags", ""), ("teams", ""), ("trees", "/git/trees{/sha}"),
            ]
        }
        return {
            **urls,
            "subscription_url": f"{api}/subscription",
            "id": rid, "node_id": f"R_{rid}", "name": name, "full_name": repo,
            "owner": _user(owner), "private": False, "html_url": web, "description": None,
            "fork": False, "url": api, "clone_url": f"{web}.git",
            "git_url": f"git://github.com/{repo}.git", "ssh_url": f"git@github.com:{repo}.git",
            "svn_url": web, "mirror_url": None, "homepage": None, "language": None,
            "forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0,
            "watchers_count": 0, "size": 0, "open_issues": 0,
            "default_branch": self.pulls.default_of(repo),
            "open_issues_count": 0, "has_issues": True, "has_projects": False,
            "has_wiki": False, "has_pages": False, "has_discussions": False,
            "archived": False, "disabled": False, "license": None,
            "pushed_at": iso(0), "created_at": iso(0), "updated_at": iso(0),
            "network_count": 0, "subscribers_count": 0,
        }

    def comment_json(self, base: str, c: Comment) -> dict[str, Any]:
        api = self._api(base, c.repo)
        return {
            "id": c.id,
            "node_id": f"IC_{c.id}",
            "url": f"{api}/issues/comments/{c.id}",
            "html_url": f"https://github.com/{c.repo}/issues/{c.number}#issuecomment-{c.id}",
            "body": c.body,
            "user": _user(c.user),
            "created_at": iso(c.created),
            "updated_at": iso(c.updated),
            "issue_url": f"{api}/issues/{c.number}",
            "author_association": "OWNER",
        }

    # -- routing --------------------------------------------------------------------------------

    def _find(self, repo: str, number: int) -> Issue:
        key = self._key(repo, number)
        if repo.lower() in self.forbidden:
            raise Reply(403, {"message": "Resource not accessible by personal access token"})
        if key in self.deleted:
            raise Reply(410, {"message": "This issue was deleted"})
        if key in self.transferred:
            raise Reply(
                301,
                {"message": "Moved Permanently"},
                {"Location": f"/repos/elsewhere/moved/issues/{number}"},
            )
        issue = self.issues.get(key)
        if issue is None:
            raise Reply(404, {"message": "Not Found"})
        return issue

    def _check_repo(self, repo: str, rest: str = "", base: str = "") -> None:
        new = self.renamed.get(repo.lower())
        if new is not None:
            # GitHub's description answers `301 Moved Permanently` (the `moved_permanently`
            # response) for every repository operation of a renamed or transferred repository;
            # the Location is the repository's id-based URL, `/repositories/{id}/...`
            where = f"{base}/repositories/{self.repo_id(new)}" + (f"/{rest}" if rest else "")
            raise Reply(
                301,
                {"message": "Moved Permanently", "url": where,
                 "documentation_url": "https://docs.github.com/rest/guides/best-practices-for-"
                 "using-the-rest-api#follow-redirects"},
                {"Location": where},
            )
        if repo.lower() in self.forbidden:
            raise Reply(403, {"message": "Resource not accessible by personal access token"})
        if repo.lower() not in self.next_number:
            raise Reply(404, {"message": "Not Found"})

    def _filtered(self, repo: str, q: dict[str, str]) -> list[Issue]:
        key = (
            self.version,
            repo.lower(),
            tuple(sorted((k, v) for k, v in q.items() if k not in ("page", "per_page"))),
        )
        hit = self._list_cache.get(key)
        if hit is not None:
            return hit
        state = q.get("state", "open")
        want = {x.casefold() for x in q.get("labels", "").split(",") if x}
        ms = q.get("milestone")
        who = q.get("assignee")
        # `since`: "Only show results that were last updated after the given time ... ISO 8601
        # format: YYYY-MM-DDTHH:MM:SSZ" ("List repository issues", fixtures/github/openapi);
        # updated_at is kept to the second, and an issue updated in that very second is listed
        # (the timestamp it shows is not before `since`)
        since = _parse_iso(q["since"]) if q.get("since") else None
        out = []
        for i in self.issues.values():
            if i.repo.lower() != repo.lower() or (state != "all" and i.state != state):
                continue
            if since is not None and int(i.updated) < since:
                continue
            if want and not want <= {n.casefold() for n in i.labels}:
                continue
            if ms == "none" and i.milestone is not None:
                continue
            if ms == "*" and i.milestone is None:
                continue
            if ms and ms.isdigit() and i.milestone != int(ms):
                continue
            if who == "none" and i.assignees:
                continue
            if who == "*" and not i.assignees:
                continue
            if who and who not in ("none", "*") and who not in i.assignees:
                continue
            out.append(i)
        sort = q.get("sort", "created")
        out.sort(
            key=lambda i: (i.updated if sort == "updated" else i.created, i.number),
            reverse=q.get("direction", "desc") == "desc",
        )
        if len(self._list_cache) > 64:
            self._list_cache.clear()
        self._list_cache[key] = out
        return out

    def _page(
        self, items: list[Any], q: dict[str, str], base_url: str, path: str
    ) -> tuple[list[Any], dict[str, str]]:
        per = max(1, min(100, int(q.get("per_page", "30"))))
        page = max(1, int(q.get("page", "1")))
        last = max(1, -(-len(items) // per))
        chunk = items[(page - 1) * per : page * per]
        rels = []
        rest = {k: v for k, v in q.items() if k != "page"}

        def link(p: int, rel: str) -> str:
            query = "&".join(
                f"{k}={quote(v, safe=',*')}" for k, v in sorted({**rest, "page": str(p)}.items())
            )
            return f'<{base_url}{path}?{query}>; rel="{rel}"'

        if page < last:
            rels += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            rels += [link(1, "first"), link(page - 1, "prev")]
        return chunk, ({"Link": ", ".join(rels)} if rels else {})

    def add_app(self, app_id: int, public_key_pem: str, installation_id: int = 77) -> None:
        """A GitHub App installed on every repository, whose JWTs verify with this key."""
        with self.lock:
            self.apps[app_id] = (public_key_pem, installation_id)

    def _app_of(self, token: str | None) -> int:
        """The App a JWT is signed by. GitHub: the JWT is RS256-signed with the App's private
        key, `iss` is the App (client) id, `iat`/`exp` at most 10 minutes apart ("Generating a
        JSON Web Token (JWT) for a GitHub App")."""
        import jwt

        try:
            claims = jwt.decode(token or "", options={"verify_signature": False})
            key, _ = self.apps[int(claims["iss"])]
            checked = jwt.decode(token or "", key, algorithms=["RS256"], leeway=60,
                                 options={"require": ["iat", "exp", "iss"]})
        except (jwt.PyJWTError, KeyError, ValueError, TypeError):
            raise Reply(401, {"message": "A JSON web token could not be decoded"}) from None
        if checked["exp"] - checked["iat"] > 660:
            raise Reply(401, {"message": "'Expiration time' claim ('exp') is too far ahead"})
        return int(checked["iss"])

    def _app_route(
        self, method: str, path: str, token: str | None, base: str
    ) -> tuple[int, Any, dict[str, str]] | None:
        """`GET /repos/{owner}/{repo}/installation`, `POST /app/installations/{id}/
        access_tokens` and `GET /app` ("Get the authenticated app": "You must use a JWT to
        access this endpoint") (JWT auth); None for any other path."""
        if path == "/app" and method == "GET":
            app = self._app_of(token)
            return 200, {"id": app, "slug": self.app_slug, "client_id": f"Iv1.{app}",
                         "node_id": f"A_{app}", "owner": _user("o"), "name": "jr2 app",
                         "description": "", "external_url": "https://example.com",
                         "html_url": f"https://github.com/apps/{self.app_slug}",
                         "created_at": iso(0), "updated_at": iso(0),
                         "permissions": {"issues": "write", "metadata": "read"},
                         "events": ["issues"]}, {}
        m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        if m is not None and method == "POST":
            app = self._app_of(token)
            if int(m.group(1)) != self.apps[app][1]:
                raise Reply(404, {"message": "Not Found"})
            issued = f"ghs_{hashlib.sha1(f'{app}:{len(self.app_tokens)}'.encode()).hexdigest()}"
            expires = self.now() + self.token_ttl
            self.app_tokens[issued] = expires
            return 201, {"token": issued, "expires_at": iso(expires),
                         "permissions": {"issues": "write", "metadata": "read"},
                         "repository_selection": "all"}, {}
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/installation", path)
        if m is not None and method == "GET":
            app = self._app_of(token)
            inst = self.apps[app][1]
            owner = m.group(1).split("/")[0]
            return 200, {
                "id": inst, "account": _user(owner), "repository_selection": "all",
                "access_tokens_url": f"{base}/app/installations/{inst}/access_tokens",
                "repositories_url": f"{base}/installation/repositories",
                "html_url": f"https://github.com/settings/installations/{inst}",
                "app_id": app, "target_id": 1, "target_type": "User",
                "permissions": {"issues": "write", "metadata": "read"}, "events": ["issues"],
                "created_at": iso(0), "updated_at": iso(0), "single_file_name": None,
                "app_slug": self.app_slug, "suspended_by": None, "suspended_at": None,
            }, {}
        return None

    def route(
        self, method: str, path: str, q: dict[str, str], body: Any, token: str | None, base: str
    ) -> tuple[int, Any, dict[str, str]]:
        for hook in list(self.hooks):
            hook(method, path)
        if self.apps:
            app_answer = self._app_route(method, path, token, base)
            if app_answer is not None:
                return app_answer
            if token in self.app_tokens and self.app_tokens[token] <= self.now():
                raise Reply(401, {"message": "Bad credentials"})  # an expired installation token
            if token and token.startswith("eyJ"):  # a JWT works on App endpoints only
                raise Reply(401, {"message": "A JSON web token could not be decoded"})
        # pull requests, checks and GraphQL (github_pulls.py): jr2 sends only `POST /graphql`;
        # the REST routes there are what a worker (an agent with `gh`) sends, cited to GitHub's
        # REST docs, outside the vendored subset of the operations jr2 sends
        answer = self.pulls.route(method, path, body, base)
        if answer is not None:
            return answer
        if path.startswith("/repos/") and not any(
            m == method and p.match(path) for m, p in self.operations
        ):
            raise Reply(404, {"message": "Not Found"})  # not an endpoint of this server
        if method != "GET" and token in self.read_only_tokens:
            raise Reply(403, {"message": "Resource not accessible by personal access token"})
        if path == "/user" and method == "GET":
            if _app_token(token):
                # "Get the authenticated user" works for user tokens only; an installation
                # token (ghs_) is refused: 403 "Resource not accessible by integration"
                raise Reply(403, {"message": "Resource not accessible by integration"})
            who = self.who(token)
            return 200, _public_user(who, 7 if who == self.login else 500 + len(who)), {}
        m = re.fullmatch(r"/repositories/(\d+)(?:/(.*))?", path)
        if m is not None:  # where a redirect points: the repository by id, under its name now
            names = [r for r, i in self.repo_ids.items() if i == int(m.group(1))]
            if not names or names[0] in self.renamed:
                raise Reply(404, {"message": "Not Found"})
            path = f"/repos/{self._repo_spelling(names[0])}" + (
                f"/{m.group(2)}" if m.group(2) else "")
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(?:/(.*))?", path)
        if m is None:
            raise Reply(404, {"message": "Not Found"})
        repo, rest = m.group(1), m.group(2) or ""
        self._check_repo(repo, rest, base)
        if rest == "" and method == "GET":
            return 200, self.repo_json(base, self._repo_spelling(repo)), {}
        if rest == "issues" and method == "GET":
            chunk, headers = self._page(self._filtered(repo, q), q, base, path)
            return 200, [self.issue_json(base, i) for i in chunk], headers
        if rest == "issues/events" and method == "GET":  # "List issue events for a repository"
            chunk, headers = self._page(self._repo_events(base, repo), q, base, path)
            return 200, chunk, headers
        if rest == "milestones" and method == "GET":
            ms = sorted(self.milestones.get(repo.lower(), {}))
            chunk, headers = self._page(ms, q, base, path)
            return 200, [self._milestone(base, repo, n) for n in chunk], headers
        m = re.fullmatch(r"issues/comments/(\d+)", rest)
        if m is not None:
            return self._comment_route(method, repo, int(m.group(1)), body, base)
        m = re.fullmatch(r"collaborators/([^/]+)/permission", rest)
        if m is not None and method == "GET":
            return self._permission(unquote(m.group(1)))
        m = re.fullmatch(r"issues/(\d+)(?:/(.*))?", rest)
        if m is None:
            raise Reply(404, {"message": "Not Found"})
        number, sub = int(m.group(1)), m.group(2) or ""
        issue = self._find(repo, number)
        if sub == "" and method == "GET":
            return 200, self.issue_json(base, issue), {}
        if sub == "" and method == "PATCH":
            if "state" in body:
                issue.state = body["state"]
                issue.closed = self.now() if issue.state == "closed" else None
                issue.state_reason = body.get("state_reason") or (
                    "completed" if issue.state == "closed" else "reopened"
                )
            for k in ("title", "body"):
                if k in body:
                    setattr(issue, k, body[k])
            if "labels" in body:  # "Update an issue": `labels` replaces the issue's labels
                issue.labels = [self._spell(repo, n) for n in body["labels"]]
            self._touch(issue)
            return 200, self.issue_json(base, issue), {}
        if sub == "events" and method == "GET":  # "List issue events" (labeled events only)
            evs = [self._event_json(base, repo, ev)
                   for ev in self.events.get(self._key(repo, number), [])]
            chunk, headers = self._page(evs, q, base, path)
            return 200, chunk, headers
        if sub == "labels" and method == "POST":
            for name in body.get("labels", []):
                name = self._spell(repo, name)
                if name not in issue.labels:
                    issue.labels.append(name)
                    self._labeled(issue, name, self.who(token))
            self._touch(issue)
            return 200, [self._label(base, repo, n) for n in issue.labels], {}
        if sub.startswith("labels/") and method == "DELETE":
            name = self._spell(repo, unquote(sub[len("labels/") :]))
            if name not in issue.labels:
                raise Reply(404, {"message": "Label does not exist"})
            issue.labels.remove(name)
            self._touch(issue)
            return 200, [self._label(base, repo, n) for n in issue.labels], {}
        if sub == "assignees" and method == "POST":
            for who in body.get("assignees", []):
                if who not in issue.assignees:
                    issue.assignees.append(who)
            self._touch(issue)
            return 201, self.issue_json(base, issue), {}
        if sub == "comments" and method == "GET":
            mine = [self.comment_json(base, c) for c in self.comments_of(repo, number)]
            chunk, headers = self._page(mine, q, base, path)
            return 200, chunk, headers
        if sub == "comments" and method == "POST":
            if issue.locked and _app_token(token):
                # "Create an issue comment": 403 Forbidden; a locked issue accepts comments
                # from collaborators only, never from an App or Actions token
                raise Reply(403, {"message": "Unable to create comment because issue is locked."})
            text = _comment_body(body, "")
            t = self.now()
            c = Comment(
                self.next_comment, issue.repo, number, text,
                self.who(token), t, t,
            )
            self.next_comment += 1
            self.comments[c.id] = c
            issue.comments += 1
            self._touch(issue)
            return 201, self.comment_json(base, c), {}
        if sub == "dependencies/blocked_by" and method == "GET":
            found = [
                self.issues[k]
                for k in self.deps.get(self._key(repo, number), [])
                if k in self.issues
            ]
            chunk, headers = self._page(found, q, base, path)
            return 200, [self.issue_json(base, i) for i in chunk], headers
        if sub == "dependencies/blocking" and method == "GET":
            # "List dependencies an issue is blocking" (api.github.com, GHES 3.19): the issues
            # this one blocks, as issue objects
            key = self._key(repo, number)
            found = [self.issues[k] for k, v in sorted(self.deps.items())
                     if key in v and k in self.issues]
            chunk, headers = self._page(found, q, base, path)
            return 200, [self.issue_json(base, i) for i in chunk], headers
        if sub == "sub_issues" and method == "GET":
            found = [
                self.issues[k]
                for k in self.subs.get(self._key(repo, number), [])
                if k in self.issues
            ]
            chunk, headers = self._page(found, q, base, path)
            return 200, [self.issue_json(base, i) for i in chunk], headers
        raise Reply(404, {"message": "Not Found"})

    def _comment_route(
        self, method: str, repo: str, cid: int, body: Any, base: str
    ) -> tuple[int, Any, dict[str, str]]:
        c = self.comments.get(cid)
        if c is None or c.repo.lower() != repo.lower():
            raise Reply(404, {"message": "Not Found"})
        if method == "GET":
            return 200, self.comment_json(base, c), {}
        if method == "PATCH":
            c.body = _comment_body(body, c.body)
            c.updated = self.now()
            self._touch()
            return 200, self.comment_json(base, c), {}
        if method == "DELETE":
            del self.comments[cid]
            issue = self.issues.get(self._key(c.repo, c.number))
            if issue is not None:
                issue.comments -= 1
                self._touch(issue)
            return 204, None, {}
        raise Reply(404, {"message": "Not Found"})

    def _permission(self, login: str) -> tuple[int, Any, dict[str, str]]:
        """"Get repository permissions for a user": `permission` is the legacy base role
        (maintain reads as write, triage as read), `role_name` the role, `user` a
        `nullable-collaborator`; 404 for a user who is no collaborator."""
        role = self.permissions.get(login.lower())
        if role is None:
            raise Reply(404, {"message": "Not Found"})
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        ranks = ["read", "triage", "write", "maintain", "admin"]
        have = ranks.index(role) if role in ranks else -1
        perms = {k: have >= ranks.index(k) for k in ("triage", "maintain", "admin")}
        perms.update(pull=have >= 0, push=have >= ranks.index("write"))
        user = {**_user(login), "permissions": perms, "role_name": role}
        return 200, {"permission": legacy, "role_name": role, "user": user}, {}

    # -- control endpoint -----------------------------------------------------------------------

    def control(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/_fake/log":
            with self.lock:
                return 200, list(self.log)
        if path == "/_fake/faults" and method == "POST":
            self.fault(**body)
            return 201, {"ok": True}
        if path == "/_fake/check" and method == "POST":  # a check run on a commit (github_pulls)
            self.pulls.add_check(str(body["repo"]), str(body["sha"]),
                                 name=str(body.get("name") or "ci"),
                                 conclusion=body.get("conclusion", "success"),
                                 summary=body.get("summary"))
            return 201, {"ok": True}
        if path == "/_fake/push" and method == "POST":  # a push to a PR's head (github_pulls)
            sha = self.pulls.push(str(body["repo"]), int(body["number"]))
            return 201, {"sha": sha}
        if path == "/_fake/clock" and method == "POST":
            self.advance(float(body.get("advance", 0)))
            return 200, {"now": self.now()}
        return 404, {"message": "no such control endpoint"}

    # -- serving --------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05}, daemon=True, name="fake-github"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # headers and body leave in one segment (flushed per request)
    disable_nagle_algorithm = True
    server_fake: FakeGitHub

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The `Date` header `send_response` adds: the fake's clock."""
        return email.utils.formatdate(self.server_fake.now(), usegmt=True)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _send(
        self, status: int, data: Any, headers: dict[str, str], *, truncate: bool = False
    ) -> None:
        raw = b"" if data is None or status in (204, 304) else json.dumps(data).encode()
        if truncate and raw:
            raw = raw[: max(1, len(raw) // 2)]
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if raw or status not in (204, 304):
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        if raw:
            self.wfile.write(raw)

    def _handle(self, method: str) -> None:
        fake = self.server_fake
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        q = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self._send(400, {"message": "Problems parsing JSON"}, {})
            return
        if path.startswith("/_fake/"):
            status, data = fake.control(method, path, body)
            self._send(status, data, {})
            return
        fault = None
        with fake.lock:
            for f in fake.faults:
                if f.times > 0 and f.matches(method, path):
                    f.times -= 1
                    fault = f
                    break
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay)
        if fault is not None and fault.kind == "reset":
            self._log(method, path, parts.query, 0, body)
            self.close_connection = True
            return
        if fault is not None and fault.kind == "status":
            headers = dict(fault.headers)
            if fault.retry_after is not None:
                headers["Retry-After"] = str(int(fault.retry_after))
            self._log(method, path, parts.query, fault.status, body)
            self._send(fault.status, {"message": fault.message}, headers)
            return
        auth = self.headers.get("Authorization") or ""
        token = auth.split(" ", 1)[1] if " " in auth else None
        base = f"http://{self.headers.get('Host')}"
        with fake.lock:
            if fake.tokens is not None and token not in fake.tokens:
                status, data, headers = 401, {"message": "Bad credentials"}, {}
            else:
                try:
                    status, data, headers = fake.route(method, path, q, body, token, base)
                except Reply as r:
                    status, data, headers = r.status, r.data, r.headers
            etag = None
            if method == "GET" and status == 200:
                etag = (
                    'W/"'
                    + hashlib.sha1(
                        json.dumps(data, sort_keys=True).encode() + headers.get("Link", "").encode()
                    ).hexdigest()
                    + '"'
                )
                if etag in [
                    t.strip() for t in (self.headers.get("If-None-Match") or "").split(",")
                ]:
                    status, data = 304, None
            if status != 304:
                fake.rate_used += 1
            now = fake.now()
            headers = {
                **headers,
                "Date": email.utils.formatdate(now, usegmt=True),
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": str(max(0, 5000 - fake.rate_used)),
                "x-ratelimit-used": str(fake.rate_used),
                "x-ratelimit-reset": str(int(now) + 3600),
                "x-ratelimit-resource": "core",
            }
            if etag is not None:
                headers["ETag"] = etag
            self._log(method, path, parts.query, status, body, data)
        self._send(status, data, headers, truncate=fault is not None and fault.kind == "truncate")

    def _log(
        self, method: str, path: str, query: str, status: int, body: Any, data: Any = None
    ) -> None:
        fake = self.server_fake
        holder = kind = None
        text = body.get("body") if isinstance(body, dict) else None
        if isinstance(text, str):
            m = _MARKER.search(text)
            if m is not None:
                kind = m.group(1)
                try:
                    holder = json.loads(m.group(2)).get("holder")
                except ValueError:
                    holder = None
        auth = self.headers.get("Authorization") or ""
        entry = {
            "method": method,
            "path": path,
            "query": query,
            "status": status,
            "t": fake.now(),
            "holder": holder,
            "marker": kind,
            # which client sent it (a digest of its token, never the token): tells apart the
            # requests of processes that share this server
            "client": hashlib.sha256(auth.encode()).hexdigest()[:8] if auth else None,
        }
        if fake.capture:
            entry["body"] = body if self.headers.get("Content-Length") else None
            entry["data"] = data
        with fake.lock:
            fake.log.append(entry)


def seed(
    fake: FakeGitHub,
    repo: str,
    issues: int,
    *,
    deps: int = 0,
    prs: int = 0,
    labels: tuple[str, ...] = (),
    rng_seed: int = 1,
) -> None:
    """`issues` open issues (and `prs` pull requests) in `repo`, with `deps` random
    dependency edges from later to earlier issues (so no cycles)."""
    rng = random.Random(rng_seed)
    start = fake.now() - 86400  # a backlog that was there before: written a day ago
    for i in range(issues):
        fake.add_issue(repo, labels=list(labels), created=start + i)
    for i in range(prs):
        fake.add_issue(repo, pr=True, created=start + issues + i)
    added: set[tuple[int, int]] = set()
    while len(added) < min(deps, issues * (issues - 1) // 2):
        a, b = sorted(rng.sample(range(1, issues + 1), 2))
        if (b, a) not in added:
            added.add((b, a))
            fake.add_dependency(repo, b, a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--repo", default="o/r")
    ap.add_argument("--issues", type=int, default=0)
    ap.add_argument("--deps", type=int, default=0)
    ap.add_argument("--prs", type=int, default=0)
    args = ap.parse_args()
    fake = FakeGitHub(port=args.port)
    fake.next_number.setdefault(args.repo.lower(), 1)
    seed(fake, args.repo, args.issues, deps=args.deps, prs=args.prs)
    fake.start()
    print(fake.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
