"""A stateful fake Linear on 127.0.0.1, built from Linear's own schema (the vendored subset).

Design notes
------------
* graphql-core builds the schema from `fixtures/linear/schema.graphql` (Linear's definitions, see
  its header) and executes every request against it with the in-memory resolvers below: a query
  naming a field Linear does not have fails validation here as it would there, and an answer
  can only hold Linear's fields.
* Complexity is computed before execution by Linear's documented rule (rate-limiting page): a
  property 0.1 point, an object 1, a connection multiplies what it selects by `first` (default
  50), rounded up; a query over `MAX_COMPLEXITY` is refused. Every answer carries the
  `X-Complexity` and `X-RateLimit-Requests-*` / `X-RateLimit-Complexity-*` headers (names from
  `@linear/sdk`'s `RatelimitedLinearError`; resets in epoch milliseconds), and a spent request
  budget (a leaky bucket, `requests_per_hour`) or `ratelimit_next(n)` answers HTTP 400 with a
  GraphQL error whose `extensions.code` is `RATELIMITED`.
* Time: `createdAt`/`updatedAt` in milliseconds, the `Date` header in whole seconds (HTTP).
  Attachments follow Linear's attachments page: the URL is unique per issue (creating one with
  the same URL updates it), `creator` is the key's user. Adding or editing an attachment does not
  move the issue's `updatedAt` (Linear does not document that it does; the plugin must not
  rely on it).
* People act through methods (`move`, `add_marker` as another user, `relate`, `trash`), which
  move `updatedAt` as Linear does for an edit of the issue.
"""

from __future__ import annotations

import functools
import json
import math
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLObjectType,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    build_schema,
    execute,
    get_named_type,
    is_leaf_type,
    parse,
    validate,
)
from graphql.utilities import value_from_ast

SCHEMA_PATH = Path(__file__).parent / "fixtures" / "linear" / "schema.graphql"
MAX_COMPLEXITY = 10_000
DEFAULT_FIRST = 50
KEY = "lin_api_fake0123456789abcdef"
OTHER_KEY = "lin_api_person0123456789"
STRANGER_KEY = "lin_api_stranger012345678"

_SCHEMA: Any = None


_BUILD = threading.Lock()


def schema() -> Any:
    """The schema the fake serves, with its resolvers (built once per process)."""
    global _SCHEMA
    with _BUILD:
        if _SCHEMA is None:
            built = build_schema(SCHEMA_PATH.read_text(encoding="utf-8"))
            _wire(built)
            _SCHEMA = built
    return _SCHEMA


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{int(ts * 1000) % 1000:03d}Z"


@functools.lru_cache(maxsize=256)
def _checked(text: str) -> tuple[Any, list[Any]]:
    """A request's document, parsed and validated against the schema (once per text: the
    operations are the same few strings)."""
    document = parse(text)
    return document, validate(schema(), document)


# -- complexity -------------------------------------------------------------------------------


def complexity(document: Any, variables: dict[str, Any] | None = None,
               operation: str | None = None) -> int:
    """The points of one operation by Linear's rule (see the module notes), rounded up."""
    sch = schema()
    frags = {d.name.value: d for d in document.definitions
             if isinstance(d, FragmentDefinitionNode)}
    ops = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)
           and (operation is None or (d.name and d.name.value == operation))]
    op = ops[0]
    root = sch.mutation_type if op.operation.value == "mutation" else sch.query_type

    def cost(sel: SelectionSetNode | None, parent: Any) -> float:
        total = 0.0
        for node in sel.selections if sel else ():
            if isinstance(node, FragmentSpreadNode):
                frag = frags[node.name.value]
                total += cost(frag.selection_set, sch.type_map[frag.type_condition.name.value])
                continue
            if isinstance(node, InlineFragmentNode):
                cond = node.type_condition
                total += cost(node.selection_set,
                              sch.type_map[cond.name.value] if cond else parent)
                continue
            assert isinstance(node, FieldNode)
            if node.name.value == "__typename":
                continue
            field = parent.fields[node.name.value]
            ftype = get_named_type(field.type)
            if is_leaf_type(ftype):
                total += 0.1
                continue
            inner = cost(node.selection_set, ftype)
            if "first" in field.args:
                first = _arg(node, "first", field, variables) or DEFAULT_FIRST
                total += 1 + first * inner
            else:
                total += 1 + inner
        return total

    return math.ceil(round(cost(op.selection_set, root), 6))


