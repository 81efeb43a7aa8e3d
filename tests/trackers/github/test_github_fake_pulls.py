"""The fake GitHub's pull requests (jr2_sources/testing/fakes/github_pulls.py) behave as GitHub
documents."""

from __future__ import annotations

import requests

from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github import pulls


def gql(fake: FakeGitHub, ids: list[str]) -> dict:
    """jr2's judging query for issue #1 (jr2's branch for it: `b1`) and the nodes `ids`."""
    resp = requests.post(f"{fake.url}/graphql", json={
        "query": pulls.query([1]), "variables": {"owner": "o", "name": "r", "ids": ids}},
        timeout=5)
    assert resp.status_code == 200 and "ETag" not in resp.headers  # never conditional
    return resp.json()


def test_closing_keywords_link_and_close_only_into_the_default_branch(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "One")
    fake.add_issue("o/r", "Two")
    node = f"I_{fake.issue('o/r', 1).uid}"
    side = fake.pulls.open_pr("o/r", "fix-side", "feature", body="Fixes #1")
    assert gql(fake, [node])["data"]["nodes"][0]["closedByPullRequestsReferences"] == {
        "nodes": []}
    fake.pulls.merge("o/r", side, "squash")
    assert fake.issue("o/r", 1).state == "open"
    main_pr = fake.pulls.open_pr("o/r", "fix-main", body="resolves #1, and closes #2")
    linked = gql(fake, [node])["data"]["nodes"][0]["closedByPullRequestsReferences"]["nodes"]
    assert [(p["number"], p["state"], p["baseRefName"]) for p in linked] == [
        (main_pr, "OPEN", "main")]
    resp = requests.put(f"{fake.url}/repos/o/r/pulls/{main_pr}/merge",
                        json={"merge_method": "squash"}, timeout=5)
    assert resp.status_code == 200 and resp.json()["merged"]
    assert fake.issue("o/r", 1).state_reason == "completed"
    assert fake.issue("o/r", 2).state == "closed"
    again = requests.put(f"{fake.url}/repos/o/r/pulls/{main_pr}/merge", json={}, timeout=5)
    assert again.status_code == 405


def test_rest_pull_requests_and_checks(fake: FakeGitHub) -> None:
    made = requests.post(f"{fake.url}/repos/o/r/pulls",
                         json={"title": "t", "head": "jr2/issue-1", "base": "main"}, timeout=5)
    assert made.status_code == 201
    number, sha = made.json()["number"], made.json()["head"]["sha"]
    assert requests.get(f"{fake.url}/repos/o/r", timeout=5).json()["default_branch"] == "main"
    issues = requests.get(f"{fake.url}/repos/o/r/issues", timeout=5).json()
    assert [i["number"] for i in issues if "pull_request" in i] == [number]
    fake.pulls.add_check("o/r", sha, status="in_progress", conclusion=None)
    runs = requests.get(f"{fake.url}/repos/o/r/commits/{sha}/check-runs", timeout=5).json()
    assert runs["total_count"] == 1 and runs["check_runs"][0]["status"] == "in_progress"
    fake.pulls.add_status("o/r", sha, "failure")
    status = requests.get(f"{fake.url}/repos/o/r/commits/{sha}/status", timeout=5).json()
    assert status["state"] == "failure" and status["total_count"] == 1
    closed = requests.patch(f"{fake.url}/repos/o/r/pulls/{number}", json={"state": "closed"},
                            timeout=5)
    assert closed.json()["state"] == "closed" and not closed.json()["merged"]
    assert requests.post(f"{fake.url}/repos/o/r/pulls", json={"title": "t"},
                         timeout=5).status_code == 422


def test_graphql_rollup_heads_and_limits(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "One")
    number = fake.pulls.open_pr("o/r", "jr2/issue-1", "main")
    head = fake.pulls.pull("o/r", number).head_sha
    found = gql(fake, [])["data"]["repository"]["b1"]["nodes"]
    assert found[0]["commits"]["nodes"][0]["commit"]["statusCheckRollup"] is None
    fake.pulls.add_check("o/r", head, conclusion="success")
    fake.pulls.add_status("o/r", head, "error")
    found = gql(fake, [])["data"]["repository"]["b1"]["nodes"]
    assert found[0]["commits"]["nodes"][0]["commit"]["statusCheckRollup"] == {
        "state": "FAILURE"}
    assert "errors" in gql(fake, [f"I_{n}" for n in range(101)])


def test_a_merge_sets_merged_at_on_the_pull_request_and_on_its_issue_object(
        fake: FakeGitHub) -> None:
    """"Merge a pull request" (`PUT .../pulls/{n}/merge`): the PR is closed, `merged`, with
    `merged_at` and `merge_commit_sha` (schema `pull-request`); the issues list's object of the
    PR carries `pull_request.merged_at` (schema `issue`); closed unmerged, both stay null."""
    merged = fake.pulls.open_pr("o/r", "a")
    closed = fake.pulls.open_pr("o/r", "b")

    def merged_at(number: int) -> object:
        listed = requests.get(f"{fake.url}/repos/o/r/issues", params={"state": "all"},
                              timeout=5).json()
        return next(i for i in listed if i["number"] == number)["pull_request"]["merged_at"]

    assert merged_at(merged) is None
    resp = requests.put(f"{fake.url}/repos/o/r/pulls/{merged}/merge", json={}, timeout=5)
    assert resp.status_code == 200
    pr = requests.get(f"{fake.url}/repos/o/r/pulls/{merged}", timeout=5).json()
    assert pr["state"] == "closed" and pr["merged"] is True
    assert pr["merge_commit_sha"] == resp.json()["sha"]
    assert pr["merged_at"] is not None and pr["merged_at"] == pr["closed_at"]
    assert merged_at(merged) == pr["merged_at"]
    requests.patch(f"{fake.url}/repos/o/r/pulls/{closed}", json={"state": "closed"}, timeout=5)
    unmerged = requests.get(f"{fake.url}/repos/o/r/pulls/{closed}", timeout=5).json()
    assert unmerged["merged_at"] is None and unmerged["closed_at"] is not None
    assert merged_at(closed) is None


def test_a_commit_status_posted_counts_its_latest_per_context(fake: FakeGitHub) -> None:
    # "Create a commit status" (201); the combined status and the rollup take the latest
    # status of each context, case-insensitively
    fake.add_issue("o/r", "One")
    number = fake.pulls.open_pr("o/r", "jr2/issue-1", "main")
    sha = fake.pulls.pull("o/r", number).head_sha
    url = f"{fake.url}/repos/o/r/statuses/{sha}"
    made = requests.post(url, json={"state": "failure", "context": "CI"}, timeout=5)
    assert made.status_code == 201 and made.json()["context"] == "CI"
    assert fake.pulls.rollup(sha) == {"state": "FAILURE"}
    assert requests.post(url, json={"state": "success", "context": "ci"},
                         timeout=5).status_code == 201
    assert fake.pulls.rollup(sha) == {"state": "SUCCESS"}
    status = requests.get(f"{fake.url}/repos/o/r/commits/{sha}/status", timeout=5).json()
    assert (status["state"], status["total_count"]) == ("success", 1)
    assert requests.post(url, json={"state": "green"}, timeout=5).status_code == 422
    assert requests.post(url, json={"state": "pending"}, timeout=5).json()["context"] == "default"
