"""GitHub deltas under `--done-when merged` (`trackers/github/mergedelta.py`) against the fake
GitHub: pull requests opened, merged, closed, reopened and their closing references edited,
seen through deltas, give the Ready-set (and the hand-off) a full reading gives; an unchanged
poll and a claim's reading cost <= 2 requests at N = 1,000; a merge costs the list, one GraphQL
query, the issue and one GET per issue naming it."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from gh_helpers import make_client
from test_github_deltas import counting, deliver, reader_of, shape

from jr2_core import Outcome
from jr2_sources.capabilities.deltas.sincewindow import DEFAULT_OVERLAP, SWEEP_EVERY
from jr2_sources.readyset import ReadySet, compute_ready_set
from jr2_sources.registry import SourceEnv
from jr2_sources.testing.fakes.github_server import FakeGitHub, seed
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.pulls import item_branch
from jr2_sources.trackers.github.tracker import GitHubTracker

MERGED = {"done_when": "merged", "detail": False}
REACH = DEFAULT_OVERLAP + SWEEP_EVERY + 1  # seconds: past the furthest a delta lists back


def make_adapter(options: dict[str, Any], fake: FakeGitHub) -> GitHubTracker:
    """A writing adapter with `--done-when merged` and `options` (`base` is an option here)."""
    config = GitHubConfig(target="o/r", write_spacing=0.001, claim_spread=0.001,
                          **{**MERGED, **options})
    client = make_client(fake.url)
    client.label = "github:o/r"
    return GitHubTracker(config, SourceEnv(state_dir=Path("/nonexistent-state")), client=client)


def merged_shape(rs: ReadySet) -> dict[str, Any]:
    """`shape` plus what a worker is handed: each ready item's blockers (state, PR, merge)."""
    out = shape(rs)
    out["hand_off"] = sorted(
        (e.item.id, sorted((b["id"], b["state"], b["pr"], b["merge_commit"])
                           for b in e.item.extra.get("blockers", [])))
        for e in rs.ready)
    out["reasons"] = sorted(  # the PR where a reason names it (`waits_for_merge`, ...)
        (e.item.id, sorted((b.id, b.state, b.pr if b.state in ("unmerged", "not_green") else "")
                           for b in e.item.blockers)) for e in rs.blocked)
    return out


def full(fake: FakeGitHub, options: dict[str, Any]) -> dict[str, Any]:
    fresh = make_adapter(options, fake)
    try:
        return merged_shape(compute_ready_set(fresh.snapshot(), now=datetime.now(UTC),
                                              children_block=True))
    finally:
        fresh.close()


def _open(fake: FakeGitHub, numbers: list[int]) -> list[int]:
    return [n for n in numbers if ("o/r", n) in fake.issues
            and fake.issue("o/r", n).state == "open"]


