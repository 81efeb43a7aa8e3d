"""Reading a Redmine project into a `Snapshot`: its open issues, relations, subtasks and marks.

* One conditional list walk: `GET /issues.json?project_id=P&status_id=open&include=relations
  &sort=id`, 100 a page; the scope (tracker, status, assignee, version, category, `--label`) is
  judged here, so the same walk finds marked issues outside the filter, subtasks and blockers.
* Blockers: `blocks` relations (both directions read); `precedes` only with
  `--precedes-blocks`. A blocker outside the open issues of the project is asked in one list per
  100 ids; one that list leaves out is read alone (404 missing, 403 inaccessible).
* A description may name blockers too (`Depends on #12`, `Blocked by #7`).
* Subtasks: an open issue whose `parent` is listed is an open child of it.
* Marks are words in the `jr2` custom field; only issues with the claim or awaiting word have
  their journals read, except one this process holds (`own_claim`: no other claim can win it).
  A renewed claim's `at` is trusted only between the journal's `created_on` and the `Date`.
* A running pool reads this walk once, then deltas (`delta.py`).

Design notes: docs/design/plugins.md.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from jr2_core import ConfigError
from jr2_sources import BlockerRef, Claim, Snapshot, SnapshotItem
from jr2_sources.capabilities.approvals.policy import AWAITING_LABEL
from jr2_sources.kit import claims
from jr2_sources.kit.rest import RestResponse

from .client import RedmineClient, RedmineHTTPError, parse_time
from .config import RedmineConfig

if TYPE_CHECKING:
    from jr2_sources.kit.markers import MarkerTrust

    from .delta import RedmineChanges

State = Literal["open", "done", "missing", "inaccessible"]

FIELD_HELP = ("an administrator creates it once: Administration > Custom fields > New custom "
              "field > Issues, format Text, For all projects, Used as a filter, every tracker "
              "(docs/guides/redmine.md)")


_BODY_REF = re.compile(r"(?im)\b(?:depends\s+on|blocked\s+by)\s+#(\d+)")


def body_refs(text: str | None) -> set[int]:
    """The issues a description names as blockers (`Depends on #12`, `Blocked by #7`)."""
    return {int(m) for m in _BODY_REF.findall(text or "")}


def item_id(n: int | str) -> str:
    """The jr2 id of Redmine issue `n` (`#12`, as Redmine writes a reference)."""
    return f"#{n}"


def issue_number(ident: str) -> int:
    """The issue number of a jr2 id (`#12`, or `12`); ValueError otherwise."""
    text = ident.strip().removeprefix("#")
    if not text.isdigit():
        raise ValueError(f"expected a Redmine issue id such as #12, not {ident!r}")
    return int(text)


def children_of(issues: Mapping[int, dict[str, Any]]) -> dict[int, list[int]]:
    """Issue number -> its open subtasks among `issues` (open issues of the project)."""
    out: dict[int, list[int]] = {}
    for n, issue in issues.items():
        parent = (issue.get("parent") or {}).get("id")
        if parent is not None:
            out.setdefault(int(parent), []).append(n)
    return out


def _named(obj: Any, wanted: Iterable[str]) -> bool:
    """Whether a Redmine `{id, name}` reference is one of `wanted` (ids or names, any case)."""
    if not isinstance(obj, dict):
        return False
    keys = {str(w).strip().casefold() for w in wanted}
    return str(obj.get("id")) in keys or str(obj.get("name", "")).casefold() in keys


class IssueReader:
    """Reads one project's issues for a `RedmineTracker` (GET requests only)."""

    def __init__(self, config: RedmineConfig, client: RedmineClient,
                 markers: MarkerTrust) -> None:
        self.config = config
        self.client = client
        self.markers = markers
        """The tracker's marker reader: every listing of an issue's notes passes through it."""
        self.name = f"redmine:{config.target}"
        self.field_id: int | None = int(config.field) if config.field.isdigit() else None
        self.me: int | None = None
        self.project_ids: set[int] = set()
        self._ranks: dict[int, int] | None = None
        self._refs: dict[int, State] = {}
        self._lock = threading.Lock()
        self._label_prios = config.priorities()
        self.changes: RedmineChanges | None = None  # set by a tracker read by deltas
        self.own_claim: Callable[[str], Claim | None] | None = None  # the tracker's own claims

    # -- what Redmine knows once ------------------------------------------------------------

    def my_id(self) -> int:
        """The id of the key's own user (`GET /users/current.json`, once)."""
        if self.me is None:
            user = self.client.get("/users/current.json", need="read its own account").data
            self.me = int(user["user"]["id"])
        return self.me

    def ranks(self) -> dict[int, int]:
        """Priority id -> rank (1 = most urgent), from Redmine's priority list (once)."""
        if self._ranks is None:
            data = self.client.get("/enumerations/issue_priorities.json",
                                   need="read the issue priorities").data
            prios = [p for p in (data or {}).get("issue_priorities") or []
                     if isinstance(p, dict)]
            self._ranks = {int(p["id"]): len(prios) - i for i, p in enumerate(prios)}
        return self._ranks

    def learn_field(self, issues: Iterable[dict[str, Any]]) -> None:
        """Find the marks field's id by its name among the listed issues' custom fields."""
        if self.field_id is not None:
            return
        want = self.config.field.casefold()
        seen = False
        for issue in issues:
            seen = True
            for cf in issue.get("custom_fields") or []:
                if isinstance(cf, dict) and str(cf.get("name", "")).casefold() == want:
                    self.field_id = int(cf["id"])
                    return
        if seen:
            raise ConfigError(f"{self.name}: the issues of {self.config.project} have no custom "
                              f"field {self.config.field!r} for jr2's marks; {FIELD_HELP}")

    # -- one issue --------------------------------------------------------------------------

    def tokens(self, issue: dict[str, Any]) -> list[str]:
        """The words in the issue's marks field (jr2's marks and a team's own tags)."""
        for cf in issue.get("custom_fields") or []:
            if not isinstance(cf, dict):
                continue
            if (self.field_id is not None and cf.get("id") == self.field_id) or (
                    self.field_id is None
                    and str(cf.get("name", "")).casefold() == self.config.field.casefold()):
                value = cf.get("value")
                if isinstance(value, list):
                    value = " ".join(str(v) for v in value if v)
                return str(value or "").replace(",", " ").split()
        return []

    def in_scope(self, issue: dict[str, Any]) -> bool:
        """Whether the user's filter selects the issue (jr2's own words ignored)."""
        cfg = self.config
        project = issue.get("project") or {}
        if self.project_ids and project.get("id") not in self.project_ids:
            return False
        if cfg.tracker and not _named(issue.get("tracker"), cfg.tracker):
            return False
        if cfg.status and not _named(issue.get("status"), cfg.status):
            return False
        if cfg.version and not _named(issue.get("fixed_version"), cfg.version):
            return False
        if cfg.category and not _named(issue.get("category"), cfg.category):
            return False
        if cfg.assignee:
            who = issue.get("assigned_to")
            wanted = [w for w in cfg.assignee if w.casefold() not in ("me", "none")]
            ok = (who is None and any(w.casefold() == "none" for w in cfg.assignee)) or (
                who is not None and _named(who, wanted)) or (
                who is not None and any(w.casefold() == "me" for w in cfg.assignee)
                and who.get("id") == self.my_id())
            if not ok:
                return False
        return cfg.selects(self.tokens(issue))

    def marked(self, tokens: Iterable[str]) -> bool:
        cfg = self.config
        return bool({cfg.claim_label, cfg.failed_label, AWAITING_LABEL} & set(tokens))

    def listed(self, issue: dict[str, Any]) -> bool:
        """In the snapshot: selected by the filter, or carrying one of jr2's marks."""
        return self.in_scope(issue) or self.marked(self.tokens(issue))

    def read_issue(self, n: int) -> RestResponse:
        """One issue with its journals and relations, in one conditional GET (its ETag covers
        them: a note added or edited, a relation added or removed changes it)."""
        return self.client.get(f"/issues/{n}.json", {"include": "journals,relations"},
                               need="read issue journals")

    def read_journals(self, n: int, resp: RestResponse | None = None
                      ) -> tuple[list[claims.Comment], datetime]:
        """The issue's notes as the kit's comments, as the marker reader lets the protocols
        see them (`kit.markers`: only trusted authors' markers), and the server's time; from
        `resp` (a `read_issue` answer) when given."""
        if resp is None:
            resp = self.read_issue(n)
        now = resp.date or datetime.now(UTC)
        out = []
        for j in (resp.data or {}).get("journals") or []:
            if not isinstance(j, dict) or not j.get("notes"):
                continue
            try:
                created = parse_time(str(j["created_on"]))
                user: dict[str, Any] = j["user"] if isinstance(j.get("user"), dict) else {}
                comment = claims.Comment(int(j["id"]), str(j["notes"]), created, created,
                                         str(user["id"]) if "id" in user else None)
            except (KeyError, TypeError, ValueError):
                continue
            out.append(claims.Comment(comment.id, comment.body, created,
                                      self._renewed(comment, now), comment.author))
        return self.markers.read(item_id(n), out).comments, now

    def blocked_now(self, issue: dict[str, Any]) -> bool:
        """Whether an issue read with its relations has an open blocker by relation: one of the
        open issues the last reading knew, or one outside them that a list says is open."""
        n = int(issue["id"])
        blockers = self.relation_blockers({n: issue}).get(n, set())
        known = self.changes.open if self.changes is not None else set()
        states = self._states({b for b in blockers if b not in known})
        return any(b in known or states.get(b) == "open" for b in blockers)

    @staticmethod
    def _renewed(comment: claims.Comment, now: datetime) -> datetime:
        """When a claim was last renewed: its `at` (server time written at renewal) when it
        lies between the journal's creation and now, else its creation."""
        mk = claims.parse_marker(comment)
        at = mk.fields.get("at") if mk is not None else None
        if isinstance(at, str):
            try:
                when = parse_time(at)
            except ValueError:
                return comment.created_at
            if comment.created_at <= when <= now + timedelta(seconds=2):
                return when
        return comment.created_at

    # -- the snapshot -----------------------------------------------------------------------

    def list_open(self) -> tuple[dict[int, dict[str, Any]], datetime | None]:
        """Every open issue of the project, by number, and the server time of the first page."""
        cfg = self.config
        params: dict[str, Any] = {"project_id": cfg.project, "status_id": "open",
                                  "include": "relations", "sort": "id"}
        if not cfg.subprojects:
            params["subproject_id"] = "!*"
        try:
            found, first = self.client.get_pages("/issues.json", "issues", params)
        except RedmineHTTPError as exc:
            if exc.status == 404:
                self.my_id()  # a key Redmine does not know reads as nobody: say that (401)
                raise ConfigError(f"{self.name}: no project {cfg.project!r} (or the key "
                                  "cannot see it)") from None
            raise
        issues = {int(i["id"]): i for i in found if "id" in i}
        self.learn_field(issues.values())
        if not self.project_ids:
            data = self.client.get(f"/projects/{cfg.project}.json", need="read the project").data
            self.project_ids = {int(data["project"]["id"])}
        if cfg.subprojects:  # the subprojects are those the listing shows
            self.project_ids |= {int((i.get("project") or {}).get("id", 0))
                                 for i in issues.values()}
        return issues, first.date

    def snapshot(self, skip: set[str] | frozenset[str] = frozenset()) -> Snapshot:
        """The open issues in scope with blockers, subtasks, claims and failure marks; ids in
        `skip` (done in this process) are left out. It starts the deltas' window (`changes`)."""
        if self.changes is not None:
            self.changes.window.begin()
        issues, began = self.list_open()
        items = self.build(issues, issues, skip)
        if self.changes is not None:
            self.changes.full_read(began, issues, items)
        return Snapshot(source=self.name, items=items, done_count=None)

    def relation_blockers(self, issues: Mapping[int, dict[str, Any]]) -> dict[int, set[int]]:
        """Issue number -> the numbers of the issues whose relations block it (`blocks`, and
        `precedes` with `--precedes-blocks`), from the listed relations."""
        out: dict[int, set[int]] = {}
        for issue in issues.values():
            for rel in issue.get("relations") or []:
                if not isinstance(rel, dict):
                    continue
                try:
                    a, b, kind = int(rel["issue_id"]), int(rel["issue_to_id"]), rel["relation_type"]
                except (KeyError, TypeError, ValueError):
                    continue
                if kind == "blocks" or (kind == "precedes" and self.config.precedes_blocks):
                    out.setdefault(b, set()).add(a)
                elif kind == "blocked" or (kind == "follows" and self.config.precedes_blocks):
                    out.setdefault(a, set()).add(b)
        return out

    def blockers_of(self, issues: Mapping[int, dict[str, Any]]) -> dict[int, set[int]]:
        """Issue number -> the numbers of the issues that block it: its relations and its
        description's references."""
        out = self.relation_blockers(issues)
        for n, issue in issues.items():
            out.setdefault(n, set()).update(body_refs(issue.get("description")) - {n})
        return out

    def build(self, issues: dict[int, dict[str, Any]], known: dict[int, dict[str, Any]],
              skip: set[str] | frozenset[str]) -> list[SnapshotItem]:
        """Items for the listed issues among `issues`, blockers judged against `known` (every
        open issue of the project)."""
        return self.build_items(issues, known.__contains__, children_of(known), skip)

    def build_items(self, issues: Mapping[int, dict[str, Any]], is_open: Callable[[int], bool],
                    children: Mapping[int, Iterable[int]],
                    skip: set[str] | frozenset[str]) -> list[SnapshotItem]:
        """Items for the listed issues among `issues`: each one's blockers from its own
        relations (Redmine lists a relation on both of its issues), `is_open` telling which
        issues are open issues of the project, `children` their open subtasks."""
        blockers = self.blockers_of(issues)
        unknown = {b for n in issues for b in blockers.get(n, ()) if not is_open(b)}
        states = self._states(unknown)
        items = []
        for n, issue in sorted(issues.items()):
            if item_id(n) in skip or issue.get("state", "open") == "closed" or not self.listed(
                    issue):
                continue
            refs = [BlockerRef(item_id(b), "open" if is_open(b) else states.get(b, "missing"))
                    for b in sorted(blockers.get(n, ()))]
            kids = [BlockerRef(item_id(k), "open") for k in sorted(children.get(n, ()))]
            items.append(self.item(issue, refs, kids))
        return items

    def _states(self, numbers: set[int]) -> dict[int, State]:
        """The state of issues outside the open list: one list per 100, then one GET each for
        those it leaves out."""
        out: dict[int, State] = {}
        with self._lock:
            for n in list(numbers):
                if n in self._refs:
                    out[n] = self._refs[n]
        todo = sorted(numbers - set(out))
        for i in range(0, len(todo), 100):
            chunk = todo[i:i + 100]
            found, _ = self.client.get_pages("/issues.json", "issues",
                                             {"issue_id": ",".join(map(str, chunk)),
                                              "status_id": "*"})
            for issue in found:
                closed = bool((issue.get("status") or {}).get("is_closed"))
                out[int(issue["id"])] = "done" if closed else "open"
        for n in todo:
            if n not in out:
                try:
                    issue = self.client.get(f"/issues/{n}.json").data
                    out[n] = "done" if issue.get("state") == "closed" else "open"
                except RedmineHTTPError as exc:
                    if exc.status == 404:
                        out[n] = "missing"
                    elif exc.status == 403:
                        out[n] = "inaccessible"
                    else:
                        raise
        with self._lock:
            self._refs.update({n: s for n, s in out.items() if s in ("done", "missing")})
        return out

    def item(self, issue: dict[str, Any], refs: list[BlockerRef],
             kids: list[BlockerRef]) -> SnapshotItem:
        cfg = self.config
        n = int(issue["id"])
        tokens = self.tokens(issue)
        comments: list[claims.Comment] | None = None
        now: datetime | None = None
        own = None
        if (self.own_claim is not None and cfg.claim_label in tokens
                and not {cfg.failed_label, AWAITING_LABEL} & set(tokens)):
            own = self.own_claim(item_id(n))  # ours, renewed by us: no other claim can win
        if own is None and (cfg.claim_label in tokens or AWAITING_LABEL in tokens):
            comments, now = self.read_journals(n)
        failed = None
        if cfg.failed_label in tokens:
            if comments is None:
                comments, now = self.read_journals(n)
            failed = claims.last_failure(comments) or f"marked {cfg.failed_label}"
        claim, attempts, retry_after = own, 0, None
        if cfg.claim_label in tokens and comments is not None and now is not None:
            claim = claims.claim_of(comments, now)
            attempts, retry_after = claims.retry_record(claims.markers(comments))
        prios = [p for t, p in self._label_prios.items() if t in tokens]
        prio = (issue.get("priority") or {}).get("id")
        rank = self.ranks().get(int(prio)) if prio is not None else None
        parent = (issue.get("parent") or {}).get("id")
        return SnapshotItem(
            id=item_id(n), title=str(issue.get("subject") or ""),
            url=f"{cfg.target}/issues/{n}", labels=tokens,
            priority=min(prios) if prios else rank,
            created=parse_time(issue["created_on"]) if issue.get("created_on") else None,
            parent=item_id(parent) if parent is not None else None,
            blockers=refs, children=kids, failed=failed, claim=claim, attempts=attempts,
            retry_after=retry_after, in_scope=self.in_scope(issue),
            ignored=self.markers.ignored_on(item_id(n)) if comments is not None else (),
            extra={"tracker": (issue.get("tracker") or {}).get("name"),
                   "status": (issue.get("status") or {}).get("name")})
