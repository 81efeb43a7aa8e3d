"""The pull-request part of the fake GitHub: pull requests, their links to issues, merges into any
branch, check runs, commit statuses and the GraphQL subset jr2 asks (mounted by `FakeGitHub`).

Every behaviour cites GitHub's own description (docs/design/fakes.md lists the sources):

* A pull request is an issue too: it takes the next issue number and is listed by the issues
  endpoint with `pull_request`; merging or closing it closes that issue.
* Closing keywords and sidebar links (`link` / `unlink`) link a PR to an issue only when the PR
  targets the default branch; a sidebar link records `connected` / `disconnected` events and
  moves no `updated_at`.
* REST: create, get and close pull requests; merge (merge, squash or rebase: a new commit on the
  base); check runs and commit statuses per commit sha, the latest status per context counting;
  a push moves the head SHA; reviews and review comments ("List reviews for a pull request",
  "List review comments on a pull request"), in ascending id.
* GraphQL (`POST /graphql`): a request GitHub's schema refuses is refused
  (`github_graphql.py`); otherwise the query shapes jr2 sends (`trackers.github.pulls.query`,
  `pulls.heads_query`) are answered: `repository` with `defaultBranchRef` and aliased
  `pullRequests(headRefName:)` or `pullRequest(number:)`, and `nodes(ids:)` (at most 100) with
  `blocking` and `closedByPullRequestsReferences`; `statusCheckRollup` combines checks and statuses;
  `latestOpinionatedReviews(writersOnly: true)` is each writer's latest review that is not a
  comment. GraphQL has no conditional requests.
"""

from __future__ import annotations

import hashlib
import re
import time
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import github_graphql

if TYPE_CHECKING:
    from .github_server import FakeGitHub

_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)", re.I)
_HEAD_ALIAS = re.compile(r"(\w+)\s*:\s*pullRequests\(\s*headRefName\s*:\s*\"([^\"]+)\"")
_NUMBER_ALIAS = re.compile(r"(\w+)\s*:\s*pullRequest\(\s*number\s*:\s*(\d+)\s*\)")
_FAILING = {"failure", "cancelled", "timed_out", "action_required", "startup_failure"}


