"""The feedback loop's REST reads against GitHub's own description: each request it sends (check
runs, the combined status, reviews, review comments, collaborator permission)
is a described operation, and each answer the fake serves validates (GraphQL has no vendored
description yet: it is left out here)."""

from __future__ import annotations

from typing import Any

from gh_helpers import make_adapter
from gh_openapi import operation, request_problems, response_problems

from jr2_core import Outcome
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub


def _loop(fake: FakeGitHub) -> list[dict[str, Any]]:
    fake.permissions.update(alice="write")
    n = fake.add_issue("o/r", "change")
    pool = make_adapter(fake.url, done_when="merged", on_success="review")
    pool.start_feedback(3, here=True)
    assert pool.claim(SnapshotItem(id=f"o/r#{n}", title="change"), "pool-1", 60)
    pr = fake.pulls.open_pr("o/r", f"jr2/issue-{n}")
    head = fake.pulls.pull("o/r", pr).head_sha
    fake.pulls.add_check("o/r", head, conclusion="failure", summary="1 test failed")
    fake.pulls.add_status("o/r", head, "error", context="ci/legacy")
    pool.finish(f"o/r#{n}", "pool-1", Outcome(status="done"), Attempt(1))  # into review
    fake.pulls.review("o/r", pr, "alice", "CHANGES_REQUESTED", "fix it",
                      comments=(("src/a.py", 3, "here"),))
    pool.snapshot()  # reads the feedback and sends the issue back
    item = SnapshotItem(id=f"o/r#{n}", title="change")
    assert pool.claim(item, "pool-1", 60)
    got = item.extra["feedback"]
    assert [c["name"] for c in got["checks"]] == ["ci", "ci/legacy"]
    assert [(c["path"], c["line"]) for c in got["comments"]] == [("src/a.py", 3)]
    return [e for e in fake.requests() if e["path"] != "/graphql"]


def test_the_loops_requests_and_the_fakes_answers_are_described() -> None:
    fake = FakeGitHub(capture=True).start()
    fake.next_number.setdefault("o/r", 1)
    try:
        sent = _loop(fake)
    finally:
        fake.stop()
    ops = {found[0] for e in sent
           if (found := operation("api.github.com", e["method"], e["path"])) is not None}
    assert {"/repos/{owner}/{repo}/commits/{ref}/check-runs",
            "/repos/{owner}/{repo}/commits/{ref}/status",
            "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
            "/repos/{owner}/{repo}/pulls/{pull_number}/comments"} <= ops
    problems = [p for e in sent
                for p in request_problems("api.github.com", e["method"], e["path"],
                                          e["query"], e["body"])]
    problems += [p for e in sent if e["status"] != 304
                 for p in response_problems("api.github.com", e["method"], e["path"],
                                            e["status"], e["data"])]
    assert problems == []