def _arg(node: FieldNode, name: str, field: Any, variables: dict[str, Any] | None) -> Any:
    for a in node.arguments or ():
        if a.name.value == name:
            return value_from_ast(a.value, field.args[name].type, variables)
    return None


# -- filters ----------------------------------------------------------------------------------


def _one(value: Any, op: str, want: Any) -> bool:
    """One comparator of Linear's `StringComparator`, `DateComparator` and the like."""
    text = isinstance(value, str)
    if op == "eq":
        return bool(value == want)
    if op == "neq":
        return bool(value != want)
    if op == "in":
        return value in want
    if op == "nin":
        return value not in want
    if op in ("gt", "gte", "lt", "lte"):
        if value is None:
            return False
        return {"gt": value > want, "gte": value >= want, "lt": value < want,
                "lte": value <= want}[op]
    if op == "eqIgnoreCase":
        return text and value.lower() == want.lower()
    if op == "contains":
        return text and want in value
    if op == "containsIgnoreCase":
        return text and want.lower() in value.lower()
    if op == "startsWith":
        return text and value.startswith(want)
    if op == "null":
        return (value is None) == bool(want)
    raise GraphQLError(f"the fake does not implement comparator {op!r}")


def _compare(value: Any, comp: dict[str, Any]) -> bool:
    return all(_one(value, op, want) for op, want in comp.items())


