"""Stories of `--done-when merged` driven through `jr2 work` and `jr2 ready` against the fake
GitHub: the worker opens and merges its pull request through the fake's REST API, as an agent
with `gh` would, and jr2 judges readiness by what merged where."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jr2_sources.testing.fakes.github_server import FakeGitHub

HERE = Path(__file__).resolve().parent
JR2 = [sys.executable, "-m", "jr2_core"]
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]


def run(fake: FakeGitHub, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x",
               JR2_STATE_DIR=str(tmp_path / ".jr2"))
    return subprocess.run([*JR2, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def work(fake: FakeGitHub, tmp_path: Path, plan: dict[str, list[str]],
         *options: str) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    """`jr2 work github:o/r OPTIONS -- gh_pr_worker.py`; the result and the (id, branch) runs."""
    log = tmp_path / "runs.log"
    res = run(fake, tmp_path, "work", "github:o/r", "--cap", "1", *FAST, *options, "--",
              sys.executable, str(HERE / "gh_pr_worker.py"), fake.url, str(log),
              json.dumps(plan))
    runs = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return res, runs


def seed_chain(fake: FakeGitHub) -> None:
    """#1 blocks #2 natively (GitHub's dependencies) and #3 in its body."""
    fake.add_issue("o/r", "Blocker")
    fake.add_issue("o/r", "Blocked natively")
    fake.add_dependency("o/r", 2, 1)
    fake.add_issue("o/r", "Blocked in text", "Depends on #1")


def blocked_reasons(fake: FakeGitHub, tmp_path: Path, *options: str) -> dict[str, list[dict]]:
    res = run(fake, tmp_path, "ready", "github:o/r", "--json", *options)
    assert res.returncode == 0, res.stderr
    return {e["id"]: e["reasons"] for e in json.loads(res.stdout)["blocked"]}


def test_a_squash_merge_into_a_feature_branch_releases_the_dependents(
        fake: FakeGitHub, tmp_path: Path) -> None:
    """GitHub closes nothing on a merge into a feature branch; jr2 sees the merge of the PR
    whose head is jr2's branch for #1, and runs the dependents."""
    seed_chain(fake)
    res, runs = work(fake, tmp_path, {"o/r#1": ["open feature", "squash"]},
                     "--done-when", "merged", "--base", "feature", "--on-success", "nothing")
    assert res.returncode == 0, res.stderr
    assert runs[0] == ["o/r#1", "jr2/issue-1", "-"]
    assert sorted(r[0] for r in runs[1:]) == ["o/r#2", "o/r#3"]
    assert fake.issue("o/r", 1).state == "open"  # a feature-branch merge closes nothing
    pr = fake.pulls.pull("o/r", 4)
    assert pr.merged and pr.base == "feature" and pr.head == "jr2/issue-1"
    handed = [json.loads(line) for line in (tmp_path / "runs.log.blockers").read_text()
              .splitlines()]
    merge_sha = pr.merge_sha
    assert {"o/r#2": [{"id": "o/r#1", "state": "done", "pr": 4,
                       "pr_url": "https://github.com/o/r/pull/4", "head_branch": "jr2/issue-1",
                       "merge_commit": merge_sha}]} in handed


def test_red_checks_hold_the_dependents_with_merged_not_green(
        fake: FakeGitHub, tmp_path: Path) -> None:
    seed_chain(fake)
    opts = ("--done-when", "merged", "--base", "feature", "--require-checks")
    res, runs = work(fake, tmp_path, {"o/r#1": ["open feature", "squash", "check failure"]},
                     *opts, "--on-success", "nothing")
    assert res.returncode == 3, res.stderr  # deadlocked: the dependents wait for green checks
    assert [r[0] for r in runs] == ["o/r#1"]
    pr_url = "https://github.com/o/r/pull/4"
    held = {"kind": "merged_not_green", "ref": "o/r#1", "pr": pr_url}
    assert blocked_reasons(fake, tmp_path, *opts) == {"o/r#2": [held], "o/r#3": [held]}
    explained = run(fake, tmp_path, "ready", "github:o/r", *opts, "--explain", "o/r#2")
    assert explained.returncode == 0, explained.stderr
    assert f"merged, checks not green: {pr_url}" in explained.stdout
    # without --require-checks the merge alone is enough
    assert blocked_reasons(fake, tmp_path, "--done-when", "merged", "--base", "feature") == {}


def test_a_pull_request_closed_unmerged_leaves_the_blocker_open(
        fake: FakeGitHub, tmp_path: Path) -> None:
    seed_chain(fake)
    opts = ("--done-when", "merged", "--base", "feature")
    pr = fake.pulls.open_pr("o/r", "jr2/issue-1", "feature")
    waits = {"kind": "waits_for_merge", "ref": "o/r#1", "pr": f"https://github.com/o/r/pull/{pr}"}
    assert blocked_reasons(fake, tmp_path, *opts) == {"o/r#2": [waits], "o/r#3": [waits]}
    fake.pulls.close("o/r", pr)
    still = {"kind": "open_blocker", "ref": "o/r#1", "held_by": None}
    assert blocked_reasons(fake, tmp_path, *opts) == {"o/r#2": [still], "o/r#3": [still]}
    res, runs = work(fake, tmp_path, {"o/r#1": ["open feature", "merge"]}, *opts,
                     "--on-success", "nothing")
    assert res.returncode == 0, res.stderr
    assert runs[0][0] == "o/r#1" and len(runs) == 3


