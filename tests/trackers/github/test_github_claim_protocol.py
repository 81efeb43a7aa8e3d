"""The claim protocol against the stateful fake GitHub: one holder at a time, leases, settle."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from gh_helpers import make_adapter, make_client

from jr2_core import Failure, Outcome
from jr2_core.errors import SourceError, UsageError
from jr2_sources.kit import claims
from jr2_sources.readyset import ReadySet, SnapshotItem, compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.tracker import GitHubTracker

WRITES = ("POST", "PATCH", "PUT", "DELETE")


def item(number: int, repo: str = "o/r") -> SnapshotItem:
    return SnapshotItem(id=f"{repo}#{number}")


def rs_of(adapter: GitHubTracker) -> ReadySet:
    return compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))


def jr2_comments(fake: FakeGitHub, number: int) -> list[claims.Marker]:
    t = datetime(2024, 1, 1, tzinfo=UTC)
    found = (claims.parse_marker(claims.Comment(c.id, c.body, t, t))
             for c in fake.comments_of("o/r", number))
    return [mk for mk in found if mk is not None]


def test_a_second_pool_loses_while_the_first_lease_is_live(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r", labels=["agent"])
    a, b = make_adapter(fake.url), make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 60)
    assert not b.claim(item(n), "pool-b", 60)
    assert [(mk.kind, mk.holder) for mk in jr2_comments(fake, n)] == [("claim", "pool-a")]
    assert fake.issue("o/r", n).labels == ["agent", "jr2:claimed"]
    entry = rs_of(b).claimed[0]
    assert (entry.item.id, entry.claim.holder) == ("o/r#1", "pool-a")
    lease_left = (entry.claim.lease_expires - datetime.now(UTC)).total_seconds()  # type: ignore[operator]
    assert 55 < lease_left <= 61


def test_simultaneous_contenders_exactly_one_wins(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    pools = [make_adapter(fake.url) for _ in range(8)]
    for p in pools:  # every contender posts (no look first): the protocol alone decides
        p.claims.look_first = False
    barrier = threading.Barrier(len(pools))
    won: list[str] = []

    def contend(i: int) -> None:
        barrier.wait()
        if pools[i].claim(item(n), f"pool-{i}", 60):
            won.append(f"pool-{i}")

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(pools))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1
    assert [mk.holder for mk in jr2_comments(fake, n)] == won  # the losers deleted theirs
    assert len(fake.requests("POST", r"/comments$")) == 8


def test_an_expired_lease_is_taken_over_and_the_old_holder_cannot_renew(
        fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a, b = make_adapter(fake.url), make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 30)
    assert rs_of(b).claimed
    fake.advance(31)  # pool-a is dead: its lease runs out, the label stays
    assert "jr2:claimed" in fake.issue("o/r", n).labels
    rs = rs_of(b)
    assert [e.item.id for e in rs.ready] == ["o/r#1"] and not rs.claimed
    assert b.claim(item(n), "pool-b", 30)
    assert not a.renew("o/r#1", "pool-a", 30)  # it comes back: too late
    kinds = [(mk.kind, mk.holder) for mk in jr2_comments(fake, n)]
    assert kinds == [("released", "pool-a"), ("claim", "pool-b")]
    assert rs_of(a).claimed[0].claim.holder == "pool-b"


def test_renewal_extends_the_lease_in_server_time(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a, b = make_adapter(fake.url), make_adapter(fake.url)
    fake.advance(7200)  # the server's clock is two hours ahead of ours: it must not matter
    assert a.claim(item(n), "pool-a", 30)
    fake.advance(20)
    assert a.renew("o/r#1", "pool-a", 30)
    fake.advance(20)  # 40s after the claim, 20s after the renewal
    assert not b.claim(item(n), "pool-b", 30)
    lease_left = (rs_of(b).claimed[0].claim.lease_expires  # type: ignore[operator]
                  - datetime.now(UTC)).total_seconds()
    assert 5 < lease_left <= 11  # translated to the local clock
    fake.advance(11)
    assert not a.renew("o/r#1", "pool-a", 30)


def test_renew_fails_when_the_claim_comment_is_gone(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 60)
    for c in fake.comments_of("o/r", n):
        del fake.comments[c.id]
    assert not a.renew("o/r#1", "pool-a", 60)
    assert not a.renew("o/r#1", "pool-a", 60)  # forgotten
    assert not a.renew("o/r#9", "pool-a", 60)


def test_success_closes_and_never_touches_human_labels_or_assignees(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r", labels=["agent", "bug"], assignees=["alice"])
    a = make_adapter(fake.url, assign=True)
    assert a.claim(item(n), "pool-a", 60)
    assert fake.issue("o/r", n).assignees == ["alice", "jr2-bot"]
    a.finish("o/r#1", "pool-a", Outcome("done"))
    issue = fake.issue("o/r", n)
    assert (issue.state, issue.state_reason) == ("closed", "completed")
    assert issue.labels == ["agent", "bug"] and "alice" in issue.assignees
    assert [(mk.kind, mk.holder) for mk in jr2_comments(fake, n)] == [("done", "pool-a")]
    # closing and taking the claim label off are one PATCH (NOTE 18: fewer writes per item)
    assert fake.requests("DELETE") == []
    assert [e["path"] for e in fake.requests("PATCH", r"/issues/\d+$")] == ["/repos/o/r/issues/1"]


def test_a_settled_item_costs_four_writes(fake: FakeGitHub) -> None:
    """Claim comment, claim label, one settle PATCH of the issue, the comment's edit: the
    write spacing GitHub asks for makes writes most of a drain's time."""
    for outcome, opts in [(Outcome("done"), {}),
                          (Outcome("done"), {"on_success": "label", "done_label": "done"}),
                          (Outcome("failed", failure=Failure(reason="x")), {})]:
        n = fake.add_issue("o/r", labels=["agent"])
        fake.clear_log()
        a = make_adapter(fake.url, **opts)
        assert a.claim(item(n), "pool-a", 60)
        a.finish(f"o/r#{n}", "pool-a", outcome)
        writes = [(e["method"], e["path"].rsplit("/", 2)[-2:]) for e in fake.requests()
                  if e["method"] in WRITES]
        assert len(writes) == 4, writes
        assert "jr2:claimed" not in fake.issue("o/r", n).labels


