"""`--done-when merged` in the GitHub source: the PR model, what counts as done, the GraphQL
query's batching and the cost of a poll (against the fake GitHub and its GraphQL subset)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from gh_helpers import make_adapter, make_client

from jr2_sources.readyset import compute_ready_set
from jr2_sources.registry import SourceEnv
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.pulls import PullReader, PullRequest, item_branch, judge
from jr2_sources.trackers.github.tracker import GitHubTracker


def pr(state: str = "OPEN", base: str = "main", merge_checks: str | None = None,
       head_checks: str | None = None, number: int = 9) -> PullRequest:
    return PullRequest(number, f"https://github.com/o/r/pull/{number}", state, base, "jr2/x",
                       "abc" if state == "MERGED" else None, merge_checks, "def", head_checks)


@pytest.mark.parametrize(("prs", "require", "state"), [
    ([], False, "open"),
    ([pr("CLOSED")], False, "open"),                       # closed unmerged: still to do
    ([pr("OPEN")], False, "unmerged"),
    ([pr("MERGED", base="other")], False, "open"),          # merged elsewhere: not landed
    ([pr("MERGED", base="other"), pr("OPEN")], False, "unmerged"),
    ([pr("MERGED")], False, "done"),
    ([pr("MERGED", merge_checks="FAILURE")], False, "done"),  # checks not required
    ([pr("MERGED", merge_checks="FAILURE")], True, "not_green"),
    ([pr("MERGED", merge_checks="PENDING")], True, "not_green"),
    ([pr("MERGED")], True, "not_green"),                    # no checks at all: not green
    ([pr("MERGED", merge_checks="SUCCESS")], True, "done"),
])
def test_judge(prs: list[PullRequest], require: bool, state: str) -> None:
    assert judge(prs, "main", require)[0] == state


def test_green_heads_for_stacking() -> None:
    assert pr(head_checks="SUCCESS").green(True, merged=False)
    assert pr(head_checks=None).green(False, merged=False)
    assert not pr(head_checks=None).green(True, merged=False)
    assert not pr(head_checks="PENDING").green(False, merged=False)


def test_graphql_url_beside_the_rest_base(fake: FakeGitHub) -> None:
    adapter = make_adapter(fake.url, done_when="merged")
    assert adapter.reader.pulls is not None
    assert adapter.reader.pulls.graphql_url() == fake.url + "/graphql"
    ghes = make_adapter("https://ghe.example.com/api/v3", done_when="merged")
    assert ghes.reader.pulls is not None
    assert ghes.reader.pulls.graphql_url() == "https://ghe.example.com/api/graphql"


def test_jr2s_branch_comes_before_closing_keywords(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "Blocker")
    keyword = fake.pulls.open_pr("o/r", "someone/fix", body="Closes #1")
    own = fake.pulls.open_pr("o/r", item_branch(1), "feature")
    reader = PullReader(make_adapter(fake.url).client, "o/r")
    links = reader.read([(1, f"I_{fake.issue('o/r', 1).uid}")])
    assert [p.number for p in links.prs[1]] == [own, keyword]
    assert links.default_branch == "main"


def test_checks_combine_check_runs_and_commit_statuses(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "Blocker")
    fake.add_issue("o/r", "Dependent")
    fake.add_dependency("o/r", 2, 1)
    number = fake.pulls.open_pr("o/r", item_branch(1), "feature")
    sha = fake.pulls.merge("o/r", number, "squash")
    config = GitHubConfig(target="o/r", done_when="merged", base="feature", require_checks=True)
    adapter = GitHubTracker(config, SourceEnv(state_dir=Path("/nonexistent"), read_only=True),
                            client=make_client(fake.url))

    def kinds() -> list[str]:
        rs = compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))
        return [r.kind for e in rs.blocked for r in e.reasons]

    assert kinds() == ["merged_not_green"]   # no checks at all
    fake.pulls.add_check("o/r", sha, conclusion="success")
    assert kinds() == []
    fake.pulls.add_status("o/r", sha, "pending")   # a commit status counts too
    assert kinds() == ["merged_not_green"]
    fake.pulls.add_status("o/r", sha, "success", context="ci/other")
    assert kinds() == ["merged_not_green"]   # the pending one is still pending
    fake.pulls.statuses[sha] = [("ci/legacy", "success")]
    assert kinds() == []


def test_a_poll_costs_list_pages_plus_one_graphql_query_per_100_blockers(
        fake: FakeGitHub) -> None:
    """250 issues block one each: ceil(500/100) = 5 list pages (and the first again) and
    ceil(250/100) = 3 GraphQL queries; the next unchanged poll: 6 REST 304s (free) and the same 3
    GraphQL queries (GraphQL has no conditional requests)."""
    for n in range(1, 251):
        fake.add_issue("o/r", f"Blocker {n}")
    for n in range(251, 501):
        fake.add_issue("o/r", f"Dependent {n}")
        fake.add_dependency("o/r", n, n - 250)
    adapter = make_adapter(fake.url, done_when="merged")
    fake.clear_log()
    rs = compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))
    assert len(rs.ready) == 250 and len(rs.blocked) == 250
    assert rs.entry("o/r#251").item.blockers[0].id == "o/r#1"  # named, no per-issue call
    sent = fake.requests()
    assert len([e for e in sent if e["path"] == "/graphql"]) == 3
    assert len([e for e in sent if e["method"] == "GET"]) == 6
    assert len(sent) == 9
    fake.clear_log()
    adapter.snapshot()
    again = fake.requests()
    assert [e["status"] for e in again if e["method"] == "GET"] == [304] * 6
    assert len([e for e in again if e["path"] == "/graphql"]) == 3
    assert len(again) == 9


def test_closed_mode_sends_no_graphql(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "Blocker")
    fake.add_issue("o/r", "Dependent")
    fake.add_dependency("o/r", 2, 1)
    adapter = make_adapter(fake.url)
    rs = compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in rs.ready] == ["o/r#1"] and rs.ready[0].item.branch is None
    assert not fake.requests(path="/graphql")


@pytest.mark.parametrize("event", ["pull_request", "check_suite", "check_run", "status"])
def test_pull_request_and_check_webhooks_wake_only_with_done_when_merged(
        fixture: Callable[[str], Any], event: str) -> None:
    body = json.dumps(fixture("webhooks/pull_request.closed.json")).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": f"d-{event}"}
    merged = make_adapter("https://api.github.com", target="octo/app", done_when="merged")
    closed = make_adapter("https://api.github.com", target="octo/app")
    assert merged.webhook(headers, body, None).wake
    assert not closed.webhook(headers, body, None).wake
    other = make_adapter("https://api.github.com", target="octo/lib", done_when="merged")
    assert not other.webhook(headers, body, None).wake


def test_nothing_blocks_nothing_asked(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "Alone")
    adapter = make_adapter(fake.url, done_when="merged")
    rs = compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))
    assert [e.item.branch for e in rs.ready] == ["jr2/issue-1"]
    assert not fake.requests(path="/graphql")