def iso(t: float) -> str:
    """A time as GitHub writes it (`date-time`, UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def simple_user(login: str, uid: int = 1) -> dict[str, Any]:
    """A `simple-user` (every field GitHub's description requires)."""
    api = f"https://api.github.com/users/{login}"
    return {
        "login": login,
        "id": uid,
        "node_id": f"U_{uid}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"https://github.com/{login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": "User",
        "site_admin": False,
    }


def _user_of(login: str) -> dict[str, Any]:
    """A `simple-user` with an id of its own."""
    return simple_user(login, zlib.crc32(login.encode()) % 10**8)


def _sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


@dataclass
class Pull:
    repo: str
    number: int
    head: str
    base: str
    body: str
    head_sha: str
    state: str = "open"
    merged: bool = False
    merge_sha: str | None = None
    merged_at: float | None = None  # the fake's clock (`FakeGitHub.now`)
    pushes: int = 0
    reviews: list[dict[str, Any]] = field(default_factory=list)  # id, user, state, body, sha, at
    comments: list[dict[str, Any]] = field(default_factory=list)  # id, review, user, body, path...


@dataclass
class Pulls:
    """Pull requests, default branches and checks of the fake's repositories."""

    fake: FakeGitHub
    pulls: dict[tuple[str, int], Pull] = field(default_factory=dict)
    default_branch: dict[str, str] = field(default_factory=dict)
    checks: dict[str, list[tuple[str, str, str | None]]] = field(default_factory=dict)
    statuses: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    manual: dict[tuple[str, int], set[int]] = field(default_factory=dict)  # sidebar links
    check_extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # per check run
    ids: int = 0

    # -- seeding and acting (tests) -------------------------------------------------------------

    def default_of(self, repo: str) -> str:
        return self.default_branch.get(repo.lower(), "main")

    def open_pr(self, repo: str, head: str, base: str | None = None, body: str = "",
                title: str | None = None) -> int:
        """Open a pull request from `head` into `base` (default: the default branch)."""
        with self.fake.lock:
            number = self.fake.add_issue(repo, title or f"PR from {head}", body, pr=True)
            self.pulls[(repo.lower(), number)] = Pull(
                repo, number, head, base or self.default_of(repo), body, _sha(repo, head, number))
            self.fake._touch()
            return number

    def pull(self, repo: str, number: int) -> Pull:
        return self.pulls[(repo.lower(), number)]

    def merge(self, repo: str, number: int, method: str = "merge") -> str:
        """Merge a pull request; closes the issues it links (default branch only)."""
        with self.fake.lock:
            pr = self.pull(repo, number)
            if pr.state != "open":
                raise ValueError(f"#{number} is not open")
            pr.state, pr.merged = "closed", True
            pr.merge_sha = _sha(repo, number, method, "merged")
            self.fake.close_issue(repo, number)
            pr.merged_at = self.fake.issue(repo, number).closed  # the same moment
            for issue in self.linked_issues(pr):
                if self.fake._open(self.fake._key(repo, issue)):
                    self.fake.close_issue(repo, issue)
            return pr.merge_sha

    def close(self, repo: str, number: int) -> None:
        """Close a pull request without merging it."""
        with self.fake.lock:
            pr = self.pull(repo, number)
            pr.state = "closed"
            self.fake.close_issue(repo, number)

    def reopen(self, repo: str, number: int) -> None:
        """Reopen a pull request closed unmerged ("Update a pull request", `state: open`;
        GitHub refuses to reopen a merged one)."""
        with self.fake.lock:
            pr = self.pull(repo, number)
            if pr.merged or pr.state != "closed":
                raise ValueError(f"#{number} cannot be reopened")
            pr.state = "open"
            self.fake.reopen_issue(repo, number)

    def edit_body(self, repo: str, number: int, body: str) -> None:
        """Edit a pull request's body ("Update a pull request", `body`): its closing keywords
        link the issues they name (default branch only); the PR's `updated_at` moves."""
        with self.fake.lock:
            self.pull(repo, number).body = body
            self.fake.edit_body(repo, number, body)

    def link(self, repo: str, number: int, issue: int, user: str = "someone") -> None:
        """Link pull request `number` to `issue` from the issue's sidebar (module notes)."""
        self._sidebar(repo, number, issue, user, "connected")

    def unlink(self, repo: str, number: int, issue: int, user: str = "someone") -> None:
        """Remove a sidebar link (module notes)."""
        self._sidebar(repo, number, issue, user, "disconnected")

    def _sidebar(self, repo: str, number: int, issue: int, user: str, event: str) -> None:
        with self.fake.lock:
            linked = self.manual.setdefault((repo.lower(), number), set())
            if event == "connected":
                linked.add(issue)
            else:
                linked.discard(issue)
            for n in (issue, number):  # `updated_at` stays: no `_touch`
                self.fake.issue_event(self.fake.issue(repo, n), event, user)

    def add_check(self, repo: str, sha: str, name: str = "ci", status: str = "completed",
                  conclusion: str | None = "success", summary: str | None = None,
                  details_url: str | None = None) -> None:
        with self.fake.lock:
            self.checks.setdefault(sha, []).append((name, status, conclusion))
            self.ids += 1
            self.check_extra.setdefault(sha, []).append(
                {"id": self.ids, "summary": summary, "details_url": details_url})
            self.fake._touch()

    def push(self, repo: str, number: int) -> str:
        """A push to the PR's head branch: a new head SHA (its checks start empty)."""
        with self.fake.lock:
            pr = self.pull(repo, number)
            pr.pushes += 1
            pr.head_sha = _sha(repo, pr.head, number, "push", pr.pushes)
            self.fake._touch(self.fake.issue(repo, number))
            return pr.head_sha

    def review(self, repo: str, number: int, user: str, state: str, body: str = "",
               comments: tuple[tuple[str, int, str], ...] = ()) -> int:
        """Submit a review (`APPROVED`, `CHANGES_REQUESTED` or `COMMENTED`) on the PR's head,
        with review comments (path, line, body); returns the review's id."""
        with self.fake.lock:
            pr = self.pull(repo, number)
            self.ids += 1
            rid = self.ids
            pr.reviews.append({"id": rid, "user": user, "state": state, "body": body,
                               "sha": pr.head_sha, "at": self.fake.now()})
            for path, line, text in comments:
                self.ids += 1
                pr.comments.append({"id": self.ids, "review": rid, "user": user, "body": text,
                                    "path": path, "line": line, "sha": pr.head_sha,
                                    "at": self.fake.now()})
            self.fake._touch(self.fake.issue(repo, number))
            return rid

    def add_status(self, repo: str, sha: str, state: str, context: str = "ci/legacy") -> None:
        with self.fake.lock:
            self.statuses.setdefault(sha, []).append((context, state))
            self.fake._touch()

    # -- the model ------------------------------------------------------------------------------

    def linked_issues(self, pr: Pull) -> list[int]:
        """Issues a PR's closing keywords and sidebar links link: only when it targets the
        default branch."""
        if pr.base != self.default_of(pr.repo):
            return []
        manual = sorted(self.manual.get((pr.repo.lower(), pr.number), set()))
        return [int(n) for n in _CLOSING.findall(pr.body)] + manual

    def rollup(self, sha: str | None) -> dict[str, str] | None:
        if sha is None:
            return None
        runs, statuses = self.checks.get(sha, []), self.latest_statuses(sha)
        if not runs and not statuses:
            return None
        if any(c in _FAILING for _, s, c in runs if s == "completed") or any(
                st in ("failure", "error") for _, st in statuses):
            return {"state": "FAILURE"}
        if any(s != "completed" for _, s, _ in runs) or any(st == "pending" for _, st in statuses):
            return {"state": "PENDING"}
        return {"state": "SUCCESS"}

    def latest_statuses(self, sha: str) -> list[tuple[str, str]]:
        """The latest commit status of each context (case-insensitive) on `sha`."""
        latest: dict[str, tuple[str, str]] = {}
        for context, state in self.statuses.get(sha, []):
            latest.pop(context.casefold(), None)  # kept in the order of the latest posts
            latest[context.casefold()] = (context, state)
        return list(latest.values())

    def pr_node(self, pr: Pull) -> dict[str, Any]:
        state = "MERGED" if pr.merged else pr.state.upper()
        return {
            "number": pr.number,
            "url": f"https://github.com/{pr.repo}/pull/{pr.number}",
            "state": state,
            "merged": pr.merged,
            "baseRefName": pr.base,
            "headRefName": pr.head,
            "mergeCommit": None if pr.merge_sha is None else {
                "oid": pr.merge_sha, "statusCheckRollup": self.rollup(pr.merge_sha)},
            "commits": {"nodes": [{"commit": {"oid": pr.head_sha,
                                              "statusCheckRollup": self.rollup(pr.head_sha)}}]},
            "latestOpinionatedReviews": {"nodes": [
                {"state": r["state"], "author": {"login": r["user"]}}
                for r in self.latest_reviews(pr)]},
        }

    def latest_reviews(self, pr: Pull) -> list[dict[str, Any]]:
        """Each writer's latest review that is not a comment (`writersOnly: true`)."""
        latest: dict[str, dict[str, Any]] = {}
        for r in pr.reviews:
            if r["state"] != "COMMENTED" and self.fake.permissions.get(
                    r["user"].lower()) in ("write", "maintain", "admin"):
                latest[r["user"].lower()] = r
        return list(latest.values())

    def merged_at(self, repo: str, number: int) -> str | None:
        """When pull request `number` merged (ISO 8601), or None: not merged, or no such PR."""
        pr = self.pulls.get((repo.lower(), number))
        return None if pr is None or pr.merged_at is None else iso(pr.merged_at)

    def pr_json(self, base: str, pr: Pull) -> dict[str, Any]:
        """The REST pull-request object (the fields jr2 and the tests read)."""
        closed = self.fake.issue(pr.repo, pr.number).closed
        return {
            "url": f"{self.fake._api(base, pr.repo)}/pulls/{pr.number}",
            "html_url": f"https://github.com/{pr.repo}/pull/{pr.number}",
            "number": pr.number,
            "state": pr.state,
            "merged": pr.merged,
            "merged_at": self.merged_at(pr.repo, pr.number),
            "closed_at": None if closed is None else iso(closed),
            "merge_commit_sha": pr.merge_sha,
            "head": {"ref": pr.head, "sha": pr.head_sha},
            "base": {"ref": pr.base},
            "body": pr.body,
        }

    def check_json(self, base: str, repo: str, sha: str, run: tuple[str, str, str | None],
                   extra: dict[str, Any]) -> dict[str, Any]:
        """A `check-run` ("List check runs for a Git reference")."""
        name, status, conclusion = run
        html = f"https://github.com/{repo}/runs/{extra['id']}"
        done = iso(self.fake.now()) if status == "completed" else None
        return {"id": extra["id"], "node_id": f"CR_{extra['id']}", "head_sha": sha,
                "external_id": None, "name": name, "status": status, "conclusion": conclusion,
                "url": f"{self.fake._api(base, repo)}/check-runs/{extra['id']}",
                "html_url": html, "details_url": extra.get("details_url") or html,
                "started_at": iso(self.fake.now()), "completed_at": done,
                "output": {"title": name, "summary": extra.get("summary"), "text": None,
                           "annotations_count": 0,
                           "annotations_url": f"{self.fake._api(base, repo)}/check-runs/"
                                              f"{extra['id']}/annotations"},
                "check_suite": {"id": extra["id"]}, "app": None, "pull_requests": []}

    def status_json(self, base: str, repo: str, sha: str) -> dict[str, Any]:
        """A `combined-commit-status` ("Get the combined status for a specific reference")."""
        sts = self.latest_statuses(sha)
        rollup = self.rollup(sha) if sts else None
        api = self.fake._api(base, repo)
        now = iso(self.fake.now())
        return {"state": "pending" if rollup is None else rollup["state"].lower(), "sha": sha,
                "total_count": len(sts), "repository": self.fake.repo_json(base, repo),
                "commit_url": f"{api}/commits/{sha}", "url": f"{api}/commits/{sha}/status",
                "statuses": [{"id": i + 1, "node_id": f"SC_{i + 1}", "context": c, "state": st,
                              "description": None, "target_url": None, "avatar_url": None,
                              "url": f"{api}/statuses/{sha}", "created_at": now,
                              "updated_at": now} for i, (c, st) in enumerate(sts)]}

    def review_json(self, base: str, pr: Pull, r: dict[str, Any]) -> dict[str, Any]:
        """A `pull-request-review` ("List reviews for a pull request")."""
        html = f"https://github.com/{pr.repo}/pull/{pr.number}"
        api = f"{self.fake._api(base, pr.repo)}/pulls/{pr.number}"
        return {"id": r["id"], "node_id": f"PRR_{r['id']}", "user": _user_of(r["user"]),
                "body": r["body"], "state": r["state"], "commit_id": r["sha"],
                "html_url": f"{html}#pullrequestreview-{r['id']}", "pull_request_url": api,
                "submitted_at": iso(r["at"]), "author_association": "COLLABORATOR",
                "_links": {"html": {"href": f"{html}#pullrequestreview-{r['id']}"},
                           "pull_request": {"href": api}}}

    def review_comment_json(self, base: str, pr: Pull, c: dict[str, Any]) -> dict[str, Any]:
        """A `pull-request-review-comment` ("List review comments on a pull request")."""
        html = f"https://github.com/{pr.repo}/pull/{pr.number}#discussion_r{c['id']}"
        api = f"{self.fake._api(base, pr.repo)}/pulls"
        return {"url": f"{api}/comments/{c['id']}", "id": c["id"], "node_id": f"PRRC_{c['id']}",
                "pull_request_review_id": c["review"], "user": _user_of(c["user"]),
                "body": c["body"], "path": c["path"], "line": c["line"],
                "original_line": c["line"], "commit_id": c["sha"],
                "original_commit_id": c["sha"], "diff_hunk": "", "position": c["line"],
                "html_url": html, "pull_request_url": f"{api}/{pr.number}",
                "created_at": iso(c["at"]), "updated_at": iso(c["at"]),
                "author_association": "COLLABORATOR",
                "_links": {"self": {"href": f"{api}/comments/{c['id']}"}, "html": {"href": html},
                           "pull_request": {"href": f"{api}/{pr.number}"}}}

    # -- routes ---------------------------------------------------------------------------------

    def route(self, method: str, path: str, body: Any,
              base: str) -> tuple[int, Any, dict[str, str]] | None:
        """The answer to a pull-request route, or None when `path` is not one."""
        if path == "/graphql" and method == "POST":
            return self.graphql(body)
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/(pulls|pulls/\d+(?:/merge|/reviews|/comments)?|"
                         r"commits/[^/]+/(?:check-runs|status)|statuses/[^/]+)", path)
        if m is None:
            return None
        repo, rest = m.group(1), m.group(2)
        self.fake._check_repo(repo)
        if rest == "pulls" and method == "POST":  # "Create a pull request": head, base, title
            if not body.get("head") or not body.get("base"):
                return 422, {"message": "Validation Failed"}, {}
            number = self.open_pr(repo, str(body["head"]), str(body["base"]),
                                  str(body.get("body") or ""), body.get("title"))
            return 201, self.pr_json(base, self.pull(repo, number)), {}
        if rest.startswith("pulls/"):
            number = int(rest.split("/")[1])
            pr = self.pulls.get((repo.lower(), number))
            if pr is None:
                return 404, {"message": "Not Found"}, {}
            if rest.endswith("/merge") and method == "PUT":
                if pr.state != "open":
                    return 405, {"message": "Pull Request is not mergeable"}, {}
                sha = self.merge(repo, number, str((body or {}).get("merge_method", "merge")))
                return 200, {"sha": sha, "merged": True, "message": "Pull Request successfully "
                             "merged"}, {}
            if rest.endswith("/reviews") and method == "GET":
                return 200, [self.review_json(base, pr, r) for r in pr.reviews], {}
            if rest.endswith("/comments") and method == "GET":
                return 200, [self.review_comment_json(base, pr, c) for c in pr.comments], {}
            if method == "GET" and not rest.endswith("/merge"):
                return 200, self.pr_json(base, pr), {}
            if method == "PATCH" and not rest.endswith("/merge"):  # "Update a pull request"
                if (body or {}).get("state") == "closed" and pr.state == "open":
                    self.close(repo, number)
                return 200, self.pr_json(base, pr), {}
        if rest.endswith("/check-runs") and method == "GET":
            sha = rest.split("/")[1]
            runs = self.checks.get(sha, [])
            extra = self.check_extra.get(sha, [])
            return 200, {"total_count": len(runs), "check_runs": [
                self.check_json(base, repo, sha, run, x) for run, x in zip(runs, extra,
                                                                           strict=False)]}, {}
        if rest.startswith("statuses/") and method == "POST":  # "Create a commit status"
            state = (body or {}).get("state")
            if state not in ("error", "failure", "pending", "success"):
                return 422, {"message": "Validation Failed", "errors": [
                    {"resource": "Status", "field": "state", "code": "custom"}]}, {}
            sha, context = rest.split("/")[1], str((body or {}).get("context") or "default")
            self.add_status(repo, sha, state, context)
            n = sum(len(v) for v in self.statuses.values())
            return 201, {"url": f"{self.fake._api(base, repo)}/statuses/{sha}", "id": n,
                         "node_id": f"SC_{n}", "state": state, "context": context,
                         "description": (body or {}).get("description"),
                         "target_url": (body or {}).get("target_url"),
                         "avatar_url": None, "creator": None,
                         "created_at": iso(self.fake.now()),
                         "updated_at": iso(self.fake.now())}, {}
        if rest.endswith("/status") and method == "GET":
            return 200, self.status_json(base, repo, rest.split("/")[1]), {}
        return None

    def graphql(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        query = str((body or {}).get("query") or "")
        variables = (body or {}).get("variables") or {}
        refused = github_graphql.errors(query, variables)
        if refused:  # invalid against GitHub's schema: GitHub answers 200 with the errors
            return 200, {"errors": refused}, {}
        ids = list(variables.get("ids") or [])
        if len(ids) > 100:
            return 200, {"errors": [{"message": "You may not provide more than 100 node ids"}]}, {}
        repo = f"{variables.get('owner')}/{variables.get('name')}"
        by_uid = {f"I_{i.uid}": i for i in self.fake.issues.values()}
        nodes: list[Any] = []
        for node_id in ids:
            issue = by_uid.get(node_id)
            if issue is None or issue.pr:
                nodes.append(None)
                continue
            key = self.fake._key(issue.repo, issue.number)
            blocking = [k for k, v in self.fake.deps.items() if key in v]
            closing = [pr for pr in self.pulls.values() if pr.repo.lower() == key[0]
                       and issue.number in self.linked_issues(pr)]
            nodes.append({
                "number": issue.number,
                "blocking": {"nodes": [{"number": k[1], "repository": {
                    "nameWithOwner": self.fake._repo_name(k)}} for k in blocking
                                       if k[0] == key[0] and self.fake._open(k)]},
                "closedByPullRequestsReferences": {"nodes": [self.pr_node(pr)
                                                             for pr in closing]},
            })
        repository: dict[str, Any] = {"defaultBranchRef": {"name": self.default_of(repo)}}
        for alias, number in _NUMBER_ALIAS.findall(query):
            pr = self.pulls.get((repo.lower(), int(number)))
            repository[alias] = None if pr is None else self.pr_node(pr)
        for alias, head in _HEAD_ALIAS.findall(query):
            repository[alias] = {"nodes": [self.pr_node(pr) for pr in self.pulls.values()
                                           if pr.repo.lower() == repo.lower()
                                           and pr.head == head]}
        return 200, {"data": {"repository": repository, "nodes": nodes}}, {}
