"""Webhooks (signed, replayed, forged and repeated deliveries told apart) and deltas (an
unchanged poll is one request; a blocker completed by a person unblocks its dependent)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fake_linear import FakeLinear
from linear_helpers import SECRET, delivery, make_adapter

from jr2_sources import Delta, Snapshot


@pytest.fixture
def fake() -> Iterator[FakeLinear]:
    f = FakeLinear().start()
    yield f
    f.stop()


def _issue_event(fake: FakeLinear, ident: str, action: str = "update") -> dict[str, object]:
    issue = fake.issue(ident)
    return {"action": action, "type": "Issue", "createdAt": "2026-01-01T00:00:00.000Z",
            "organizationId": "org-1", "webhookId": "wh-1", "url": issue["url"],
            "data": {"id": issue["id"], "identifier": ident, "teamId": issue["teamId"],
                     "title": issue["title"]}}


def test_signed_replayed_forged_and_repeated_deliveries_are_told_apart(
        fake: FakeLinear) -> None:
    ident = fake.add_issue("Watched")
    adapter = make_adapter(fake)
    event = _issue_event(fake, ident)
    headers, body = delivery(event)
    signed = adapter.webhook(headers, body, SECRET)
    assert signed.status == 200 and signed.wake and signed.touched == (fake.issue(ident)["id"],)
    repeat = adapter.webhook(headers, body, SECRET)  # Linear retrying the same delivery
    assert repeat.status == 200 and not repeat.wake
    old_headers, old_body = delivery(event, at=time.time() - 120)  # captured and sent again
    assert adapter.webhook(old_headers, old_body, SECRET).status == 401
    forged_headers, forged_body = delivery(event, secret="not-the-secret")
    assert adapter.webhook(forged_headers, forged_body, SECRET).status == 401
    tampered = body.replace(b"Watched", b"Hacked!")
    assert adapter.webhook(headers | {"Linear-Delivery": "other"}, tampered, SECRET).status == 401


def test_another_teams_issue_and_other_events_do_not_wake(fake: FakeLinear) -> None:
    fake.add_team("OPS")
    other = fake.add_issue("Elsewhere", team="OPS")
    adapter = make_adapter(fake)
    headers, body = delivery(_issue_event(fake, other))
    assert not adapter.webhook(headers, body, SECRET).wake
    headers, body = delivery({"action": "create", "type": "Reaction", "data": {"id": "r"}})
    assert not adapter.webhook(headers, body, SECRET).wake


def test_an_unchanged_poll_is_one_request(fake: FakeLinear) -> None:
    for n in range(30):
        fake.add_issue(f"Issue {n}")
    fake.clock_offset += 60  # a backlog nobody touched in the last minute
    adapter = make_adapter(fake)
    assert isinstance(adapter.changes(full=True), Snapshot)
    for _ in range(3):
        before = adapter.client.stats.requests
        delta = adapter.changes()
        assert isinstance(delta, Delta) and not delta
        assert adapter.client.stats.requests - before == 1


def test_a_blocker_a_person_completes_reaches_its_dependent_by_delta(fake: FakeLinear) -> None:
    a, b = fake.add_issue("Blocker"), fake.add_issue("Dependent")
    fake.relate(a, b)
    adapter = make_adapter(fake)
    adapter.changes(full=True)
    fake.clock_offset += 60
    fake.move(a, "completed")
    delta = adapter.changes()
    assert isinstance(delta, Delta)
    assert delta.left == {a: "done"}
    assert [it.id for it in delta.items] == []


def test_a_webhook_names_an_issue_the_next_delta_reads_by_id(fake: FakeLinear) -> None:
    a = fake.add_issue("Someone deletes our failed mark")
    adapter = make_adapter(fake)
    adapter.changes(full=True)
    fake.clock_offset += 60
    # an attachment removed by a person: the issue's updatedAt does not move
    headers, body = delivery({"action": "remove", "type": "Attachment",
                              "data": {"id": "x", "issueId": fake.issue(a)["id"],
                                       "metadata": {}}})
    assert adapter.webhook(headers, body, SECRET).wake
    delta = adapter.changes()
    assert isinstance(delta, Delta) and [it.id for it in delta.items] == [a]


def test_a_label_event_makes_the_next_reading_a_full_one(fake: FakeLinear) -> None:
    fake.add_issue("Labelled")
    adapter = make_adapter(fake)
    adapter.changes(full=True)
    headers, body = delivery({"action": "update", "type": "IssueLabel",
                              "data": {"id": "l", "name": "agent-renamed"}})
    assert adapter.webhook(headers, body, SECRET).wake
    assert isinstance(adapter.changes(), Snapshot)


def test_an_issue_a_webhook_names_that_is_trashed_leaves_as_missing(fake: FakeLinear) -> None:
    a, b = fake.add_issue("Trashed by a person"), fake.add_issue("Stays")
    adapter = make_adapter(fake)
    adapter.changes(full=True)
    fake.clock_offset += 60
    fake.trash(a)  # trashed issues are not listed: only its id names it
    headers, body = delivery(_issue_event(fake, a, "remove"))
    assert adapter.webhook(headers, body, SECRET).wake
    delta = adapter.changes()
    assert isinstance(delta, Delta) and delta.left == {a: "missing"} and not delta.items
    assert b in adapter.deltas.in_set and a not in adapter.deltas.in_set


def test_more_changes_than_one_answer_make_the_reading_full(fake: FakeLinear) -> None:
    fake.add_issue("Old")
    fake.clock_offset += 60
    adapter = make_adapter(fake)
    adapter.changes(full=True)
    for n in range(101):  # Jr2Changed answers 100 at most
        fake.add_issue(f"New {n}")
    assert isinstance(adapter.changes(), Snapshot)
    assert adapter.deltas.window.last_gap == "more than 100 issues changed"