def _edit(fake: FakeGitHub, a: GitHubTracker, other: GitHubTracker, rng: random.Random,
          numbers: list[int], prs: list[int], base: str, stack: bool = False) -> str:
    """One tracker-side edit, chosen at random: mostly pull requests (`stack`: also checks
    finishing on an open PR's head commit)."""
    open_ = _open(fake, numbers)
    n = rng.choice(open_ or numbers)
    pulls = fake.pulls
    open_prs = [p for p in prs if pulls.pull("o/r", p).state == "open"]
    closed_prs = [p for p in prs if pulls.pull("o/r", p).state == "closed"
                  and not pulls.pull("o/r", p).merged]
    op = rng.choice(["pr_own", "pr_own", "pr_closing", "merge", "merge", "merge", "close_pr",
                     "reopen_pr", "edit_pr", "check", "close", "reopen", "block", "body",
                     "claim", "new", "review", *(["head_check"] * 3 if stack else [])])
    pr = rng.choice(open_prs or closed_prs or [0])
    if op == "head_check" and open_prs:  # what stacking waits for: checks on an open PR's head
        pulls.add_check("o/r", pulls.pull("o/r", pr).head_sha, name=f"c{rng.random()}",
                        status=rng.choice(["completed", "completed", "in_progress"]),
                        conclusion=rng.choice(["success", "success", "failure"]))
        return f"{op} #{pr}"
    if op == "pr_own" and open_:
        prs.append(pulls.open_pr("o/r", item_branch(n), base))
        return f"{op} #{prs[-1]} for #{n}"
    elif op == "pr_closing" and open_:
        prs.append(pulls.open_pr("o/r", f"fix-{n}-{len(prs)}", None, f"Closes #{n}"))
        return f"{op} #{prs[-1]} for #{n}"
    elif op == "merge" and open_prs:
        sha = pulls.merge("o/r", pr, rng.choice(["merge", "squash"]))
        if rng.random() < 0.5:
            pulls.add_check("o/r", sha, conclusion=rng.choice(["success", "failure"]))
    elif op == "close_pr" and open_prs:
        pulls.close("o/r", pr)
    elif op == "reopen_pr" and closed_prs:
        pr = rng.choice(closed_prs)
        pulls.reopen("o/r", pr)
    elif op == "edit_pr" and open_prs:
        pulls.edit_body("o/r", pr, rng.choice(["", f"Closes #{n}", f"Fixes o/r#{n}, see #{n}"]))
    elif op == "check":
        merged = [p for p in prs if pulls.pull("o/r", p).merged]
        if merged:
            sha = pulls.pull("o/r", rng.choice(merged)).merge_sha
            assert sha is not None
            pulls.add_check("o/r", sha, name=f"c{rng.random()}", conclusion="success")
    elif op == "close" and open_:
        fake.close_issue("o/r", n)
    elif op == "reopen":
        closed = [m for m in numbers if fake.issue("o/r", m).state == "closed"]
        if not closed:
            return "nothing"
        fake.reopen_issue("o/r", rng.choice(closed))
    elif op == "block" and len(open_) > 1:
        blocker = rng.choice([m for m in open_ if m != n])
        fake.add_dependency("o/r", n, blocker)
        deliver(a, "issue_dependencies", blocked_issue=n, blocking_issue=blocker)
    elif op == "body" and open_:
        fake.edit_body("o/r", n, f"Depends on #{rng.choice(numbers)}")
    elif op == "claim" and open_:
        item = other.reader.build_item(fake.issue_json(fake.url, fake.issue("o/r", n)), [],
                                       set())
        other.claim(item, "pool-b", 3600)  # outlives the clock the test advances
    elif op == "new":
        numbers.append(fake.add_issue("o/r", "new one", created=fake.now()))
    elif op == "review" and open_:
        labels = fake.issue("o/r", n).labels
        fake.set_labels("o/r", n, [x for x in labels if x != "jr2:in-review"]
                        if "jr2:in-review" in labels else [*labels, "jr2:in-review"])
    else:
        return "nothing"
    return f"{op} #{pr if op.endswith('_pr') or op in ('merge', 'check') else n}"


@pytest.mark.parametrize("options", [{}, {"base": "feature"}, {"require_checks": True},
                                     {"on_success": "review"}, {"stack": True},
                                     {"stack": True, "require_checks": True}],
                         ids=["default", "feature", "checks", "review", "stack", "stack-checks"])
@pytest.mark.parametrize("seed_", [1, 2, 3, 41, 52, 72, 79, 90])  # 1-139 clean once
def test_pull_requests_seen_through_deltas_give_the_full_readings_ready_set(
        fake: FakeGitHub, seed_: int, options: dict[str, Any]) -> None:
    rng = random.Random(seed_)
    numbers = []
    for i in range(16):
        body = f"Depends on #{i - 2}" if i % 5 == 3 and i > 2 else ""
        numbers.append(fake.add_issue("o/r", f"issue {i}", body))
    for blocked, blocker in [(5, 1), (6, 5), (9, 2), (12, 9), (13, 2), (14, 1)]:
        fake.add_dependency("o/r", blocked, blocker)
    prs: list[int] = []
    a = make_adapter(options, fake)
    other = make_adapter({}, fake)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    done = []
    for _ in range(40):
        done.append(_edit(fake, a, other, rng, numbers, prs, options.get("base") or "main",
                          bool(options.get("stack"))))
        fake.advance(REACH)  # what the edit did not touch is out of every delta's reach
        writes = a.client.stats.writes
        reader.read().ready.close()
        if a.client.stats.writes != writes:  # a review ended (closed, relabelled) after the
            reader.read().ready.close()  # reading: the next one sees it, as the full one does
        assert reader.last is not None
        assert merged_shape(reader.last) == full(fake, options), ", ".join(done)
    assert kinds.count("full") == 1, kinds  # deltas, not full readings


