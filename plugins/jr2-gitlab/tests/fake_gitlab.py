"""A small stateful fake of the GitLab REST v4 endpoints jr2-gitlab uses, on 127.0.0.1.

Shapes follow GitLab's documented objects (issue, issue link, note) with documented fields
only. `blocking_issues_count` counts the OPEN issues an issue blocks (as GitLab computes it);
a links list shows a `blocks` link as `is_blocked_by` from the other side; notes have growing
ids and millisecond server times; `remove_labels` of an absent label is not an error; unknown
projects answer 404, forbidden ones 403. One lock serialises requests. The clock is
`time.time() + offset` (`advance()` moves it), used for times and the `Date` header. `requests`
logs (method, path, query); `writes()` counts mutating requests; `fault()` queues an HTTP error.

`POST /api/graphql` answers the one query the reader sends (read from its `variables`:
`fullPath`, `iids`): `project.workItems.nodes[]` with `iid` and `widgets`, the
`WorkItemWidgetHierarchy` one carrying `hasChildren` and `children.nodes[]` (`iid`, `state`
`OPEN`/`CLOSED`, `webUrl`) at most 100 a page with `pageInfo {hasNextPage endCursor}` (the
`after` variable continues), as in GitLab's GraphQL reference (connections, max page size
100); other widgets answer `{}` (an
inline fragment that does not match selects nothing). `set_parent()` files a child under a
parent; `graphql_error` answers a GraphQL error; `graphql = False` makes the endpoint answer
404 (an instance without it). A GraphQL query is not a write.

Members (the dashboard's author check, who may answer a gate):
`GET /projects/:id/members/all/:user_id` answers the
shape of "Get a member of a group or project, including inherited and invited members"
(fixtures/gitlab/api/member_all.json, GitLab's doc/api/members.md) with the user's
`access_level`, or 404 for a non-member. `add_user()` makes a user with a role (None: not a
member); an issue's `author` is the user `add_issue(author=...)` names (default: jr2-bot, a
Maintainer). `PUT .../issues/:iid` takes `description` ("Edit an issue"), "Limited to 1,048,576
characters" (doc/api/issues.md): a longer one answers 400 with the message of a failed model
validation (`{"message": {"description": ["is too long (maximum is 1048576 characters)"]}}`).

Label events: every label added or removed (by jr2's `PUT ... add_labels/remove_labels`, as
jr2-bot, or by a person's `set_labels(..., by=NAME)`) is recorded, and `GET /projects/:id/
issues/:iid/resource_label_events` answers them oldest first, paged, in the shape of "List
project issue label events" (fixtures/gitlab/api/resource_label_events.json, GitLab's
doc/api/resource_label_events.md): `id`, `user`, `created_at`, `resource_type` "Issue",
`resource_id`, `label` {id, name, color, description}, `action` "add" | "remove".
"""

from __future__ import annotations

import email.utils
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

TOKEN = "glpat-fake-token-0123456789"
DESCRIPTION_LIMIT = 1_048_576  # doc/api/issues.md: `description` "Limited to 1,048,576 characters"
_USER: dict[str, Any] = {"id": 1, "username": "jr2-bot", "name": "jr2 bot", "state": "active",
         "avatar_url": None, "web_url": "http://gitlab.example/jr2-bot"}


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