def test_failure_labels_and_says_why_in_the_one_comment(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r", labels=["agent"])
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 60)
    a.finish("o/r#1", "pool-a", Outcome("failed", failure=Failure("exit 3: tests failed")))
    issue = fake.issue("o/r", n)
    assert issue.state == "open" and issue.labels == ["agent", "jr2:failed"]
    [mk] = jr2_comments(fake, n)
    assert mk.kind == "failed" and mk.fields["reason"] == "exit 3: tests failed"
    assert "exit 3: tests failed" in fake.comments_of("o/r", n)[0].body
    rs = rs_of(a)
    assert [r.to_json_obj() for r in rs.blocked[0].reasons] == [
        {"kind": "failed", "reason": "marked jr2:failed"}]
    detail = compute_ready_set(a.snapshot(detail=True), now=datetime.now(UTC))
    assert detail.blocked[0].reasons[0].detail == "exit 3: tests failed"


def test_success_with_a_done_label_keeps_it_open_but_done(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url, on_success="label", done_label="jr2:done")
    assert a.claim(item(n), "pool-a", 60)
    a.finish("o/r#1", "pool-a", Outcome("done"))
    assert fake.issue("o/r", n).state == "open"
    assert fake.issue("o/r", n).labels == ["jr2:done"]
    assert not make_adapter(fake.url, on_success="label", done_label="jr2:done").snapshot().items