def _sent(fake: FakeGitHub, since: int) -> list[str]:
    return [r["path"] for r in fake.requests()[since:]]


@pytest.mark.parametrize("stack", [False, True], ids=["plain", "stack"])
def test_at_n_1000_a_poll_and_a_claim_cost_at_most_2_requests_a_merge_3_and_one_per_dependent(
        fake: FakeGitHub, stack: bool) -> None:
    seed(fake, "o/r", 1000, deps=300, prs=0)
    options = {"on_success": "nothing", "stack": stack}
    a = make_adapter(options, fake)
    reader = reader_of(a)
    reader.read().ready.close()
    reader.read().ready.close()

    def read() -> list[str]:
        before = len(fake.requests())
        reader.read().ready.close()
        return _sent(fake, before)

    costs: dict[str, list[int]] = {"unchanged": [], "claim": [], "settle": []}
    worked: set[str] = set()
    blockers = sorted({b[1] for v in fake.deps.values() for b in v})
    for number in blockers[:5]:  # issues that block something: their PRs are judged
        view = reader.read()
        item = next(e.item for e in reader.last.ready if e.item.id == f"o/r#{number}") if (
            reader.last is not None and any(e.item.id == f"o/r#{number}"
                                             for e in reader.last.ready)) else None
        view.ready.close()
        if item is None:
            continue
        costs["unchanged"].append(len(read()))
        assert a.claim(item, "pool-a", 600)
        costs["claim"].append(len(read()))
        a.finish(item.id, "pool-a", Outcome("done"))  # --on-success nothing: stays open
        worked.add(item.id)
        costs["settle"].append(len(read()))
    assert len(costs["claim"]) >= 3, costs
    assert max(costs["unchanged"]) == 1 and max(costs["claim"]) == 1, costs
    assert max(costs["settle"]) == 1, costs  # our settle left it open: no GraphQL query

    blocker = blockers[-1]  # not claimed above
    dependents = {k[1] for k, v in fake.deps.items() if ("o/r", blocker) in v}
    pr = fake.pulls.open_pr("o/r", item_branch(blocker), "main")
    holders = sorted(f"/repos/o/r/issues/{d}" for d in dependents)
    opened = read()  # a PR first seen: its head (1 query), then its issue judged (1 query)
    assert opened[:3] == ["/repos/o/r/issues", "/graphql", "/graphql"], opened
    assert sorted(opened[3:]) == holders, opened  # open -> unmerged: the items naming it
    fake.pulls.merge("o/r", pr)  # into main without a closing keyword: the issue stays open
    merged = read()  # the list, its issue judged, the issue itself (it leaves), the holders
    assert merged[:2] == ["/repos/o/r/issues", "/graphql"], merged
    assert sorted(merged[2:]) == sorted([f"/repos/o/r/issues/{blocker}", *holders]), merged
    assert reader.last is not None
    assert f"o/r#{blocker}" not in {e.item.id for e in reader.last.ready}  # landed: left
    want = full(fake, options)  # less what this process did (left open)
    want = {k: [e for e in v if e[0] not in worked] for k, v in want.items()}
    assert merged_shape(reader.last) == want


