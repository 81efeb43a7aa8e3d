"""GitHub deltas (`trackers/github/delta.py`) against the fake GitHub: edits seen through deltas
give the Ready-set a full snapshot gives; an unchanged poll and a claim's reading cost <= 2
requests at N = 1,000; what the since-window cannot see is repaired by the resync."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from gh_helpers import make_adapter

from jr2_core import Outcome
from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.deltas.reader import ReadyReader
from jr2_sources.readyset import ReadySet, Snapshot, compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub, seed
from jr2_sources.trackers.github.tracker import GitHubTracker


class Clock:
    def __init__(self) -> None:
        self.t = time.time()

    def __call__(self) -> float:
        return self.t


def reader_of(a: GitHubTracker, clock: Clock | None = None,
              resync_every: float | None = None) -> ReadyReader:
    return ReadyReader(a.snapshot, a.changes, children_block=True, clock=clock or Clock(),
                       resync_every=resync_every)


def shape(rs: ReadySet) -> dict[str, Any]:
    """What a pool acts on: which items are ready, blocked and claimed (by whom), in scope."""
    return {"ready": sorted((e.item.id, e.item.in_scope) for e in rs.ready),
            "blocked": sorted((e.item.id, e.item.in_scope) for e in rs.blocked),
            "claimed": sorted((e.item.id, e.claim.holder) for e in rs.claimed)}


def full_shape(fake: FakeGitHub, **options: Any) -> dict[str, Any]:
    fresh = make_adapter(fake.url, detail=False, **options)
    try:
        return shape(compute_ready_set(fresh.snapshot(), now=datetime.now(UTC),
                                           children_block=True))
    finally:
        fresh.close()


def deliver(a: GitHubTracker, event: str, **issues: int) -> None:
    """A delivery as GitHub sends it (the fields jr2 reads: webhook schemas, fixtures/github)."""
    payload: dict[str, Any] = {"action": "edited", "repository": {"full_name": "o/r"}}
    for key, number in issues.items():
        payload[key] = {"number": number, "repository_url": "https://api.github.com/repos/o/r"}
    verdict = a.webhook({"X-GitHub-Event": event, "X-GitHub-Delivery": f"d-{random.random()}"},
                        json.dumps(payload).encode(), None)
    assert verdict.wake, verdict


def counting(a: GitHubTracker) -> list[str]:
    """Record each answer of `changes` (full or delta) in the returned list."""
    kinds: list[str] = []
    inner = a.changes

    def changes(*, full: bool = False) -> Snapshot | Delta:
        got = inner(full=full)
        kinds.append("full" if isinstance(got, Snapshot) else "delta")
        return got

    a.changes = changes  # type: ignore[method-assign]
    return kinds


def _edit(fake: FakeGitHub, a: GitHubTracker, other: GitHubTracker, rng: random.Random,
          numbers: list[int]) -> str:
    """One tracker-side edit, chosen at random; webhooks are delivered for the edits that
    move no `updated_at` (links) or remove an issue (delete, transfer)."""
    open_ = [n for n in numbers if ("o/r", n) in [(k[0], k[1]) for k in fake.issues]
             and fake.issue("o/r", n).state == "open"]
    closed = [n for n in numbers if ("o/r", n) in fake.issues
              and fake.issue("o/r", n).state == "closed"]
    n = rng.choice(open_ or numbers)
    op = rng.choice(["close", "not_planned", "reopen", "label", "unlabel", "block", "unblock",
                     "body", "claim", "person_close_held", "new", "sub", "delete", "transfer"])
    if op in ("close", "not_planned") and open_:
        fake.close_issue("o/r", n, "completed" if op == "close" else "not_planned")
    elif op == "reopen" and closed:
        fake.reopen_issue("o/r", rng.choice(closed))
    elif op == "label" and open_:
        fake.set_labels("o/r", n, [*fake.issue("o/r", n).labels, "agent"])
    elif op == "unlabel" and open_:
        fake.set_labels("o/r", n, [x for x in fake.issue("o/r", n).labels if x != "agent"])
    elif op == "block" and len(open_) > 1:
        blocker = rng.choice([m for m in open_ if m != n])
        fake.add_dependency("o/r", n, blocker)
        deliver(a, "issue_dependencies", blocked_issue=n, blocking_issue=blocker)
    elif op == "unblock":
        edges = [(k[1], b[1]) for k, v in fake.deps.items() for b in v]
        if edges:
            blocked, blocker = rng.choice(edges)
            fake.remove_dependency("o/r", blocked, blocker)
            deliver(a, "issue_dependencies", blocked_issue=blocked, blocking_issue=blocker)
    elif op == "body" and open_:
        fake.edit_body("o/r", n, f"Depends on #{rng.choice(numbers)}")
    elif op == "claim" and open_:
        other.claim(other.reader.build_item(_json(fake, n), [], set()), "pool-b", 600)
    elif op == "person_close_held":
        held = [m for m in open_ if "jr2:claimed" in fake.issue("o/r", m).labels]
        if held:
            fake.close_issue("o/r", rng.choice(held), "not_planned")
    elif op == "new":
        numbers.append(fake.add_issue("o/r", "new one", labels=rng.choice([[], ["agent"]]),
                                      created=fake.now()))
    elif op == "sub" and len(open_) > 1:
        child = rng.choice([m for m in open_ if m != n])
        if ("o/r", child) not in fake.parents:
            fake.add_sub_issue("o/r", n, child)
            deliver(a, "sub_issues", parent_issue=n, sub_issue=child)
    elif op in ("delete", "transfer") and len(open_) > 3:
        (fake.delete_issue if op == "delete" else fake.transfer_issue)("o/r", n)
        deliver(a, "issues", issue=n)
    else:
        return "nothing"
    return op


def _json(fake: FakeGitHub, n: int) -> dict[str, Any]:
    return fake.issue_json(fake.url, fake.issue("o/r", n))


@pytest.mark.parametrize("options", [{}, {"label": ["agent"]}, {"detail": True}],
                         ids=["all", "label", "detail"])
@pytest.mark.parametrize("seed_", [1, 2, 3])
def test_edits_seen_through_deltas_give_the_full_snapshots_ready_set(
        fake: FakeGitHub, seed_: int, options: dict[str, Any]) -> None:
    rng = random.Random(seed_)
    numbers = []
    for i in range(24):
        labels = ["agent"] if i % 2 else []
        body = f"Depends on #{i - 2}" if i % 7 == 3 and i > 2 else ""
        numbers.append(fake.add_issue("o/r", f"issue {i}", body, labels=labels))
    fake.add_issue("o/r", "a pull request", pr=True)
    for blocked, blocker in [(5, 1), (6, 5), (9, 2), (12, 9)]:
        fake.add_dependency("o/r", blocked, blocker)
    fake.add_sub_issue("o/r", 20, 21)
    a = make_adapter(fake.url, **{"detail": False, **options})
    other = make_adapter(fake.url, detail=False)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    done = []
    for _ in range(30):
        done.append(_edit(fake, a, other, rng, numbers))
        reader.read().ready.close()
        assert reader.last is not None
        want = full_shape(fake, **{k: v for k, v in options.items() if k != "detail"})
        assert shape(reader.last) == want, done
    assert kinds.count("delta") >= 15, kinds  # most readings were deltas, not full ones


def test_a_person_closing_a_blocker_unblocks_its_native_dependent_without_moving_it(
        fake: FakeGitHub) -> None:
    blocker = fake.add_issue("o/r", "blocker")
    dependent = fake.add_issue("o/r", "dependent")
    fake.add_dependency("o/r", dependent, blocker)
    a = make_adapter(fake.url, detail=False)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    assert reader.last is not None and [e.item.id for e in reader.last.ready] == ["o/r#1"]
    before = fake.issue("o/r", dependent).updated
    fake.advance(5)
    fake.close_issue("o/r", blocker)
    assert fake.issue("o/r", dependent).updated == before  # the fake never moves it
    reader.read().ready.close()
    assert kinds == ["full", "delta"]
    assert [e.item.id for e in reader.last.ready] == ["o/r#2"]
    chased = fake.requests("GET", r"/issues/1/dependencies/blocking$")
    assert len(chased) == 1


def _drain_costs(fake: FakeGitHub, a: GitHubTracker) -> dict[str, list[int]]:
    reader = reader_of(a)
    reader.read().ready.close()
    costs: dict[str, list[int]] = {"unchanged": [], "claim": [], "settle": []}

    def read() -> int:
        before = len(fake.requests())
        reader.read().ready.close()
        return len(fake.requests()) - before

    for _ in range(5):
        costs["unchanged"].append(read())
        view = reader.read()
        item = next(view.ready)
        view.ready.close()
        assert a.claim(item, "pool-a", 600)
        costs["claim"].append(read())
        a.finish(item.id, "pool-a", Outcome("done"))
        costs["settle"].append(read())
    return costs


@pytest.mark.parametrize("detail", [False, True], ids=["counts", "detail"])
def test_an_unchanged_poll_and_a_claims_reading_cost_at_most_2_requests_at_n_1000(
        fake: FakeGitHub, detail: bool) -> None:
    seed(fake, "o/r", 1000, deps=0 if not detail else 300, prs=0)
    a = make_adapter(fake.url, detail=detail)
    costs = _drain_costs(fake, a)
    print(costs)
    assert max(costs["unchanged"]) <= 2 and max(costs["claim"]) <= 2, costs
    assert max(costs["settle"]) <= 2, costs
    assert fake.requests("GET", r"/issues$")[-1]["status"] in (200, 304)


def test_an_unchanged_poll_is_one_304_and_costs_no_point(fake: FakeGitHub) -> None:
    seed(fake, "o/r", 250, deps=0, prs=0)
    a = make_adapter(fake.url, detail=False)
    reader = reader_of(a)
    reader.read().ready.close()
    reader.read().ready.close()  # the first delta sets the window's URL
    fake.clear_log()
    points = a.client.stats.points
    reader.read().ready.close()
    assert [(r["path"], r["status"]) for r in fake.requests()] == [("/repos/o/r/issues", 304)]
    assert "since=" in fake.requests()[0]["query"] and "state=all" in fake.requests()[0]["query"]
    assert a.client.stats.points == points


def test_a_link_added_without_a_webhook_is_repaired_by_the_resync(fake: FakeGitHub) -> None:
    blocker = fake.add_issue("o/r", "blocker")
    dependent = fake.add_issue("o/r", "dependent")
    fake.advance(60)  # both written before the pool started, outside the overlap
    a = make_adapter(fake.url, detail=False)
    clock = Clock()
    reader = reader_of(a, clock, resync_every=300.0)
    reader.read().ready.close()
    fake.add_dependency("o/r", dependent, blocker)  # moves no updated_at; no delivery
    clock.t += 10
    reader.read().ready.close()
    assert reader.last is not None
    assert "o/r#2" in [e.item.id for e in reader.last.ready]  # the gap: not seen yet
    clock.t += 300
    reader.read().ready.close()
    assert [e.item.id for e in reader.last.ready] == ["o/r#1"]
    assert [e.item.id for e in reader.last.blocked] == ["o/r#2"]


def test_a_webhook_marks_a_link_change_and_the_next_delta_reads_it_directly(
        fake: FakeGitHub) -> None:
    blocker = fake.add_issue("o/r", "blocker")
    dependent = fake.add_issue("o/r", "dependent")
    fake.advance(60)  # both written before the pool started, outside the overlap
    a = make_adapter(fake.url, detail=False)
    kinds = counting(a)
    reader = reader_of(a)
    reader.read().ready.close()
    fake.add_dependency("o/r", dependent, blocker)
    deliver(a, "issue_dependencies", blocked_issue=dependent, blocking_issue=blocker)
    fake.clear_log()
    reader.read().ready.close()
    assert kinds == ["full", "delta"]
    assert reader.last is not None and [e.item.id for e in reader.last.blocked] == ["o/r#2"]
    direct = sorted(r["path"] for r in fake.requests("GET") if r["path"] != "/repos/o/r/issues")
    assert direct == ["/repos/o/r/issues/1", "/repos/o/r/issues/2"]


@pytest.mark.parametrize("gap", ["422", "pages", "deleted"])
def test_a_sign_of_a_gap_answers_a_full_snapshot(fake: FakeGitHub, gap: str) -> None:
    for i in range(3):
        fake.add_issue("o/r", f"issue {i}")
    a = make_adapter(fake.url, detail=False)
    assert isinstance(a.changes(), Snapshot)
    assert isinstance(a.changes(), Delta)
    if gap == "422":
        fake.fault(422, path=r"/issues$", message="Validation Failed")
    elif gap == "pages":
        assert a.reader.changes is not None
        a.reader.changes.window.max_pages = 1
        for i in range(120):
            fake.add_issue("o/r", f"bulk {i}", created=fake.now() + i)
    else:
        fake.delete_issue("o/r", 2)
        deliver(a, "issues", issue=2)
    got = a.changes()
    assert isinstance(got, Snapshot), got
    assert a.reader.changes is not None and a.reader.changes.window.last_gap is None  # logged
    if gap == "deleted":
        assert "o/r#2" not in [it.id for it in got.items]


def test_another_pools_renewal_keeps_its_item_claimed_past_the_first_lease(
        fake: FakeGitHub) -> None:
    """A renewal edits the claim comment, which moves no `updated_at`: the issue is read again
    when the lease seems to end, and stays claimed (not offered as free)."""
    fake.add_issue("o/r", "held by b")
    fake.add_issue("o/r", "free")
    fake.advance(60)
    a = make_adapter(fake.url, detail=False)
    b = make_adapter(fake.url, detail=False)
    assert b.claim(b.reader.build_item(_json(fake, 1), [], set()), "pool-b", 4.0)
    reader = ReadyReader(a.snapshot, a.changes, children_block=True, clock=time.time,
                         resync_every=None)
    reader.read().ready.close()
    assert reader.last is not None and [e.item.id for e in reader.last.claimed] == ["o/r#1"]
    time.sleep(2.0)
    assert b.renew("o/r#1", "pool-b", 4.0)
    time.sleep(2.5)  # past the lease a read before the renewal saw
    reader.read().ready.close()
    assert [e.item.id for e in reader.last.claimed] == ["o/r#1"]
    assert [e.item.id for e in reader.last.ready] == ["o/r#2"]


def test_watching_a_held_item_is_one_conditional_get_not_a_second_listing(
        fake: FakeGitHub) -> None:
    seed(fake, "o/r", 1000, deps=0, prs=0)
    a = make_adapter(fake.url, detail=False)
    item = a.snapshot().items[0]
    assert a.claim(item, "pool-a", 600)
    assert a.watch([item.id], "pool-a") == {}  # first look: the issue and its comments
    fake.clear_log()
    assert a.watch([item.id], "pool-a") == {}
    assert [(r["path"], r["status"]) for r in fake.requests()] == [("/repos/o/r/issues/1", 304)]
    fake.close_issue("o/r", 1, "not_planned")  # a person takes it back
    fake.clear_log()
    assert a.watch([item.id], "pool-a") == {item.id: "a person closed, removed or moved it"}
    assert len(fake.requests()) == 1


def test_a_parked_issue_and_its_answer_comment_are_seen_by_deltas(fake: FakeGitHub) -> None:
    """`--gate`: another pool parks an issue (the awaiting label, the claim comment edited into
    the gate marker); a collaborator answers with a `/jr2 approve` comment. The deltas of a
    pool that read the backlog before see both: blocked awaiting approval, then ready with the
    gate approved, as a full reading says."""
    from jr2_sources.capabilities.approvals.policy import ApprovalRequest, awaiting

    fake.add_issue("o/r", "gated")
    fake.add_issue("o/r", "free")
    fake.advance(60)
    a = make_adapter(fake.url, detail=False)
    b = make_adapter(fake.url, detail=False)
    kinds = counting(a)
    reader = ReadyReader(a.snapshot, a.changes, children_block=True, clock=time.time,
                         resync_every=None)
    reader.read().ready.close()
    assert b.claim(b.reader.build_item(_json(fake, 1), [], set()), "pool-b", 600)
    b.park("o/r#1", "pool-b", ApprovalRequest("deploy", "ship it?"))
    fake.advance(1)
    reader.read().ready.close()
    last = reader.last
    assert last is not None and [e.item.id for e in last.ready] == ["o/r#2"]
    [parked] = [e.item for e in last.blocked if e.item.id == "o/r#1"]
    assert awaiting(parked) is not None
    fake.permissions["alice"] = "write"
    fake.add_comment("o/r", 1, "/jr2 approve deploy", "alice")
    fake.advance(1)
    reader.read().ready.close()
    last = reader.last
    assert last is not None
    [answered] = [e.item for e in last.ready if e.item.id == "o/r#1"]
    assert [(g.status, g.by) for g in answered.gates] == [("approved", "alice")]
    assert shape(last) == full_shape(fake)
    assert kinds[1:] == ["delta", "delta"]