def test_success_with_nothing_is_not_offered_again_by_this_process(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url, on_success="nothing")
    assert a.claim(item(n), "pool-a", 60)
    a.finish("o/r#1", "pool-a", Outcome("done"))
    assert fake.issue("o/r", n).state == "open" and fake.issue("o/r", n).labels == []
    assert not a.snapshot().items


@pytest.mark.parametrize(("options", "outcome"), [
    ({}, Outcome("done")),
    ({"on_success": "label", "done_label": "jr2:done"}, Outcome("done")),
    ({"on_success": "nothing"}, Outcome("done")),
    ({}, Outcome("failed", failure=Failure("boom"))),
])
def test_a_late_contender_loses_to_a_settled_claim(fake: FakeGitHub, options: dict[str, str],
                                                   outcome: Outcome) -> None:
    """B read the snapshot while A held the issue; A settles; then B's claim comment is the
    lowest live one, but the issue is finished: B must lose (found by the 4-pool race)."""
    n = fake.add_issue("o/r")
    a, b = make_adapter(fake.url, **options), make_adapter(fake.url, **options)
    assert a.claim(item(n), "pool-a", 60)
    a.finish("o/r#1", "pool-a", outcome)
    assert not b.claim(item(n), "pool-b", 60)
    assert [mk.holder for mk in jr2_comments(fake, n)] == ["pool-a"]


def test_a_reopened_issue_can_be_claimed_again(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 60)
    a.finish("o/r#1", "pool-a", Outcome("done"))
    fake.issue("o/r", n).state = "open"  # a person reopens it: do it again
    assert [e.item.id for e in rs_of(make_adapter(fake.url)).ready] == ["o/r#1"]
    assert make_adapter(fake.url).claim(item(n), "pool-b", 60)


def test_release_offers_the_item_again(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r", labels=["agent"])
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 60)
    a.finish("o/r#1", "pool-a", Outcome("cancelled"))
    assert fake.issue("o/r", n).labels == ["agent"]
    assert [mk.kind for mk in jr2_comments(fake, n)] == ["released"]
    assert [e.item.id for e in rs_of(a).ready] == ["o/r#1"]
    assert make_adapter(fake.url).claim(item(n), "pool-b", 60)


def test_settling_after_losing_the_claim_changes_nothing_on_the_issue(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a, b = make_adapter(fake.url), make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 30)
    fake.advance(31)
    assert b.claim(item(n), "pool-b", 30)
    a.finish("o/r#1", "pool-a", Outcome("done"))
    issue = fake.issue("o/r", n)
    assert issue.state == "open" and issue.labels == ["jr2:claimed"]  # pool-b's label stays
    assert [(mk.kind, mk.holder) for mk in jr2_comments(fake, n)] == [
        ("released", "pool-a"), ("claim", "pool-b")]


def test_a_dry_run_sends_no_writes(fake: FakeGitHub) -> None:
    for _ in range(3):
        fake.add_issue("o/r", labels=["agent"])
    fake.add_dependency("o/r", 2, 1)
    fake.add_issue("o/r", body="depends on #1 and x/y#4")
    writer = make_adapter(fake.url)
    assert writer.claim(item(1), "pool-a", 60)
    writer.finish("o/r#1", "pool-a", Outcome("failed", failure=Failure("boom")))
    assert writer.claim(item(3), "pool-a", 60)
    fake.clear_log()
    report = make_adapter(fake.url, read_only=True)
    rs = rs_of(report)
    assert (len(rs.ready), len(rs.blocked), len(rs.claimed)) == (0, 3, 1)
    assert fake.requests() and not [e for e in fake.requests() if e["method"] in WRITES]
    with pytest.raises(UsageError, match="read-only"):
        report.claim(item(2), "pool-r", 60)


