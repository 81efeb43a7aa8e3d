"""The claim protocol against the stateful fake: sequential and simultaneous contenders, leases,
settling, people's labels and assignees, and a dry run that only reads."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from jira_helpers import make_adapter

from jr2_core import Failure, Outcome
from jr2_core.errors import UsageError
from jr2_sources.readyset import SnapshotItem, compute_ready_set
from jr2_sources.testing.fakes.jira_server import ME_CLOUD, FakeJira
from jr2_sources.trackers.jira.tracker import JiraTracker

PERSON = {"accountId": "557058:f58131cb", "displayName": "Mia Krystof"}
JQL = "project = ENG AND labels = agent"


def _item(ad: JiraTracker, key: str) -> SnapshotItem:
    return next(it for it in ad.snapshot().items if it.id == key)


def _claims_left(fake: FakeJira, key: str) -> list[str]:
    return [b for b in fake.comment_bodies(key) if "jr2:claim" in b]


def _label_ops(fake: FakeJira) -> list[dict[str, object]]:
    return [e["body"] for e in fake.requests("PUT", r"/issue/ENG-\d+$")]


def test_a_sequential_contender_loses_and_removes_its_comment(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent", "team-x"])
    p1, p2 = make_adapter(fake.url, jql=JQL), make_adapter(fake.url, jql=JQL)
    assert p1.claim(_item(p1, key), "p1@h", 60) is True
    assert p2.claim(_item(p2, key), "p2@h", 60) is False
    assert len(_claims_left(fake, key)) == 1 and "p1@h" in _claims_left(fake, key)[0]
    assert fake.issue(key).labels == ["agent", "team-x", "jr2:claimed"]
    claimed = compute_ready_set(p2.snapshot(), now=datetime.now(UTC)).claimed
    assert [(e.item.id, e.claim.holder) for e in claimed] == [(key, "p1@h")]
    assert all("set" not in op for body in _label_ops(fake)
               for op in body["update"]["labels"]), "labels only through add/remove"  # type: ignore[index]


def test_a_sequential_transition_does_not_break_the_claim(fake: FakeJira) -> None:
    """Jira lets a later, sequential transition through (409 only for simultaneous ones), so
    the protocol must not rely on it: a claim stays exclusive after anyone transitions."""
    key = fake.add_issue("A", labels=["agent"])
    p1 = make_adapter(fake.url, jql=JQL, in_progress_transition="In Progress")
    p2 = make_adapter(fake.url, jql=JQL, in_progress_transition="In Progress")
    item = _item(p1, key)
    _item(p2, key)  # each pool claims from its own snapshot
    assert p1.claim(item, "p1@h", 60)
    assert fake.issue(key).status == "In Progress"
    p2.client.request("POST", f"/issue/{key}/transitions", body={"transition": {"id": "11"}})
    assert fake.issue(key).status == "To Do"  # the global transition went through
    assert p2.claim(item, "p2@h", 60) is False


@pytest.mark.parametrize("cloud", [True, False])
def test_simultaneous_contenders_exactly_one_holds(cloud: bool) -> None:
    fake = FakeJira(cloud=cloud).start()
    try:
        keys = [fake.add_issue(f"I{i}", labels=["agent"]) for i in range(3)]
        pools = [make_adapter(fake.url, jql=JQL) for _ in range(8)]
        items = {k: _item(pools[0], k) for k in keys}
        for key in keys:
            wins: list[str] = []
            barrier = threading.Barrier(len(pools))

            def contend(n: int, key: str = key, wins: list[str] = wins,
                        barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                if pools[n].claim(items[key], f"pool-{n}@h", 60):
                    wins.append(f"pool-{n}@h")

            threads = [threading.Thread(target=contend, args=(n,)) for n in range(len(pools))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(wins) == 1, f"{key}: winners {wins}"
            left = _claims_left(fake, key)
            assert len(left) == 1 and wins[0] in left[0], "losers must delete their claims"
            adds = [e for e in fake.requests("PUT", rf"/issue/{key}$")]
            assert len(adds) == 1, "only the winner marks the issue"
    finally:
        fake.stop()


def test_an_expired_lease_is_taken_over_and_the_late_renewal_fails(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent"])
    dead, alive = make_adapter(fake.url, jql=JQL), make_adapter(fake.url, jql=JQL)
    item = _item(dead, key)
    assert dead.claim(item, "dead@h", 30)
    fake.advance(31)
    assert key in {e.item.id for e in compute_ready_set(alive.snapshot(),
                                                        now=datetime.now(UTC)).ready}
    assert alive.claim(item, "alive@h", 30) is True
    assert dead.renew(key, "dead@h", 30) is False
    assert alive.renew(key, "alive@h", 30) is True
    assert [e.claim.holder for e in compute_ready_set(
        alive.snapshot(), now=datetime.now(UTC)).claimed] == ["alive@h"]


def test_renewal_keeps_the_claim_alive(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent"])
    p1, p2 = make_adapter(fake.url, jql=JQL), make_adapter(fake.url, jql=JQL)
    item = _item(p1, key)
    assert p1.claim(item, "p1@h", 30)
    for _ in range(3):
        fake.advance(20)
        assert p1.renew(key, "p1@h", 30)
    assert p2.claim(item, "p2@h", 30) is False


def test_failure_marks_the_issue_and_keeps_peoples_labels(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent", "frontend"])
    ad = make_adapter(fake.url, jql=JQL, on_success_transition="Done")
    assert ad.claim(_item(ad, key), "p@h", 60)
    ad.finish(key, "p@h", Outcome("failed", failure=Failure("tests failed: 3 of 10")))
    it = fake.issue(key)
    assert it.labels == ["agent", "frontend", "jr2:failed"]
    assert [b.split(" ")[1] for b in fake.comment_bodies(key)] == ["jr2:failed"]
    assert "tests failed: 3 of 10" in fake.comment_bodies(key)[0]
    entry = compute_ready_set(ad.snapshot(), now=datetime.now(UTC)).blocked[0]
    assert entry.item.id == key and entry.reasons[0].kind == "failed"
    ro = make_adapter(fake.url, jql=JQL, read_only=True)
    assert _item(ro, key).failed == "tests failed: 3 of 10"


def test_success_transitions_and_removes_only_the_claim_label(fake: FakeJira) -> None:
    a = fake.add_issue("A", labels=["agent"])
    b = fake.add_issue("B", labels=["agent"])
    fake.add_link(a, b)
    ad = make_adapter(fake.url, jql=JQL, on_success_transition="Done")
    assert ad.claim(_item(ad, a), "p@h", 60)
    ad.finish(a, "p@h", Outcome("done"))
    assert fake.issue(a).status == "Done" and fake.issue(a).labels == ["agent"]
    rs = compute_ready_set(ad.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in rs.ready] == [b]


def test_without_a_success_transition_a_done_issue_is_not_claimed_again(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent"])
    p1, p2 = make_adapter(fake.url, jql=JQL), make_adapter(fake.url, jql=JQL)
    item = _item(p1, key)
    assert p1.claim(item, "p1@h", 60)
    p1.finish(key, "p1@h", Outcome("done"))
    assert key not in {it.id for it in p1.snapshot().items}
    assert p2.claim(item, "p2@h", 60) is False


def test_a_persons_issue_is_left_alone_and_assign_sets_jr2(fake: FakeJira) -> None:
    theirs = fake.add_issue("Theirs", labels=["agent"], assignee=PERSON)
    mine = fake.add_issue("Mine", labels=["agent"], assignee=dict(ME_CLOUD))
    free = fake.add_issue("Free", labels=["agent"])
    ad = make_adapter(fake.url, jql=JQL, assign=True)
    assert {it.id for it in ad.snapshot().items} == {mine, free}
    forced = SnapshotItem(id=theirs, title="Theirs")
    assert ad.claim(forced, "p@h", 60) is False
    assert fake.issue(theirs).assignee == PERSON and not _claims_left(fake, theirs)
    assert ad.claim(_item(ad, free), "p@h", 60)
    assert fake.issue(free).assignee is not None
    assert fake.issue(free).assignee["accountId"] == ME_CLOUD["accountId"]


def test_release_offers_the_issue_again(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent"])
    ad = make_adapter(fake.url, jql=JQL)
    assert ad.claim(_item(ad, key), "p@h", 60)
    ad.release(key, "p@h")
    assert fake.issue(key).labels == ["agent"]
    assert "jr2:released" in fake.comment_bodies(key)[0]
    assert key in {e.item.id for e in compute_ready_set(ad.snapshot(),
                                                        now=datetime.now(UTC)).ready}


def test_a_dry_run_only_reads(fake: FakeJira) -> None:
    a = fake.add_issue("A", labels=["agent"])
    b = fake.add_issue("B", labels=["agent"])
    fake.add_link(a, b)
    writer = make_adapter(fake.url, jql=JQL)
    assert writer.claim(_item(writer, a), "p@h", 60)
    fake.clear_log()
    ro = make_adapter(fake.url, jql=JQL, read_only=True)
    rs = compute_ready_set(ro.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in rs.claimed] == [a]
    with pytest.raises(UsageError, match="read-only"):
        ro.claim(SnapshotItem(id=b), "q@h", 60)
    reads = ("/rest/api/2/search", "/rest/api/2/comment/list")  # POSTs that only read
    sent = {(e["method"], e["path"].startswith(reads)) for e in fake.requests()}
    assert sent <= {("GET", False), ("POST", True)}, sent
    assert ("POST", True) in sent


def test_simultaneous_transitions_on_one_issue_conflict_in_the_fake(fake: FakeJira) -> None:
    key = fake.add_issue("A")
    fake.transition_delay = 0.3
    statuses: list[int] = []
    barrier = threading.Barrier(2)

    def go() -> None:
        barrier.wait()
        import requests

        r = requests.post(f"{fake.url}/rest/api/2/issue/{key}/transitions",
                          json={"transition": {"id": "31"}}, headers={"Authorization": "x"},
                          timeout=5)
        statuses.append(r.status_code)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [204, 409]