def test_a_closing_reference_edited_onto_another_issue_moves_the_judgement(
        fake: FakeGitHub) -> None:
    for i in range(4):
        fake.add_issue("o/r", f"issue {i}")
    fake.add_dependency("o/r", 3, 1)
    fake.add_dependency("o/r", 4, 2)
    a = make_adapter({}, fake)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    pr = fake.pulls.open_pr("o/r", "fix", None, "Closes #1")
    reader.read().ready.close()
    assert reader.last is not None
    reasons = {e.item.id: [(b.id, b.state) for b in e.item.blockers] for e in reader.last.blocked}
    assert reasons["o/r#3"] == [("o/r#1", "unmerged")] and reasons["o/r#4"] == [("o/r#2", "open")]
    fake.pulls.edit_body("o/r", pr, "Closes #2")
    reader.read().ready.close()
    reasons = {e.item.id: [(b.id, b.state) for b in e.item.blockers] for e in reader.last.blocked}
    assert reasons["o/r#3"] == [("o/r#1", "open")] and reasons["o/r#4"] == [("o/r#2", "unmerged")]
    assert kinds == ["full", "delta", "delta"]
    assert merged_shape(reader.last) == full(fake, {})


def test_a_dependent_reopened_after_its_blocker_was_judged_is_named_by_it(
        fake: FakeGitHub) -> None:
    """#2 waits on #1; #1 is judged again (its PR opened) while #2 is closed, so its `blocking`
    list leaves #2 out, and nothing moves #1's `updated_at` when #2 reopens: the delta that
    lists #2 reopened judges #1 again, and #2 waits on #1's PR as the full reading says."""
    fake.add_issue("o/r", "base")
    fake.add_issue("o/r", "needs base")
    fake.add_dependency("o/r", 2, 1)
    a = make_adapter({}, fake)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    for step in (lambda: fake.close_issue("o/r", 2),
                 lambda: fake.pulls.open_pr("o/r", item_branch(1), "main"),
                 lambda: fake.reopen_issue("o/r", 2)):
        step()
        fake.advance(REACH)  # #1 is out of every delta's reach
        reader.read().ready.close()
    assert reader.last is not None
    reasons = {e.item.id: [(b.id, b.state) for b in e.item.blockers] for e in reader.last.blocked}
    assert reasons["o/r#2"] == [("o/r#1", "unmerged")], reasons
    assert merged_shape(reader.last) == full(fake, {})
    assert kinds.count("full") == 1, kinds


def test_stack_reads_deltas_and_sees_a_blockers_head_checks_finish(fake: FakeGitHub) -> None:
    """Checks finishing on an open PR's head move nothing the since-list shows: the blocker a
    stacked item would start on is judged again at every delta (one GraphQL query), so its
    dependent becomes ready, stacked on the PR's head, at the next delta, and goes back to
    waiting when a later check fails; with nothing waiting, a delta asks no GraphQL."""
    for title in ("base", "on top", "other"):
        fake.add_issue("o/r", title)
    fake.add_dependency("o/r", 2, 1)
    a = make_adapter({"stack": True, "require_checks": True}, fake)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    pr = fake.pulls.open_pr("o/r", item_branch(1), "main")
    reader.read().ready.close()
    assert reader.last is not None
    assert "o/r#2" in {e.item.id for e in reader.last.blocked}  # no checks yet: it waits

    def read() -> list[str]:
        before = len(fake.requests())
        reader.read().ready.close()
        return _sent(fake, before)

    assert read() == ["/repos/o/r/issues", "/graphql"]  # unchanged, #1 waits: 2 requests
    fake.pulls.add_check("o/r", fake.pulls.pull("o/r", pr).head_sha)  # green
    sent = read()
    assert sent[:2] == ["/repos/o/r/issues", "/graphql"], sent
    ready = {e.item.id: e.item for e in reader.last.ready}
    assert ready["o/r#2"].extra["stack_on"] == item_branch(1)
    assert merged_shape(reader.last) == full(fake, {"stack": True, "require_checks": True})
    fake.pulls.add_check("o/r", fake.pulls.pull("o/r", pr).head_sha, name="late",
                         conclusion="failure")
    read()
    assert "o/r#2" in {e.item.id for e in reader.last.blocked}
    assert merged_shape(reader.last) == full(fake, {"stack": True, "require_checks": True})
    fake.pulls.add_check("o/r", fake.pulls.merge("o/r", pr))  # merged, green
    read()
    assert read() == ["/repos/o/r/issues"]  # nothing waits now: no GraphQL
    assert merged_shape(reader.last) == full(fake, {"stack": True, "require_checks": True})
    assert kinds.count("full") == 1, kinds