def test_closing_keywords_count_only_into_the_default_branch(
        fake: FakeGitHub, tmp_path: Path) -> None:
    """A PR not on jr2's branch is found by `closedByPullRequestsReferences`, which GitHub fills
    only for PRs into the default branch; `--base` defaults to that branch."""
    seed_chain(fake)
    other = fake.pulls.open_pr("o/r", "someone/fix", "feature", body="Fixes #1")
    still = {"kind": "open_blocker", "ref": "o/r#1", "held_by": None}
    assert blocked_reasons(fake, tmp_path, "--done-when", "merged")["o/r#2"] == [still]
    fake.pulls.close("o/r", other)
    pr = fake.pulls.open_pr("o/r", "someone/fix2", body="Fixes #1")
    waits = {"kind": "waits_for_merge", "ref": "o/r#1", "pr": f"https://github.com/o/r/pull/{pr}"}
    assert blocked_reasons(fake, tmp_path, "--done-when", "merged")["o/r#2"] == [waits]
    fake.pulls.merge("o/r", pr, "squash")  # into main: GitHub closes #1 itself
    assert fake.issue("o/r", 1).state == "closed"
    assert blocked_reasons(fake, tmp_path, "--done-when", "merged") == {}


def test_base_options_need_done_when_merged(fake: FakeGitHub, tmp_path: Path) -> None:
    res = run(fake, tmp_path, "ready", "github:o/r", "--require-checks")
    assert res.returncode != 0 and "--done-when merged" in res.stderr
    assert "Traceback" not in res.stderr


def test_stack_runs_a_three_item_chain_as_three_stacked_branches(
        fake: FakeGitHub, tmp_path: Path) -> None:
    """#1 <- #2 <- #3, nothing merges: each dependent starts once its one blocker has an open PR
    with green head checks, from that PR's head branch, and opens its own PR into it."""
    fake.add_issue("o/r", "Base change")
    fake.add_issue("o/r", "On top")
    fake.add_dependency("o/r", 2, 1)
    fake.add_issue("o/r", "On top of that", "Depends on #2")
    steps = ["open stacked", "headcheck success"]
    plan = {f"o/r#{n}": steps for n in (1, 2, 3)}
    res, runs = work(fake, tmp_path, plan, "--done-when", "merged", "--stack",
                     "--require-checks", "--on-success", "nothing")
    assert res.returncode == 0, res.stderr
    assert runs == [["o/r#1", "jr2/issue-1", "-"],
                    ["o/r#2", "jr2/issue-2", "jr2/issue-1"],
                    ["o/r#3", "jr2/issue-3", "jr2/issue-2"]]
    prs = sorted(fake.pulls.pulls.values(), key=lambda p: p.number)
    assert [(p.head, p.base, p.state) for p in prs] == [
        ("jr2/issue-1", "main", "open"), ("jr2/issue-2", "jr2/issue-1", "open"),
        ("jr2/issue-3", "jr2/issue-2", "open")]


