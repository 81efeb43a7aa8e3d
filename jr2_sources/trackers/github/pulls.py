"""The pull requests of an issue (`--done-when merged`): one GraphQL query per 100 issues.

* Asked about: open issues that block something, or are held in review; up to 100 per `POST
  /graphql` (`nodes(ids: ...)`), about 10 of GraphQL's 5,000 points an hour a batch (no
  conditional requests there); none asked, no query. With `--on-feedback rerun` each PR asks
  `latestOpinionatedReviews(first: 20, writersOnly: true)` (`feedback.py`).
* Every query shape built here (`every_query`) is valid against GitHub's schema: the tests check
  each against the vendored subset (`tools/vendor_github_schema.py`); the fake refuses others.
* An issue's PRs: the one whose head is jr2's branch for it (`item_branch`:
  `jr2/issue-<number>`, found with an aliased `pullRequests(headRefName: ...)`), then its
  `closedByPullRequestsReferences`; mere cross-references never count.
* Done (`judge`): a PR merged into the base (`--base`, default the default branch); with
  `--require-checks` only when the merge commit's `statusCheckRollup` is SUCCESS (no checks is
  not green). An open PR: `unmerged`. None, or only closed unmerged: `open`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jr2_core.errors import SourceError
from jr2_sources.readyset import BlockerState

from .client import GitHubClient

BATCH = 100  # GitHub's limit on ids in one `nodes(ids:)`

_PR_FIELDS = """fragment pr on PullRequest {
  number url state merged baseRefName headRefName
  mergeCommit { oid statusCheckRollup { state } }
  commits(last: 1) { nodes { commit { oid statusCheckRollup { state } } } }%s
}"""
# --on-feedback rerun: each writer's latest review, so changes requested cost no request more
_REVIEWS = ("\n  latestOpinionatedReviews(first: 20, writersOnly: true) "
            "{ nodes { state author { login } } }")


def item_branch(number: int) -> str:
    """jr2's branch for issue `number`: the worker's `JR2_ITEM_BRANCH` and the PR head it finds."""
    return f"jr2/issue-{number}"


def issue_of_branch(head: str | None) -> int | None:
    """The issue whose jr2 branch `head` is (`item_branch`'s inverse), or None."""
    prefix = item_branch(0)[:-1]
    rest = head[len(prefix):] if head and head.startswith(prefix) else ""
    return int(rest) if rest.isdigit() else None


_HEAD_OID = "commits(last: 1) { nodes { commit { oid } } }"


def heads_query(numbers: Sequence[int]) -> str:
    """The GraphQL query for the head branches and head commits of pull requests `numbers`
    (aliased `p<number>`: `Repository.pullRequest(number:)`, null for no pull request)."""
    prs = "\n".join(f"    p{n}: pullRequest(number: {n}) {{ headRefName {_HEAD_OID} }}"
                     for n in numbers)
    return f"""query($owner: String!, $name: String!) {{
  repository(owner: $owner, name: $name) {{
{prs}
  }}
}}"""


def query(numbers: Sequence[int], reviews: bool = False) -> str:
    """The GraphQL query for one batch: the default branch, jr2's branch's PRs per issue (aliased
    `b<number>`), and per node id: number, the issues it blocks, the PRs that close it;
    `reviews`: each PR's writers' latest reviews too (`--on-feedback rerun`)."""
    heads = "\n".join(
        f'    b{n}: pullRequests(headRefName: "{item_branch(n)}", first: 2, '
        "orderBy: {field: CREATED_AT, direction: DESC}) { nodes { ...pr } }"
        for n in numbers)
    return f"""query($owner: String!, $name: String!, $ids: [ID!]!) {{
  repository(owner: $owner, name: $name) {{
    defaultBranchRef {{ name }}
{heads}
  }}
  nodes(ids: $ids) {{
    ... on Issue {{
      number
      blocking(first: 100) {{ nodes {{ number repository {{ nameWithOwner }} }} }}
      closedByPullRequestsReferences(first: 5, includeClosedPrs: true) {{ nodes {{ ...pr }} }}
    }}
  }}
}}
{_PR_FIELDS % (_REVIEWS if reviews else "")}"""


def every_query() -> dict[str, str]:
    """One query of each shape this module sends, by name: the schema tests and
    `tools/vendor_github_schema.py` validate each against GitHub's GraphQL schema."""
    return {"heads": heads_query([1, 2]), "judge": query([1, 2]),
            "judge_reviews": query([1, 2], reviews=True)}


@dataclass(frozen=True, slots=True)
class PullRequest:
    """One pull request as GraphQL reports it."""

    number: int
    url: str
    state: str  # OPEN, CLOSED, MERGED
    base: str
    head: str
    merge_sha: str | None = None
    merge_checks: str | None = None  # statusCheckRollup.state of the merge commit; None: none
    head_sha: str | None = None
    head_checks: str | None = None
    changes_requested: tuple[str, ...] = ()  # writers whose latest review requests changes

    @classmethod
    def of(cls, node: dict[str, Any]) -> PullRequest:
        merge = node.get("mergeCommit") or {}
        commits = (node.get("commits") or {}).get("nodes") or []
        head = (commits[-1] or {}).get("commit") or {} if commits else {}
        state = "MERGED" if node.get("merged") else str(node.get("state") or "OPEN")
        reviews = (node.get("latestOpinionatedReviews") or {}).get("nodes") or []
        asks = tuple(sorted(str((r.get("author") or {}).get("login") or "") for r in reviews
                            if isinstance(r, dict) and r.get("state") == "CHANGES_REQUESTED"))
        return cls(int(node["number"]), str(node.get("url") or ""), state,
                   str(node.get("baseRefName") or ""), str(node.get("headRefName") or ""),
                   merge.get("oid"), (merge.get("statusCheckRollup") or {}).get("state"),
                   head.get("oid"), (head.get("statusCheckRollup") or {}).get("state"), asks)

    def green(self, require_checks: bool, *, merged: bool) -> bool:
        """Checks green on the merge commit (`merged`) or on the head: SUCCESS; no checks at all
        count as green only when checks are not required."""
        state = self.merge_checks if merged else self.head_checks
        return state == "SUCCESS" or (state is None and not require_checks)


@dataclass(slots=True)
class Links:
    """What one read found: the default branch, each issue's PRs (jr2's branch first), and the
    issues (same repository) each asked issue blocks."""

    default_branch: str | None = None
    prs: dict[int, list[PullRequest]] = field(default_factory=dict)
    blocking: dict[int, list[int]] = field(default_factory=dict)


def judge(prs: Iterable[PullRequest], base: str,
          require_checks: bool) -> tuple[BlockerState, PullRequest | None]:
    """An open issue's state as a blocker, by its PRs (see the module notes)."""
    prs = list(prs)
    merged = [p for p in prs if p.state == "MERGED" and p.base == base]
    if merged:
        pr = merged[0]
        green = not require_checks or pr.green(require_checks, merged=True)
        return ("done" if green else "not_green"), pr
    opened = [p for p in prs if p.state == "OPEN"]
    if opened:
        return "unmerged", opened[0]
    return "open", None


class PullReader:
    """Reads the pull requests of a repository's issues, 100 issues per GraphQL query."""

    def __init__(self, client: GitHubClient, repo: str) -> None:
        self.client = client
        self.repo = repo
        self.owner, self.name = repo.split("/", 1)
        self.queries = 0
        self.reviews = False  # --on-feedback rerun: read the writers' latest reviews too

    def graphql_url(self) -> str:
        """GitHub's GraphQL endpoint beside the REST base (`/api/v3` -> `/api/graphql` on GHES)."""
        base = self.client.base_url.rstrip("/")
        if base.endswith("/api/v3"):
            return base[: -len("/v3")] + "/graphql"
        return base + "/graphql"

    def read(self, issues: Sequence[tuple[int, str]]) -> Links:
        """The links of `issues` ((number, node id) pairs): ceil(len/100) queries, none for
        no issues (then nothing is judged, so the default branch is not needed)."""
        links = Links()
        for batch in (issues[i:i + BATCH] for i in range(0, len(issues), BATCH)):
            self._read_batch(batch, links)
        return links

    def heads(self, numbers: Sequence[int]) -> dict[int, str | None]:
        """The head branch of each pull request in `numbers` (None: no such PR), 100 a query
        (`mergedelta.py`: which issue a PR on jr2's branch is for)."""
        return {n: None if node is None else str(node.get("headRefName") or "")
                for n, node in self._pull_nodes(numbers).items()}

    def head_sha(self, number: int) -> str | None:
        """The head commit of pull request `number` now (None: no such PR, or no commit)."""
        node = self._pull_nodes([number])[number]
        commits = ((node or {}).get("commits") or {}).get("nodes") or []
        oid = ((commits[-1] or {}).get("commit") or {}).get("oid") if commits else None
        return str(oid) if oid else None

    def _pull_nodes(self, numbers: Sequence[int]) -> dict[int, dict[str, Any] | None]:
        """The `heads_query` node of each pull request in `numbers`, 100 a query."""
        out: dict[int, dict[str, Any] | None] = {}
        numbers = sorted(numbers)
        for batch in (numbers[i:i + BATCH] for i in range(0, len(numbers), BATCH)):
            repository = self._ask(heads_query(batch), {}).get("repository") or {}
            for n in batch:
                node = repository.get(f"p{n}")
                out[n] = node if isinstance(node, dict) else None
        return out

    def _ask(self, text: str, variables: dict[str, Any]) -> dict[str, Any]:
        """One GraphQL query about this repository: its `data` (failures raise)."""
        body = {"query": text, "variables": {"owner": self.owner, "name": self.name, **variables}}
        self.queries += 1
        resp = self.client.call("POST", self.graphql_url(), body,
                                "read pull requests (GraphQL; Pull requests: read)", write=False)
        data = resp.data if isinstance(resp.data, dict) else {}
        answer = data.get("data")
        if not isinstance(answer, dict):  # GraphQL reports failures in `errors`, with HTTP 200
            errors = data.get("errors") or [{}]
            first = errors[0].get("message") if isinstance(errors[0], dict) else None
            raise SourceError(f"github:{self.repo}: GraphQL query failed: "
                              f"{first or 'no data in the answer'}")
        return answer

    def _read_batch(self, batch: Sequence[tuple[int, str]], links: Links) -> None:
        numbers = [n for n, _ in batch]
        answer = self._ask(query(numbers, self.reviews), {"ids": [node_id for _, node_id in batch]})
        repository = answer.get("repository") or {}
        links.default_branch = (repository.get("defaultBranchRef") or {}).get("name")
        for node in answer.get("nodes") or []:
            if not isinstance(node, dict) or "number" not in node:
                continue
            number = int(node["number"])
            own = [PullRequest.of(p) for p in
                   (repository.get(f"b{number}") or {}).get("nodes") or []]
            closing = [PullRequest.of(p) for p in
                       (node.get("closedByPullRequestsReferences") or {}).get("nodes") or []]
            seen = {p.number for p in own}
            links.prs[number] = own + [p for p in closing if p.number not in seen]
            links.blocking[number] = [
                int(b["number"]) for b in (node.get("blocking") or {}).get("nodes") or []
                if b and ((b.get("repository") or {}).get("nameWithOwner") or self.repo).lower()
                == self.repo.lower()]