def test_a_pr_merged_through_the_rest_endpoint_reaches_the_delta_with_merged_at(
        fake: FakeGitHub) -> None:
    """The merge button's endpoint (`PUT .../pulls/{n}/merge`): the next delta's since-list
    returns the PR with `pull_request.merged_at` set (the issue schema's field), and the issue
    whose jr2 branch it was lands (leaves the Ready-set) as a full reading says."""
    import requests

    fake.add_issue("o/r", "base")
    fake.add_issue("o/r", "needs base")
    fake.add_dependency("o/r", 2, 1)
    a = make_adapter({}, fake)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    pr = fake.pulls.open_pr("o/r", item_branch(1))
    reader.read().ready.close()
    listed: list[dict[str, Any]] = []
    get = a.reader.client.get

    def spy(path: str, *args: Any, **kwargs: Any) -> Any:
        resp = get(path, *args, **kwargs)
        if path == "/repos/o/r/issues" and isinstance(resp.data, list):
            listed.extend(resp.data)
        return resp

    a.reader.client.get = spy  # type: ignore[method-assign]
    assert requests.put(f"{fake.url}/repos/o/r/pulls/{pr}/merge", json={"merge_method": "squash"},
                        timeout=5).status_code == 200
    reader.read().ready.close()
    seen = [i for i in listed if i["number"] == pr]
    assert seen and seen[-1]["pull_request"]["merged_at"] is not None
    assert reader.last is not None
    assert {e.item.id for e in reader.last.ready} == {"o/r#2"}  # #1 landed: left
    assert merged_shape(reader.last) == full(fake, {})
    assert kinds == ["full", "delta", "delta"]


@pytest.mark.parametrize("on_success", ["nothing", "review"])
def test_our_settles_that_leave_issues_open_cost_the_next_delta_no_graphql(
        fake: FakeGitHub, on_success: str) -> None:
    """A settle of this process that leaves its issue open (`--on-success nothing`, or
    `review` with its PR open) is its own write: the next delta judges nothing for it (the
    settle into review read the PR already), and still gives the full reading's Ready-set."""
    for i in range(8):
        fake.add_issue("o/r", f"issue {i}")
    for blocked, blocker in [(2, 1), (3, 2), (5, 4), (6, 4), (8, 7)]:
        fake.add_dependency("o/r", blocked, blocker)
    options = {"on_success": on_success}
    a = make_adapter(options, fake)
    reader = reader_of(a)
    reader.read().ready.close()
    worked: set[str] = set()

    def read() -> list[str]:
        before = len(fake.requests())
        reader.read().ready.close()
        return _sent(fake, before)

    for number in (1, 4, 7):  # each blocks something: its PRs are judged
        assert reader.last is not None
        item = next(e.item for e in reader.last.ready if e.item.id == f"o/r#{number}")
        assert a.claim(item, "pool-a", 600)
        read()
        fake.pulls.open_pr("o/r", item_branch(number), "main")  # the worker's PR, open
        read()  # seen while held: its head, then its issue judged
        a.finish(item.id, "pool-a", Outcome("done"))
        worked.add(item.id)
        sent = read()
        assert "/graphql" not in sent, sent
        assert reader.last is not None
        want = full(fake, options)  # less what this process settled (never offered again)
        want = {k: [e for e in v if e[0] not in worked] for k, v in want.items()}
        assert merged_shape(reader.last) == want
        assert read() == ["/repos/o/r/issues"]  # unchanged