def test_stack_waits_for_green_heads_and_for_merges_with_two_blockers(
        fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_issue("o/r", "A")
    fake.add_issue("o/r", "B")
    fake.add_issue("o/r", "Needs A", "Depends on #1")
    fake.add_issue("o/r", "Needs A and B", "Depends on #1, #2")
    first = fake.pulls.open_pr("o/r", "jr2/issue-1")
    fake.pulls.open_pr("o/r", "jr2/issue-2")
    opts = ("--done-when", "merged", "--stack", "--require-checks")
    blocked = blocked_reasons(fake, tmp_path, *opts)
    assert [r["kind"] for r in blocked["o/r#3"]] == ["waits_for_merge"]  # no checks yet
    fake.pulls.add_check("o/r", fake.pulls.pull("o/r", first).head_sha)
    res = run(fake, tmp_path, "ready", "github:o/r", "--json", *opts)
    data = json.loads(res.stdout)
    ready = {e["id"]: e for e in data["ready"]}
    assert ready["o/r#3"]["extra"]["stack_on"] == "jr2/issue-1"
    assert [r["kind"] for r in {e["id"]: e for e in data["blocked"]}["o/r#4"]["reasons"]] == [
        "waits_for_merge", "waits_for_merge"]  # two blockers: it waits for the merges


REVIEW = ("--done-when", "merged", "--on-success", "review")


def test_review_a_pr_closed_unmerged_puts_the_item_back(fake: FakeGitHub,
                                                         tmp_path: Path) -> None:
    fake.add_issue("o/r", "Change")
    fake.add_issue("o/r", "Needs the change", "Depends on #1")
    plan = {"o/r#1": [["open main"], ["open main", "squash"]]}
    res, runs = work(fake, tmp_path, plan, *REVIEW)
    assert res.returncode == 3, res.stderr  # #1 in review, #2 waits for its merge
    issue = fake.issue("o/r", 1)
    assert issue.state == "open" and issue.labels == ["jr2:in-review"]  # claim released
    waits = blocked_reasons(fake, tmp_path, *REVIEW)
    assert waits["o/r#1"] == [{"kind": "waits_for_merge", "ref": "https://github.com/o/r/pull/3",
                               "pr": "https://github.com/o/r/pull/3"}]
    assert [r["kind"] for r in waits["o/r#2"]] == ["waits_for_merge"]
    fake.pulls.close("o/r", 3)  # a reviewer closes it unmerged
    res, runs = work(fake, tmp_path, plan, *REVIEW)
    assert res.returncode == 0, res.stderr
    assert [r[0] for r in runs] == ["o/r#1", "o/r#1", "o/r#2"]  # offered again, then #2
    issue = fake.issue("o/r", 1)
    assert issue.state == "closed" and issue.state_reason == "completed"  # jr2 closed it
    assert "jr2:in-review" not in issue.labels
    done = [c for c in fake.comments_of("o/r", 1) if "jr2:done" in c.body]
    assert len(done) == 2  # the durable record of two attempts: two settled claims


def test_review_a_merge_into_the_base_closes_the_issue(fake: FakeGitHub,
                                                       tmp_path: Path) -> None:
    fake.add_issue("o/r", "Change")
    fake.add_issue("o/r", "Needs the change")
    fake.add_dependency("o/r", 2, 1)
    res, runs = work(fake, tmp_path, {"o/r#1": ["open main"]}, *REVIEW)
    assert res.returncode == 3, res.stderr
    fake.pulls.merge("o/r", 3, "squash")  # no closing keyword: GitHub leaves #1 open
    assert fake.issue("o/r", 1).state == "open"
    fake.clear_log()
    assert blocked_reasons(fake, tmp_path, *REVIEW) == {}  # #1 landed, #2 is ready
    writes = [e for e in fake.requests() if e["method"] != "GET" and e["path"] != "/graphql"]
    assert writes == []  # a dry run never settles a review
    assert fake.issue("o/r", 1).labels == ["jr2:in-review"]
    res, runs = work(fake, tmp_path, {}, *REVIEW)
    assert res.returncode == 0, res.stderr
    assert [r[0] for r in runs] == ["o/r#1", "o/r#2"]
    issue = fake.issue("o/r", 1)
    assert issue.state == "closed" and issue.state_reason == "completed"
    assert issue.labels == []


def test_a_graphql_failure_is_one_clear_line(fake: FakeGitHub, tmp_path: Path) -> None:
    seed_chain(fake)
    fake.fault(200, path=r"^/graphql$", message="Field 'blocking' doesn't exist on type 'Issue'")
    res = run(fake, tmp_path, "ready", "github:o/r", "--done-when", "merged")
    assert res.returncode == 4, res.stderr
    assert "GraphQL query failed: no data in the answer" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    # GraphQL's own way: HTTP 200 with `errors` (e.g. an older GitHub Enterprise Server)
    fake.pulls.graphql = lambda body: (  # type: ignore[method-assign]
        200, {"errors": [{"message": "Field 'blocking' doesn't exist on type 'Issue'"}]}, {})
    res = run(fake, tmp_path, "ready", "github:o/r", "--done-when", "merged")
    assert res.returncode == 4
    assert "GraphQL query failed: Field 'blocking' doesn't exist on type 'Issue'" in res.stderr


def test_a_blocker_outside_the_label_filter_counts_as_merged(
        fake: FakeGitHub, tmp_path: Path) -> None:
    """The pool selects `frontend`; its item's blocker is a `backend` issue whose PR merged into
    the base: the blocker is judged by its PR though the pool never lists it, so the item is
    ready and `jr2 work` runs it."""
    fake.add_issue("o/r", "Backend API", labels=["backend"])
    fake.add_issue("o/r", "Frontend page", labels=["frontend"])
    fake.add_dependency("o/r", 2, 1)
    fake.add_issue("o/r", "Frontend form", "Depends on #1", labels=["frontend"])
    pr = fake.pulls.open_pr("o/r", "jr2/issue-1", "feature")
    fake.pulls.merge("o/r", pr)
    opts = ("--label", "frontend", "--done-when", "merged", "--base", "feature")
    assert blocked_reasons(fake, tmp_path, *opts) == {}
    res = run(fake, tmp_path, "ready", "github:o/r", "--json", "--detail", *opts)
    assert res.returncode == 0, res.stderr
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["o/r#2", "o/r#3"]
    res, runs = work(fake, tmp_path, {}, *opts, "--on-success", "nothing")
    assert res.returncode == 0, res.stderr
    assert sorted(r[0] for r in runs) == ["o/r#2", "o/r#3"]
    assert fake.issue("o/r", 1).state == "open"  # outside the filter: never touched