def test_claiming_without_write_permission_is_refused_clearly(fake: FakeGitHub) -> None:
    fake.read_only_tokens.add("ghp_TESTSECRETtoken0123456789")
    n = fake.add_issue("o/r")
    with pytest.raises(SourceError) as info:
        make_adapter(fake.url).claim(item(n), "pool-a", 60)
    assert str(info.value) == (
        "github:o/r: the token cannot write issue comments (claims need Issues: read & write) "
        "(HTTP 403: Resource not accessible by personal access token)")
    assert not fake.comments


def test_a_retried_claim_post_leaves_one_comment(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    # GitHub stores the comment but the answer arrives broken: the client posts again
    fake.fault(kind="truncate", method="POST", path=r"/comments$")
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 60)
    assert len(fake.requests("POST", r"/comments$")) == 2
    assert [mk.kind for mk in jr2_comments(fake, n)] == ["claim"]
    assert a.renew("o/r#1", "pool-a", 60)


@pytest.mark.parametrize("fault", [
    {"status": 502}, {"status": 429, "retry_after": 0},
    {"status": 403, "retry_after": 0, "message": "You have exceeded a secondary rate limit"},
    {"kind": "reset"}, {"kind": "truncate"}, {"kind": "slow", "delay": 1.5},
])
def test_snapshots_survive_faults(fake: FakeGitHub, fault: dict[str, object]) -> None:
    fake.add_issue("o/r")
    fake.fault(method="GET", path=r"/issues$", **fault)  # type: ignore[arg-type]
    a = make_adapter(fake.url)
    assert [it.id for it in a.snapshot().items] == ["o/r#1"]
    assert a.client.stats.retries == 1


def test_a_claim_held_by_this_holder_is_visible_with_its_expiry(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 600)
    [entry] = rs_of(a).claimed
    assert entry.claim.holder == "pool-a"
    assert entry.claim.since <= datetime.now(UTC) + timedelta(seconds=1)


def test_the_client_is_used_with_a_fresh_token_per_adapter(fake: FakeGitHub) -> None:
    fake.tokens = {"ghp_TESTSECRETtoken0123456789"}
    fake.add_issue("o/r")
    assert make_adapter(fake.url, client=make_client(fake.url)).snapshot().items
    fake.tokens = {"another"}
    with pytest.raises(SourceError, match=r"HTTP 401"):
        make_adapter(fake.url).snapshot()


def _calls(fake: FakeGitHub) -> list[tuple[str, str]]:
    out = []
    for e in fake.requests():
        if "/issues" not in e["path"]:  # `GET /user`: the identity, asked once per process
            out.append((e["method"], e["path"]))
            continue
        tail = e["path"].split("/issues", 1)[-1]
        out.append((e["method"], "comment" if tail.startswith("/comments/") else
                    tail.lstrip("/").split("/", 1)[-1] if "/" in tail.lstrip("/") else "issue"))
    return out


def test_a_worked_item_reads_its_issue_three_times_and_its_thread_twice(
        fake: FakeGitHub) -> None:
    """The look reads the issue and lists no empty thread (`comments: 0`); the claim's own
    check lists and reads again after posting; the watch before the settle reads both once, and
    the settle writes with what the watch read."""
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url)
    fake.clear_log()
    assert a.claim(item(n), "pool-a", 60)
    assert _calls(fake) == [("GET", "issue"), ("POST", "comments"), ("GET", "comments"),
                            ("GET", "issue"), ("POST", "labels")]
    fake.clear_log()
    assert a.watch([f"o/r#{n}"], "pool-a") == {}
    a.finish(f"o/r#{n}", "pool-a", Outcome("done"))
    assert _calls(fake) == [("GET", "issue"), ("GET", "comments"), ("PATCH", "issue"),
                            ("PATCH", "comment")]
    assert fake.issue("o/r", n).state == "closed"
    assert [mk.kind for mk in jr2_comments(fake, n)] == ["done"]