def test_a_pr_linked_from_the_sidebar_is_seen_through_the_repositorys_issue_events(
        fake: FakeGitHub) -> None:
    """A sidebar link moves no `updated_at` (the fake's worst case): the repository's issue
    events (`connected`, `disconnected`), read once a minute, mark the issue and the PR, so the
    next delta judges the issue again and gives the full reading's Ready-set."""
    fake.add_issue("o/r", "base")
    fake.add_issue("o/r", "needs base")
    fake.add_dependency("o/r", 2, 1)
    a = make_adapter({}, fake)
    assert a.reader.changes is not None and a.reader.changes.links is not None
    now = [1000.0]
    a.reader.changes.links.clock = lambda: now[0]
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    pr = fake.pulls.open_pr("o/r", "feature-x")  # no closing keyword, not jr2's branch
    reader.read().ready.close()

    def read() -> list[str]:
        before = len(fake.requests())
        reader.read().ready.close()
        return _sent(fake, before)

    def reason() -> list[tuple[str, str]]:
        assert reader.last is not None
        return [(b.id, b.state) for e in reader.last.blocked if e.item.id == "o/r#2"
                for b in e.item.blockers]

    assert reason() == [("o/r#1", "open")]
    fake.pulls.link("o/r", pr, 1)
    assert read() == ["/repos/o/r/issues"]  # within the minute: not read yet
    now[0] += 61
    sent = read()
    assert sent[:2] == ["/repos/o/r/issues", "/repos/o/r/issues/events"], sent
    assert reason() == [("o/r#1", "unmerged")]
    assert merged_shape(reader.last) == full(fake, {})
    assert read() == ["/repos/o/r/issues"]
    fake.pulls.unlink("o/r", pr, 1)
    now[0] += 61
    read()
    assert reason() == [("o/r#1", "open")]
    assert merged_shape(reader.last) == full(fake, {})
    now[0] += 61
    assert read() == ["/repos/o/r/issues", "/repos/o/r/issues/events"]  # a 304: nothing new
    assert kinds.count("full") == 1, kinds


def test_a_settles_read_older_than_the_last_full_reading_is_not_taken_as_the_judgement(
        fake: FakeGitHub) -> None:
    """A settle into review reads the issue's PRs; when a full reading ends after that read
    began, the full reading's judgement stands (the PR merged in between)."""
    fake.add_issue("o/r", "base")
    fake.add_issue("o/r", "needs base")
    fake.add_dependency("o/r", 2, 1)
    a = make_adapter({"on_success": "review"}, fake)
    assert a.reader.changes is not None and a.reader.changes.merges is not None
    merges, pulls = a.reader.changes.merges, a.reader.pulls
    assert pulls is not None
    a.changes()
    pr = fake.pulls.open_pr("o/r", item_branch(1))
    a.changes()
    assert a.reader.state_of(1) == "unmerged"
    epoch = merges.epoch  # the settle's read begins
    issue = a.client.get("/repos/o/r/issues/1").data
    links = pulls.read([(1, str(issue["node_id"]))])
    fake.pulls.merge("o/r", pr)  # no closing keyword: #1 stays open, landed
    fake.advance(30)  # past the since-window's overlap: the next delta does not list the PR
    a.changes(full=True)
    assert a.reader.state_of(1) == "done"
    merges.left_open(1, links, issue, epoch)  # the settle ends: its read is older
    a.changes()
    assert a.reader.state_of(1) == "done"


def test_a_cycle_of_issues_with_open_pull_requests_reads_as_the_full_reading(
        fake: FakeGitHub) -> None:
    """#1 and #2 block each other and #1 blocks #3; both get an open PR on their jr2 branch.
    One delta delivers all three: each reference to #1 and #2 is `unmerged` (naming the PR),
    as the full reading has it, whatever the order (before: one of the pair read as an open
    blocker until the resynchronisation)."""
    for i in range(3):
        fake.add_issue("o/r", f"issue {i}")
    for blocked, blocker in [(1, 2), (2, 1), (3, 1)]:
        fake.add_dependency("o/r", blocked, blocker)
    a = make_adapter({}, fake)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    prs = {n: fake.pulls.open_pr("o/r", item_branch(n), "main") for n in (1, 2)}
    reader.read().ready.close()
    assert kinds == ["full", "delta"]
    assert reader.last is not None
    reasons = {e.item.id: [r.to_json_obj() for r in e.reasons] for e in reader.last.blocked}
    for blocked, blocker in [(1, 2), (2, 1), (3, 1)]:
        [reason] = reasons[f"o/r#{blocked}"]
        assert reason["kind"] == "waits_for_merge" and reason["ref"] == f"o/r#{blocker}"
        assert str(reason["pr"]).endswith(f"/pull/{prs[blocker]}"), reason
    assert reader.last.cycles == []
    assert merged_shape(reader.last) == full(fake, {})