@dataclass
class Fault:
    status: int
    times: int = 1
    method: str | None = None
    path: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeGitLab:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.lock = threading.RLock()
        self.offset = 0.0
        self.projects: dict[str, dict[str, Any]] = {}
        self.forbidden: set[str] = set()
        self.links: list[tuple[str, int, str, int]] = []  # (blocker proj, iid, blocked proj, iid)
        self.relates: list[tuple[str, int, str, int]] = []
        self.parents: dict[tuple[str, int], tuple[str, int]] = {}  # child -> parent
        self.graphql = True
        self.graphql_error: str | None = None  # answer `{"errors": [{"message": ...}]}`
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.faults: list[Fault] = []
        self._ids = {"project": 0, "issue": 100, "note": 1000, "link": 0, "user": 1,
                     "label_event": 140}
        self.users: dict[str, dict[str, Any]] = {"jr2-bot": dict(_USER)}
        self.levels: dict[int, int] = {_USER["id"]: 40}  # user id -> access_level (members)
        self.server: ThreadingHTTPServer | None = None

    # -- setup ----------------------------------------------------------------------------------

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    def _next(self, kind: str) -> int:
        self._ids[kind] += 1
        return self._ids[kind]

    def add_user(self, username: str, level: int | None) -> dict[str, Any]:
        """A user, a project member with `access_level` `level` (None: not a member)."""
        with self.lock:
            uid = self._next("user")
            self.users[username] = {**_USER, "id": uid, "username": username, "name": username,
                                    "web_url": f"http://gitlab.example/{username}"}
            if level is not None:
                self.levels[uid] = level
            return self.users[username]

    def project(self, path: str) -> dict[str, Any]:
        with self.lock:
            if path not in self.projects:
                self.projects[path] = {"id": self._next("project"), "issues": {}, "next": 0}
            return self.projects[path]

    def add_issue(self, path: str, title: str, *, labels: list[str] | None = None,
                  description: str = "", state: str = "opened",
                  author: str = "jr2-bot") -> int:
        with self.lock:
            proj = self.project(path)
            proj["next"] += 1
            iid = proj["next"]
            t = self.now()
            proj["issues"][iid] = {
                "id": self._next("issue"), "iid": iid, "project_id": proj["id"], "title": title,
                "description": description, "state": state, "labels": list(labels or []),
                "assignees": [], "created": t, "updated": t, "notes": [],
                "author": author, "label_events": []}
            return iid

    def _label_events(self, issue: dict[str, Any], before: list[str], user: dict[str, Any]
                      ) -> None:
        """Record the labels added to and removed from `issue` since `before`, by `user`."""
        now = list(issue["labels"])
        changes = [(x, "add") for x in now if x not in before] + [
            (x, "remove") for x in before if x not in now]
        for name, action in changes:
            issue["label_events"].append({
                "id": self._next("label_event"), "user": dict(user),
                "created_at": iso(self.now()), "resource_type": "Issue",
                "resource_id": issue["id"],
                "label": {"id": sum(name.encode()) + 1, "name": name, "color": "#428BCA",
                          "description": ""},
                "action": action})

    def issue(self, path: str, iid: int) -> dict[str, Any]:
        issue: dict[str, Any] = self.projects[path]["issues"][iid]
        return issue

    def _user(self, username: str) -> dict[str, Any]:
        """The user named `username` (made on first mention, a member only through
        `add_user`)."""
        with self.lock:
            return self.users.get(username) or self.add_user(username, None)

    def add_note(self, path: str, iid: int, body: str, username: str) -> int:
        """A note a person (`username`) posts on an issue; its id."""
        with self.lock:
            issue = self.issue(path, iid)
            t = self.now()
            n = {"id": self._next("note"), "body": body, "created": t, "updated": t,
                 "system": False, "noteable_id": issue["id"], "author": self._user(username)}
            issue["notes"].append(n)
            return int(n["id"])

    def block(self, blocker: tuple[str, int], blocked: tuple[str, int]) -> None:
        """Link two issues. GitLab writes a system note on both, which touches them."""
        with self.lock:
            self.links.append((blocker[0], blocker[1], blocked[0], blocked[1]))
            for path, iid in (blocker, blocked):
                if iid in self.projects.get(path, {}).get("issues", {}):
                    self.issue(path, iid)["updated"] = self.now()

    def set_parent(self, child: tuple[str, int], parent: tuple[str, int]) -> None:
        with self.lock:
            self.parents[child] = parent

    def close_issue(self, path: str, iid: int) -> None:
        with self.lock:
            self.issue(path, iid)["state"] = "closed"
            self.issue(path, iid)["updated"] = self.now()

    def set_labels(self, path: str, iid: int, labels: list[str], by: str = "someone") -> None:
        """A person (`by`) sets an issue's labels."""
        with self.lock:
            issue = self.issue(path, iid)
            before, issue["labels"] = issue["labels"], list(labels)
            issue["updated"] = self.now()
            self._label_events(issue, before, self._user(by))

    def move_issue(self, path: str, iid: int, to: str) -> int:
        """A person moves an issue to project `to` ("Move an issue", doc/api/issues.md: "the
        original issue is closed"; the issue object's `moved_to_id` names the new one). Its
        issue links move to the new issue: GitLab's `Issues::MoveService` rewrites them
        (`rewrite_related_issues`, `IssueLink...update_all(source_id/target_id: new.id)`),
        which touches neither linked issue. The new issue's iid."""
        with self.lock:
            old = self.issue(path, iid)
            new_iid = self.add_issue(to, old["title"], labels=old["labels"],
                                     description=old["description"])
            old["state"], old["moved_to_id"] = "closed", self.issue(to, new_iid)["id"]
            old["updated"] = self.now()
            self.links = [(to if (bp, bi) == (path, iid) else bp,
                           new_iid if (bp, bi) == (path, iid) else bi,
                           to if (tp, ti) == (path, iid) else tp,
                           new_iid if (tp, ti) == (path, iid) else ti)
                          for bp, bi, tp, ti in self.links]
            return new_iid

    def delete_issue(self, path: str, iid: int) -> None:
        with self.lock:
            del self.projects[path]["issues"][iid]

    def fault(self, status: int, *, times: int = 1, method: str | None = None,
              path: str | None = None, headers: dict[str, str] | None = None) -> None:
        with self.lock:
            self.faults.append(Fault(status, times, method, path, dict(headers or {})))

    def writes(self) -> int:
        return sum(1 for m, p, _ in self.requests if m != "GET" and p != "/api/graphql")

    # -- shapes ---------------------------------------------------------------------------------

    def _web(self, path: str, iid: int) -> str:
        return f"http://gitlab.example/{path}/-/issues/{iid}"

    def _issue_json(self, path: str, i: dict[str, Any]) -> dict[str, Any]:
        blocking = sum(1 for bp, bi, tp, ti in self.links
                       if (bp, bi) == (path, i["iid"]) and tp in self.projects
                       and self.projects[tp]["issues"].get(ti, {}).get("state") == "opened")
        checks = re.findall(r"^\s*[-*] \[([ xX])\]", i["description"] or "", re.M)
        return {
            "id": i["id"], "iid": i["iid"], "project_id": i["project_id"], "title": i["title"],
            "description": i["description"], "state": i["state"],
            "created_at": iso(i["created"]), "updated_at": iso(i["updated"]),
            "closed_at": None, "labels": list(i["labels"]), "milestone": None,
            "moved_to_id": i.get("moved_to_id"),
            "assignees": list(i["assignees"]), "assignee": (i["assignees"] or [None])[0],
            "author": self.users[i.get("author", "jr2-bot")], "type": "ISSUE",
            "issue_type": "issue",
            "user_notes_count": len(i["notes"]), "confidential": False, "due_date": None,
            "web_url": self._web(path, i["iid"]), "blocking_issues_count": blocking,
            "references": {"short": f"#{i['iid']}", "relative": f"#{i['iid']}",
                           "full": f"{path}#{i['iid']}"},
            "task_completion_status": {"count": len(checks),
                                       "completed_count": sum(c != " " for c in checks)},
        }

    def _link_json(self, path: str, i: dict[str, Any], kind: str) -> dict[str, Any]:
        out = self._issue_json(path, i)
        for k in ("references", "task_completion_status", "blocking_issues_count", "type",
                  "issue_type", "closed_at", "moved_to_id"):
            out.pop(k, None)
        self._ids["link"] += 1
        out.update({"issue_link_id": self._ids["link"], "link_type": kind, "weight": None,
                    "link_created_at": iso(i["created"]), "link_updated_at": iso(i["created"])})
        return out

    def _note_json(self, n: dict[str, Any], iid: int) -> dict[str, Any]:
        return {"id": n["id"], "type": None, "body": n["body"], "attachment": None,
                "author": n.get("author", _USER), "created_at": iso(n["created"]),
                "updated_at": iso(n["updated"]),
                "system": n["system"], "noteable_id": n["noteable_id"], "noteable_type": "Issue",
                "noteable_iid": iid, "resolvable": False, "confidential": False,
                "internal": False}

    # -- routing --------------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, query: dict[str, list[str]],
               body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.requests.append((method, raw_path, query))
            for f in self.faults:
                if f.times > 0 and (f.method in (None, method)) and (
                        f.path is None or re.search(f.path, raw_path)):
                    f.times -= 1
                    return f.status, {"message": f"{f.status} injected"}, f.headers
            if headers.get("private-token") != self.token:
                return 401, {"message": "401 Unauthorized"}, {}
            if raw_path == "/api/graphql":
                if not self.graphql:
                    return 404, {"message": "404 Not Found"}, {}
                if method != "POST":
                    return 404, {"error": "404 Not Found"}, {}
                return self._graphql(body)
            parts = [unquote(p) for p in raw_path.split("/") if p]
            if parts == ["api", "v4", "user"] and method == "GET":  # "Get the current user"
                return 200, _USER, {}
            if parts[:2] != ["api", "v4"] or len(parts) < 5 or parts[2] != "projects":
                return 404, {"error": "404 Not Found"}, {}
            path = parts[3]
            if path in self.forbidden:
                return 403, {"message": "403 Forbidden"}, {}
            proj = self.projects.get(path)
            if proj is None:
                return 404, {"message": "404 Project Not Found"}, {}
            rest = parts[4:]
            q = {k: v[-1] for k, v in query.items()}
            if rest == ["issues"] and method == "GET":
                return self._list(path, proj, q)
            if rest[:2] == ["members", "all"] and len(rest) == 3 and method == "GET":
                return self._member(rest[2])
            if len(rest) < 2 or rest[0] != "issues" or not rest[1].isdigit():
                return 404, {"error": "404 Not Found"}, {}
            issue = proj["issues"].get(int(rest[1]))
            if issue is None:
                return 404, {"message": "404 Not found"}, {}
            return self._on_issue(path, issue, method, rest[2:], q, body)

    def _member(self, raw: str) -> tuple[int, Any, dict[str, str]]:
        user = next((u for u in self.users.values() if str(u["id"]) == raw), None)
        if user is None or user["id"] not in self.levels:
            return 404, {"message": "404 Not found"}, {}
        return 200, {**{k: user[k] for k in ("id", "username", "name", "state", "avatar_url",
                                             "web_url")},
                     "access_level": self.levels[user["id"]], "expires_at": None}, {}

    def _graphql(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if self.graphql_error:
            return 200, {"errors": [{"message": self.graphql_error}]}, {}
        variables = body.get("variables") or {}
        path = str(variables.get("fullPath") or "")
        if "workItems" not in str(body.get("query") or "") or not path:
            return 200, {"errors": [{"message": "unsupported query"}]}, {}
        proj = self.projects.get(path)
        if proj is None or path in self.forbidden:
            return 200, {"data": {"project": None}}, {}
        nodes = []
        for raw in variables.get("iids") or []:
            issue = proj["issues"].get(int(raw))
            if issue is None:
                continue
            kids = []
            for (cp, ci), parent in sorted(self.parents.items()):
                if parent == (path, issue["iid"]) and cp not in self.forbidden:
                    child = self.projects[cp]["issues"][ci]
                    kids.append({"iid": str(ci), "webUrl": self._web(cp, ci),
                                 "state": "OPEN" if child["state"] == "opened" else "CLOSED"})
            # a connection gives at most 100 nodes a page (GitLab's GraphQL max_page_size);
            # the cursor here is the index of the next child
            start = int(str(variables.get("after") or "0"))
            chunk = kids[start:start + 100]
            info = {"hasNextPage": start + 100 < len(kids),
                    "endCursor": str(start + len(chunk)) if chunk else None}
            nodes.append({"iid": str(issue["iid"]), "widgets": [
                {}, {"hasChildren": bool(kids),
                     "children": {"pageInfo": info, "nodes": chunk}}, {}]})
        return 200, {"data": {"project": {"workItems": {"nodes": nodes}}}}, {}

    def _page(self, items: list[Any], q: dict[str, str],
              base: str) -> tuple[int, Any, dict[str, str]]:
        per = min(int(q.get("per_page", 20)), 100)
        page = int(q.get("page", 1))
        chunk = items[(page - 1) * per: page * per]
        headers = {"x-page": str(page), "x-per-page": str(per), "x-total": str(len(items)),
                   "x-total-pages": str(max(1, -(-len(items) // per)))}
        if page * per < len(items):
            headers["x-next-page"] = str(page + 1)
            nq = dict(q, page=str(page + 1))
            headers["Link"] = f'<{base}?{urlencode(sorted(nq.items()))}>; rel="next"'
        else:
            headers["x-next-page"] = ""
        return 200, chunk, headers

    def _list(self, path: str, proj: dict[str, Any],
              q: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        state = q.get("state", "all")
        want = [x for x in q.get("labels", "").split(",") if x]
        # `updated_after`: "Return issues updated on or after the given time" (ISO 8601);
        # `order_by` `created_at` (default) or `updated_at`; `sort` `desc` (default) or `asc`
        # (GitLab's REST docs, Issues API, "List project issues"); times kept to the second
        after = q.get("updated_after")
        since = (datetime.fromisoformat(after.replace("Z", "+00:00")).timestamp()
                 if after else None)
        issues = [i for i in proj["issues"].values()
                  if state in ("all", i["state"]) and all(w in i["labels"] for w in want)
                  and (since is None or int(i["updated"]) >= since)]
        key = "updated" if q.get("order_by") == "updated_at" else "created"
        issues.sort(key=lambda i: (i[key], i["iid"]), reverse=q.get("sort") != "asc")
        return self._page([self._issue_json(path, i) for i in issues], q,
                          f"{self.url}/api/v4/projects/{path.replace('/', '%2F')}/issues")

    def _on_issue(self, path: str, issue: dict[str, Any], method: str, rest: list[str],
                  q: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        iid = issue["iid"]
        if not rest:
            if method == "GET":
                return 200, self._issue_json(path, issue), {}
            if method == "PUT":
                text = body.get("description")
                if isinstance(text, str) and len(text) > DESCRIPTION_LIMIT:
                    return 400, {"message": {"description": [
                        f"is too long (maximum is {DESCRIPTION_LIMIT} characters)"]}}, {}
                before = list(issue["labels"])
                for lab in str(body.get("add_labels") or "").split(","):
                    if lab and lab not in issue["labels"]:
                        issue["labels"].append(lab)
                drop = {x for x in str(body.get("remove_labels") or "").split(",") if x}
                issue["labels"] = [x for x in issue["labels"] if x not in drop]
                self._label_events(issue, before, _USER)
                if isinstance(body.get("description"), str):
                    issue["description"] = body["description"]
                if body.get("state_event") == "close":
                    issue["state"] = "closed"
                elif body.get("state_event") == "reopen":
                    issue["state"] = "opened"
                issue["updated"] = self.now()
                return 200, self._issue_json(path, issue), {}
        if rest == ["links"] and method == "GET":
            out = []
            for bp, bi, tp, ti in self.links:
                if ((bp, bi) == (path, iid) and tp not in self.forbidden
                        and ti in self.projects.get(tp, {}).get("issues", {})):
                    out.append(self._link_json(tp, self.issue(tp, ti), "blocks"))
                if ((tp, ti) == (path, iid) and bp not in self.forbidden
                        and bi in self.projects.get(bp, {}).get("issues", {})):
                    out.append(self._link_json(bp, self.issue(bp, bi), "is_blocked_by"))
            return 200, out, {}
        if rest and rest[0] == "notes":
            return self._notes(issue, method, rest[1:], q, body)
        if rest == ["resource_label_events"] and method == "GET":
            return self._page(list(issue["label_events"]), q,
                              f"{self.url}/api/v4/projects/{path.replace('/', '%2F')}/issues/"
                              f"{iid}/resource_label_events")
        return 404, {"error": "404 Not Found"}, {}

    def _notes(self, issue: dict[str, Any], method: str, rest: list[str], q: dict[str, str],
               body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        iid = issue["iid"]
        notes: list[dict[str, Any]] = issue["notes"]
        if not rest:
            if method == "GET":
                key = "updated" if q.get("order_by") == "updated_at" else "created"
                ordered = sorted(notes, key=lambda n: (n[key], n["id"]),
                                 reverse=q.get("sort", "desc") != "asc")
                return self._page([self._note_json(n, iid) for n in ordered], q, "")
            if method == "POST":
                if not body.get("body"):
                    return 400, {"message": {"body": ["can't be blank"]}}, {}
                t = self.now()
                n = {"id": self._next("note"), "body": str(body["body"]), "created": t,
                     "updated": t, "system": False, "noteable_id": issue["id"]}
                notes.append(n)
                issue["updated"] = t  # a note touches its issue (GitLab's Note#touch_noteable)
                return 201, self._note_json(n, iid), {}
        if len(rest) == 1 and rest[0].isdigit():
            note = next((n for n in notes if n["id"] == int(rest[0])), None)
            if note is None:
                return 404, {"message": "404 Note Not Found"}, {}
            if method == "GET":
                return 200, self._note_json(note, iid), {}
            if method == "PUT":
                note["body"] = str(body.get("body") or note["body"])
                note["updated"] = issue["updated"] = self.now()
                return 200, self._note_json(note, iid), {}
            if method == "DELETE":
                notes.remove(note)
                return 204, None, {}
        return 404, {"error": "404 Not Found"}, {}

    # -- serving --------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeGitLab:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms wait

            def _do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else {}
                parts = urlsplit(self.path)
                hdrs = {k.lower(): v for k, v in self.headers.items()}
                status, data, extra = fake.handle(self.command, parts.path,
                                                  parse_qs(parts.query), body, hdrs)
                payload = b"" if data is None else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def date_time_string(self, timestamp: float | None = None) -> str:
                return email.utils.formatdate(fake.now(), usegmt=True)

            do_GET = do_POST = do_PUT = do_DELETE = _do

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