class FakeLinear:
    """The fake's state and its HTTP server (see the module notes)."""

    def __init__(self, team: str = "ENG") -> None:
        self.lock = threading.RLock()
        self.users = {"u-jr2": {"id": str(uuid.uuid4()), "name": "jr2 bot",
                                "email": "bot@example.com"},
                      "u-person": {"id": str(uuid.uuid4()), "name": "Pat Person",
                                   "email": "pat@example.com"},
                      "u-stranger": {"id": str(uuid.uuid4()), "name": "Stranger",
                                     "email": "x@example.com"}}
        self.keys = {KEY: "u-jr2", OTHER_KEY: "u-person", STRANGER_KEY: "u-stranger"}
        self.teams: dict[str, dict[str, Any]] = {}
        self.states: dict[str, dict[str, Any]] = {}
        self.issues: dict[str, dict[str, Any]] = {}
        self.relations: list[dict[str, Any]] = []
        self.attachments: dict[str, dict[str, Any]] = {}
        self.clock_offset = 0.0
        self.requests = 0
        self.mutations = 0
        self.by_operation: dict[str, int] = {}
        self.complexities: dict[str, int] = {}
        self.requests_per_hour = 1_000_000
        self.complexity_per_hour = 100_000_000
        self._bucket = 0.0
        self._cbucket = 0.0
        self._last = time.time()
        self._limited = 0
        self._limit_reset = 2.0
        self.server: ThreadingHTTPServer | None = None
        self.add_team(team)

    # -- set-up and people ----------------------------------------------------------------------

    def now(self) -> float:
        return time.time() + self.clock_offset

    def add_team(self, key: str) -> dict[str, Any]:
        tid = str(uuid.uuid4())
        team = {"id": tid, "key": key, "name": f"Team {key}", "count": 0}
        self.teams[tid] = team
        for pos, (name, kind) in enumerate([("Backlog", "backlog"), ("Todo", "unstarted"),
                                            ("In Progress", "started"), ("Done", "completed"),
                                            ("Canceled", "canceled")]):
            sid = str(uuid.uuid4())
            self.states[sid] = {"id": sid, "name": name, "type": kind, "position": float(pos),
                                "teamId": tid}
        return team

    def team(self, key: str) -> dict[str, Any]:
        return next(t for t in self.teams.values() if t["key"] == key)

    def state_of(self, team_id: str, kind: str) -> dict[str, Any]:
        return next(s for s in self.states.values() if s["teamId"] == team_id
                    and s["type"] == kind)

    def add_issue(self, title: str, *, team: str = "ENG", labels: tuple[str, ...] = (),
                  priority: int = 0, state: str = "unstarted", project: str | None = None,
                  assignee: str | None = None, cycle: int | None = None) -> str:
        """A new issue; its identifier (`ENG-1`)."""
        with self.lock:
            t = self.team(team)
            t["count"] += 1
            now = self.now()
            iid = str(uuid.uuid4())
            ident = f"{team}-{t['count']}"
            self.issues[iid] = {
                "id": iid, "identifier": ident, "title": title, "teamId": t["id"],
                "url": f"https://linear.app/acme/issue/{ident.lower()}",
                "branchName": f"{ident.lower()}-{title.lower().replace(' ', '-')[:30]}",
                "priority": float(priority), "createdAt": iso(now + t["count"] * 0.001),
                "updatedAt": iso(now + t["count"] * 0.001), "trashed": None,
                "stateId": self.state_of(t["id"], state)["id"], "labels": list(labels),
                "parentId": None, "project": project, "assigneeId": assignee,
                "cycle": cycle}
            return ident

    def issue(self, ident: str) -> dict[str, Any]:
        return next(i for i in self.issues.values() if i["identifier"] == ident)

    def touch(self, issue: dict[str, Any]) -> None:
        issue["updatedAt"] = iso(self.now())

    def relate(self, blocker: str, blocked: str, kind: str = "blocks") -> None:
        """`blocker` blocks `blocked` (a person adding the relation; both issues touched)."""
        with self.lock:
            a, b = self.issue(blocker), self.issue(blocked)
            self.relations.append({"id": str(uuid.uuid4()), "type": kind, "issueId": a["id"],
                                   "relatedIssueId": b["id"], "createdAt": iso(self.now())})
            self.touch(a)
            self.touch(b)

    def set_parent(self, child: str, parent: str) -> None:
        with self.lock:
            c = self.issue(child)
            c["parentId"] = self.issue(parent)["id"]
            self.touch(c)

    def move(self, ident: str, kind: str) -> None:
        """A person moves the issue to the team's state of type `kind`."""
        with self.lock:
            i = self.issue(ident)
            i["stateId"] = self.state_of(i["teamId"], kind)["id"]
            self.touch(i)

    def trash(self, ident: str) -> None:
        with self.lock:
            i = self.issue(ident)
            i["trashed"] = True
            self.touch(i)

    def relabel(self, ident: str, labels: list[str]) -> None:
        with self.lock:
            i = self.issue(ident)
            i["labels"] = list(labels)
            self.touch(i)

    def add_marker(self, ident: str, metadata: dict[str, Any], *, user: str = "u-stranger",
                   title: str = "jr2") -> str:
        """An attachment written by another user (a stranger forging a marker)."""
        with self.lock:
            i = self.issue(ident)
            return self._create_attachment(
                {"issueId": i["id"], "url": f"{i['url']}#jr2-{uuid.uuid4().hex[:16]}",
                 "title": title, "metadata": metadata}, self.users[user]["id"])["id"]

    def markers(self, ident: str) -> list[dict[str, Any]]:
        iid = self.issue(ident)["id"]
        return sorted((a for a in self.attachments.values() if a["issueId"] == iid),
                      key=lambda a: (a["createdAt"], a["id"]))

    def state_type(self, ident: str) -> str:
        return str(self.states[self.issue(ident)["stateId"]]["type"])

    def ratelimit_next(self, n: int = 1, reset_in: float = 2.0) -> None:
        """Answer the next `n` requests RATELIMITED, the budget resetting `reset_in` s later."""
        with self.lock:
            self._limited = n
            self._limit_reset = reset_in

    def writes(self) -> int:
        return self.mutations

    # -- resolvers ------------------------------------------------------------------------------

    def _user(self, uid: str | None) -> dict[str, Any] | None:
        return next((u for u in self.users.values() if u["id"] == uid), None)

    def _match(self, i: dict[str, Any], f: dict[str, Any] | None, me: str) -> bool:
        if not f:
            return True
        for key, cond in f.items():
            if key == "and":
                ok = all(self._match(i, g, me) for g in cond)
            elif key == "or":
                ok = any(self._match(i, g, me) for g in cond)
            elif key == "id":
                ok = _compare(i["id"], cond)
            elif key == "number":
                ok = _compare(float(i["identifier"].split("-")[1]), cond)
            elif key == "updatedAt":
                ok = _compare(i["updatedAt"], cond)
            elif key == "priority":
                ok = _compare(i["priority"], cond)
            elif key == "team":
                t = self.teams[i["teamId"]]
                ok = all(_compare(t[k], v) for k, v in cond.items())
            elif key == "state":
                s = self.states[i["stateId"]]
                ok = all(_compare(s[k], v) for k, v in cond.items())
            elif key == "labels":
                ok = self._labels_match(i["labels"], cond)
            elif key == "project":
                ok = all(_compare(i["project"], v) for k, v in cond.items() if k == "name") \
                    and ("null" not in cond or (i["project"] is None) == cond["null"])
            elif key == "cycle":
                ok = self._cycle_match(i["cycle"], cond)
            elif key == "assignee":
                ok = self._assignee_match(i["assigneeId"], cond, me)
            else:
                raise GraphQLError(f"the fake does not implement IssueFilter.{key}")
            if not ok:
                return False
        return True

    @staticmethod
    def _labels_match(labels: list[str], cond: dict[str, Any]) -> bool:
        for k, v in cond.items():
            if k == "some":
                if not any(_compare(n, v.get("name", {})) for n in labels):
                    return False
            elif k == "every":
                if not all(_compare(n, v.get("name", {})) for n in labels):
                    return False
            else:
                raise GraphQLError(f"the fake does not implement IssueLabelCollectionFilter.{k}")
        return True

    @staticmethod
    def _cycle_match(cycle: int | None, cond: dict[str, Any]) -> bool:
        for k, v in cond.items():
            if k == "null":
                ok = (cycle is None) == v
            elif k == "number":
                ok = cycle is not None and _compare(float(cycle), v)
            elif k == "isActive":  # the fake's active cycle is number 1
                ok = _compare(cycle == 1, v)
            else:
                raise GraphQLError(f"the fake does not implement NullableCycleFilter.{k}")
            if not ok:
                return False
        return True

    def _assignee_match(self, uid: str | None, cond: dict[str, Any], me: str) -> bool:
        user = self._user(uid)
        for k, v in cond.items():
            if k == "null":
                ok = (user is None) == v
            elif k == "isMe":
                ok = _compare(uid == me, v)
            elif k in ("email", "name", "id"):
                ok = user is not None and _compare(user[k], v)
            else:
                raise GraphQLError(f"the fake does not implement NullableUserFilter.{k}")
            if not ok:
                return False
        return True

    @staticmethod
    def _page(rows: list[dict[str, Any]], args: dict[str, Any]) -> dict[str, Any]:
        first = args.get("first") or DEFAULT_FIRST
        start = int(args["after"]) if args.get("after") else 0
        chunk = rows[start:start + first]
        end = start + len(chunk)
        return {"nodes": chunk, "pageInfo": {"hasNextPage": end < len(rows),
                                             "endCursor": str(end) if chunk else None}}

    def _issues(self, f: dict[str, Any] | None, args: dict[str, Any],
                me: str, base: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        rows = [i for i in (self.issues.values() if base is None else base)
                if not i["trashed"] and self._match(i, f, me)]
        order = "updatedAt" if args.get("orderBy") == "updatedAt" else "createdAt"
        rows.sort(key=lambda i: (i[order], i["id"]))
        return self._page(rows, args)

    def _create_attachment(self, data: dict[str, Any], creator: str) -> dict[str, Any]:
        same = next((x for x in self.attachments.values() if x["issueId"] == data["issueId"]
                     and x["url"] == data["url"]), None)
        now = iso(self.now())
        if same is not None:  # Linear: the same URL on the same issue updates the attachment
            same.update({k: data[k] for k in ("title", "subtitle", "metadata") if k in data})
            same["updatedAt"] = now
            return same
        aid = str(uuid.uuid4())
        x = {"id": aid, "issueId": data["issueId"], "url": data["url"],
             "title": data.get("title", ""), "subtitle": data.get("subtitle"),
             "metadata": data.get("metadata") or {}, "createdAt": now, "updatedAt": now,
             "creatorId": creator}
        self.attachments[aid] = x
        return x

    # -- serving --------------------------------------------------------------------------------

    def answer(self, auth: str, body: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
        """One POST to the GraphQL endpoint: (status, headers, JSON body)."""
        headers = {"Date": formatdate(self.now(), usegmt=True)}
        key = auth.removeprefix("Bearer ").strip()
        who = self.keys.get(key)
        if who is None:
            return 401, headers, {"errors": [{"message": "Authentication required, not "
                                               "authenticated", "extensions": {
                                                   "code": "AUTHENTICATION_ERROR"}}]}
        try:
            req = json.loads(body)
            document, errors = _checked(str(req["query"]))
        except (ValueError, KeyError, GraphQLError) as exc:
            return 400, headers, {"errors": [{"message": f"bad request: {exc}"}]}
        variables = req.get("variables") or {}
        name = req.get("operationName")
        with self.lock:
            self.requests += 1
            self.by_operation[str(name)] = self.by_operation.get(str(name), 0) + 1
            if errors:
                return 400, headers, {"errors": [e.formatted for e in errors]}
            points = complexity(document, variables, name)
            self.complexities[str(name)] = points
            now = time.time()
            leak = (now - self._last) / 3600.0
            self._last = now
            self._bucket = max(0.0, self._bucket - leak * self.requests_per_hour) + 1
            self._cbucket = max(0.0, self._cbucket - leak * self.complexity_per_hour) + points
            reset_ms = int((self.now() + self._limit_reset) * 1000)
            remaining = max(0, int(self.requests_per_hour - self._bucket))
            headers.update({
                "X-Complexity": str(points),
                "X-RateLimit-Requests-Limit": str(self.requests_per_hour),
                "X-RateLimit-Requests-Remaining": "0" if self._limited else str(remaining),
                "X-RateLimit-Requests-Reset": str(reset_ms),
                "X-RateLimit-Complexity-Limit": str(self.complexity_per_hour),
                "X-RateLimit-Complexity-Remaining": str(
                    max(0, int(self.complexity_per_hour - self._cbucket))),
                "X-RateLimit-Complexity-Reset": str(reset_ms)})
            if points > MAX_COMPLEXITY:
                return 400, headers, {"errors": [{
                    "message": f"Query too complex: {points} points, at most {MAX_COMPLEXITY}",
                    "extensions": {"code": "INVALID_INPUT"}}]}
            if self._limited or self._bucket > self.requests_per_hour:
                self._limited = max(0, self._limited - 1)
                return 400, headers, {"errors": [{"message": "Rate limit exceeded",
                                                  "extensions": {"code": "RATELIMITED"}}]}
            op = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode)
                      and (name is None or (d.name and d.name.value == name)))
            if op.operation.value == "mutation":
                self.mutations += 1
            result = execute(schema(), document, variable_values=variables,
                             operation_name=name,
                             context_value={"user": self.users[who], "fake": self})
            out: dict[str, Any] = {"data": result.data}
            if result.errors:
                out["errors"] = [e.formatted for e in result.errors]
            return 200, headers, out

    def start(self) -> FakeLinear:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as `requests` sessions expect
            wbufsize = 1 << 16  # headers and body leave in one write (no delayed-ACK stalls)

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, payload = fake.answer(self.headers.get("Authorization", ""),
                                                       body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    if k != "Date":
                        self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def date_time_string(self, timestamp: float | None = None) -> str:
                return formatdate(fake.now(), usegmt=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/graphql"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def F(info: Any) -> FakeLinear:
    """The fake serving this request."""
    fake: FakeLinear = info.context["fake"]
    return fake


def _wire(sch: Any) -> None:
    """Resolvers of the fields the fake answers (the rest read the stored dicts' keys); each
    finds its fake in the request's context, so several fakes can serve at once."""
    q, m = sch.query_type, sch.mutation_type

    def me(info: Any) -> str:
        return str(info.context["user"]["id"])

    q.fields["viewer"].resolve = lambda _o, info: info.context["user"]
    q.fields["teams"].resolve = lambda _o, info, **a: F(info)._page(
        [t for t in F(info).teams.values()
         if all(_compare(t[k], v) for k, v in (a.get("filter") or {}).items())], a)
    q.fields["issues"].resolve = lambda _o, info, **a: F(info)._issues(a.get("filter"), a,
                                                                     me(info))

    def issue(_o: Any, info: Any, id: str) -> dict[str, Any]:
        found = F(info).issues.get(id) or next(
            (i for i in F(info).issues.values() if i["identifier"] == id), None)
        if found is None:
            raise GraphQLError("Entity not found: Issue",
                               extensions={"code": "INVALID_INPUT"})
        return found

    q.fields["issue"].resolve = issue
    team_t: GraphQLObjectType = sch.type_map["Team"]
    team_t.fields["states"].resolve = lambda t, info, **a: F(info)._page(
        sorted((s for s in F(info).states.values() if s["teamId"] == t["id"]),
               key=lambda s: s["position"]), a)
    it: GraphQLObjectType = sch.type_map["Issue"]
    it.fields["state"].resolve = lambda i, info: F(info).states[i["stateId"]]
    it.fields["trashed"].resolve = lambda i, info: i["trashed"]
    it.fields["labels"].resolve = lambda i, info, **a: F(info)._page(
        [{"name": n} for n in i["labels"]], a)
    it.fields["parent"].resolve = lambda i, info: F(info).issues.get(i["parentId"] or "")
    it.fields["children"].resolve = lambda i, info, **a: F(info)._issues(
        a.get("filter"), a, me(info),
        [c for c in F(info).issues.values() if c["parentId"] == i["id"]])

    def inverse(i: dict[str, Any], info: Any, **a: Any) -> dict[str, Any]:
        rows = [r for r in F(info).relations if r["relatedIssueId"] == i["id"]]
        return F(info)._page(sorted(rows, key=lambda r: r["createdAt"]), a)

    it.fields["inverseRelations"].resolve = inverse
    rel: GraphQLObjectType = sch.type_map["IssueRelation"]
    rel.fields["issue"].resolve = lambda r, info: F(info).issues[r["issueId"]]

    def attachments(i: dict[str, Any], info: Any, **a: Any) -> dict[str, Any]:
        f = (a.get("filter") or {}).get("url")
        rows = [x for x in F(info).attachments.values() if x["issueId"] == i["id"]
                and (f is None or _compare(x["url"], f))]
        return F(info)._page(sorted(rows, key=lambda x: (x["createdAt"], x["id"])), a)

    it.fields["attachments"].resolve = attachments
    at: GraphQLObjectType = sch.type_map["Attachment"]
    at.fields["creator"].resolve = lambda x, info: F(info)._user(x["creatorId"])

    def create(_o: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        if input["issueId"] not in F(info).issues:
            issue(None, info, input["issueId"])
        return {"success": True, "lastSyncId": 1.0,
                "attachment": F(info)._create_attachment(input, me(info))}

    def update(_o: Any, info: Any, id: str, input: dict[str, Any]) -> dict[str, Any]:
        x = F(info).attachments.get(id)
        if x is None:
            raise GraphQLError("Entity not found: Attachment",
                               extensions={"code": "INVALID_INPUT"})
        x.update({k: v for k, v in input.items() if k in ("title", "subtitle", "metadata")})
        x["updatedAt"] = iso(F(info).now())
        return {"success": True, "lastSyncId": 1.0, "attachment": x}

    def delete(_o: Any, info: Any, id: str) -> dict[str, Any]:
        if F(info).attachments.pop(id, None) is None:
            raise GraphQLError("Entity not found: Attachment",
                               extensions={"code": "INVALID_INPUT"})
        return {"success": True, "lastSyncId": 1.0, "entityId": id}

    def issue_update(_o: Any, info: Any, id: str, input: dict[str, Any]) -> dict[str, Any]:
        i = issue(None, info, id)
        if "stateId" in input:
            if input["stateId"] not in F(info).states:
                raise GraphQLError("Entity not found: WorkflowState",
                                   extensions={"code": "INVALID_INPUT"})
            i["stateId"] = input["stateId"]
        F(info).touch(i)
        return {"success": True, "lastSyncId": 1.0, "issue": i}

    m.fields["attachmentCreate"].resolve = create
    m.fields["attachmentUpdate"].resolve = update
    m.fields["attachmentDelete"].resolve = delete
    m.fields["issueUpdate"].resolve = issue_update


def running(team: str = "ENG") -> Iterator[FakeLinear]:
    """A started fake, stopped afterwards (for pytest fixtures)."""
    fake = FakeLinear(team).start()
    try:
        yield fake
    finally:
        fake.stop()