def test_the_look_lists_a_thread_that_has_comments_and_backs_off_a_live_claim(
        fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    fake.add_comment("o/r", n, "a person's comment", user="alice")
    a, b = make_adapter(fake.url), make_adapter(fake.url)
    fake.clear_log()
    assert a.claim(item(n), "pool-a", 60)
    assert _calls(fake)[:2] == [("GET", "issue"), ("GET", "comments")]
    fake.clear_log()
    assert not b.claim(item(n), "pool-b", 60)
    assert _calls(fake) == [("GET", "issue"), ("GET", "comments"), ("GET", "/user")]
    assert len(jr2_comments(fake, n)) == 1  # b posted nothing


def test_the_claims_check_reads_the_issue_after_posting_not_the_looks_read(
        fake: FakeGitHub) -> None:
    """A person closes the issue between the look and the claim comment: the look's read said
    open, but the check after posting reads the issue again, so the claim is lost."""
    n = fake.add_issue("o/r")
    a = make_adapter(fake.url)
    post = a.post_comment

    def post_after_a_person_closed_it(key: str, body: str) -> int | None:
        fake.close_issue("o/r", n)
        return post(key, body)

    a.post_comment = post_after_a_person_closed_it  # type: ignore[method-assign]
    assert not a.claim(item(n), "pool-a", 60)
    assert jr2_comments(fake, n) == []  # its claim comment deleted
    assert "jr2:claimed" not in fake.issue("o/r", n).labels


def test_a_settle_lists_the_thread_itself_unless_the_watch_just_did(
        fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """Too old (over `REUSE_LISTING`), or older than our last renewal: the settle's check
    lists the thread again (and reads the labels again when the watch's read is too old)."""
    from jr2_sources.kit import comment_claims

    a = make_adapter(fake.url)
    stale = fake.add_issue("o/r")
    assert a.claim(item(stale), "pool-a", 60)
    assert a.watch([f"o/r#{stale}"], "pool-a") == {}
    monkeypatch.setattr(comment_claims, "REUSE_LISTING", 0.0)
    monkeypatch.setattr("jr2_sources.kit.labeltracker.REUSE_LISTING", 0.0)
    fake.clear_log()
    a.finish(f"o/r#{stale}", "pool-a", Outcome("done"))
    assert _calls(fake) == [("GET", "comments"), ("GET", "issue"), ("PATCH", "issue"),
                            ("PATCH", "comment")]
    monkeypatch.undo()
    renewed = fake.add_issue("o/r")
    assert a.claim(item(renewed), "pool-a", 60)
    assert a.watch([f"o/r#{renewed}"], "pool-a") == {}
    assert a.renew(f"o/r#{renewed}", "pool-a", 60)
    fake.clear_log()
    a.finish(f"o/r#{renewed}", "pool-a", Outcome("done"))
    assert _calls(fake) == [("GET", "comments"), ("PATCH", "issue"), ("PATCH", "comment")]
    assert fake.issue("o/r", renewed).state == "closed"


def test_a_settle_by_the_watchs_listing_judges_the_lease_at_the_settles_time(
        fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch's listing showed our claim live; had the lease run out by the settle (here: a
    clock 31 s on, with a 30 s lease), the settle must see it lost and change nothing."""
    from jr2_sources.kit import comment_claims

    n = fake.add_issue("o/r")
    a = make_adapter(fake.url)
    assert a.claim(item(n), "pool-a", 30)
    assert a.watch([f"o/r#{n}"], "pool-a") == {}
    real = comment_claims.time.monotonic
    monkeypatch.setattr(comment_claims, "REUSE_LISTING", 3600.0)
    monkeypatch.setattr(comment_claims.time, "monotonic", lambda: real() + 31)
    a.finish(f"o/r#{n}", "pool-a", Outcome("done"))
    assert fake.issue("o/r", n).state == "open"
    assert [mk.kind for mk in jr2_comments(fake, n)] == ["released"]
