"""What `jr2 ready --done-when merged --on-success review` pays for the feedback loop's report
(`feedback_stopped`) against the fake GitHub, counted from the fake's request log: issues held
in review whose threads cannot hold a loop pool's review marker cost no request beyond the list
and the judging query; one a loop pool put in review is still read and its stop reported."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr
from test_github_pulls_e2e import blocked_reasons

from jr2_core import Outcome
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.readyset import SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.client import GitHubClient
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.tracker import GitHubTracker

REPORT = ("--done-when", "merged", "--on-success", "review")


def into_review(fake: FakeGitHub, state: Path, *, loop: bool,
                count: int) -> list[tuple[int, int]]:
    """`count` (issue, PR) pairs: each issue claimed, given an open PR on jr2's branch and
    settled into review by a pool with the loop on (it records its worker's head) or off."""
    config = GitHubConfig(target="o/r", write_spacing=0.001, done_when="merged",
                          on_success="review")
    client = GitHubClient(fake.url, SecretStr("x"), label="github:o/r", write_spacing=0.001)
    pool = GitHubTracker(config, SourceEnv(state_dir=state), client=client)
    if loop:
        pool.start_feedback(3, here=False)
    out = []
    for i in range(count):
        number = fake.add_issue("o/r", f"issue {i}")
        assert pool.claim(SnapshotItem(id=f"o/r#{number}", title="x"), "w", 600)
        pr = fake.pulls.open_pr("o/r", f"jr2/issue-{number}")
        pool.finish(f"o/r#{number}", "w", Outcome(status="done"), Attempt(1))
        assert fake.issue("o/r", number).labels == ["jr2:in-review"]
        out.append((number, pr))
    return out


def test_issues_in_review_without_a_loop_cost_the_report_no_request(
        fake: FakeGitHub, tmp_path: Path) -> None:
    held = into_review(fake, tmp_path / "w", loop=False, count=5)
    fake.clear_log()
    reasons = blocked_reasons(fake, tmp_path, *REPORT)
    assert sorted(reasons) == sorted(f"o/r#{n}" for n, _ in held)
    assert [e["path"] for e in fake.requests() if "/comments" in e["path"]] == []
    assert [e["path"] for e in fake.requests()] == ["/repos/o/r/issues", "/graphql"]


def test_an_issue_a_loop_pool_put_in_review_is_still_read_and_its_stop_reported(
        fake: FakeGitHub, tmp_path: Path) -> None:
    plain = into_review(fake, tmp_path / "w", loop=False, count=3)
    [(looped, pr)] = into_review(fake, tmp_path / "l", loop=True, count=1)
    fake.pulls.push("o/r", pr)  # a person pushes to jr2's branch: the loop stops
    fake.clear_log()
    reasons = blocked_reasons(fake, tmp_path, *REPORT)
    read = [e["path"] for e in fake.requests() if "/comments" in e["path"]]
    assert read == [f"/repos/o/r/issues/{looped}/comments"]
    [stopped] = [r for r in reasons[f"o/r#{looped}"] if r["kind"] == "feedback_stopped"]
    assert stopped["reason"].startswith(f"a person pushed to jr2/issue-{looped}")
    assert all(r["kind"] != "feedback_stopped" for n, _ in plain for r in reasons[f"o/r#{n}"])
