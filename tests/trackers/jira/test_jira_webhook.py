"""Webhooks: `X-Hub-Signature` checked, Jira's retries deduplicated, only some events wake."""

from __future__ import annotations

import json

import pytest
from jira_helpers import FIXTURES, make_adapter

from jr2_sources.capabilities.webhooks import hmac_sha256

SECRET = "whsec-0123456789"


def _body(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _signed(body: bytes, delivery: str = "d-1") -> dict[str, str]:
    return {"X-Hub-Signature": "sha256=" + hmac_sha256(SECRET, body),
            "X-Atlassian-Webhook-Identifier": delivery}


@pytest.fixture
def adapter():  # type: ignore[no-untyped-def]
    return make_adapter("https://acme.atlassian.net")


def test_signed_issue_and_link_events_wake(adapter) -> None:  # type: ignore[no-untyped-def]
    for i, name in enumerate(("webhook_issue_updated.json", "webhook_issuelink_created.json")):
        body = _body(name)
        v = adapter.webhook(_signed(body, f"d-{i}"), body, SECRET)
        assert (v.status, v.wake) == (200, True), v


@pytest.mark.parametrize("event", ["jira:issue_created", "jira:issue_deleted",
                                   "issuelink_deleted"])
def test_every_documented_waking_event(adapter, event: str) -> None:  # type: ignore[no-untyped-def]
    body = json.dumps({"timestamp": 1, "webhookEvent": event}).encode()
    assert adapter.webhook({}, body, None).wake is True


def test_other_events_are_acknowledged_without_a_wake(adapter) -> None:  # type: ignore[no-untyped-def]
    body = _body("webhook_comment_created.json")
    v = adapter.webhook(_signed(body), body, SECRET)
    assert (v.status, v.wake) == (200, False)


def test_bad_or_missing_signatures_get_401(adapter) -> None:  # type: ignore[no-untyped-def]
    body = _body("webhook_issue_updated.json")
    assert adapter.webhook({}, body, SECRET).status == 401
    bad = {"X-Hub-Signature": "sha256=" + "0" * 64}
    assert adapter.webhook(bad, body, SECRET).status == 401
    tampered = body.replace(b"ENG-1", b"ENG-2")
    v = adapter.webhook(_signed(body), tampered, SECRET)
    assert (v.status, v.wake) == (401, False)


def test_a_redelivery_is_acknowledged_and_ignored(adapter) -> None:  # type: ignore[no-untyped-def]
    body = _body("webhook_issue_updated.json")
    first = adapter.webhook(_signed(body, "same"), body, SECRET)
    again = adapter.webhook(_signed(body, "same"), body, SECRET)
    assert (first.wake, again.status, again.wake) == (True, 200, False)


def test_bad_json_is_400(adapter) -> None:  # type: ignore[no-untyped-def]
    assert adapter.webhook({}, b"{not json", None).status == 400
    assert adapter.webhook({}, b"[1, 2]", None).status == 400


def _update(key: str, items: list[dict[str, object]], kind: str = "issue_updated") -> bytes:
    return json.dumps({"timestamp": 1, "webhookEvent": "jira:issue_updated",
                       "issue_event_type_name": kind, "issue": {"id": "1", "key": key},
                       "changelog": {"id": "9", "items": items}}).encode()


LABEL_ADD = {"field": "labels", "fieldtype": "jira", "fromString": "agent",
             "toString": "agent jr2:claimed"}


def test_a_comment_delivered_as_issue_updated_does_not_wake(adapter) -> None:  # type: ignore[no-untyped-def]
    body = json.dumps({"timestamp": 1, "webhookEvent": "jira:issue_updated",
                       "issue_event_type_name": "issue_commented",
                       "issue": {"id": "1", "key": "ENG-1"},
                       "comment": {"id": "10", "body": "hi"}}).encode()
    v = adapter.webhook({}, body, None)
    assert (v.status, v.wake) == (200, False) and "issue_commented" in v.reason


def test_this_processs_own_label_edit_does_not_wake_but_anothers_does(adapter) -> None:  # type: ignore[no-untyped-def]
    adapter._echoes.expect("ENG-1", "labels", "+jr2:claimed")
    assert adapter.webhook({}, _update("ENG-1", [LABEL_ADD]), None).wake is False
    # the echo was used up: the same change again (another pool, same account) wakes
    assert adapter.webhook({}, _update("ENG-1", [LABEL_ADD]), None).wake is True
    # an echo of ours plus a person's change in one delivery wakes
    adapter._echoes.expect("ENG-1", "labels", "+jr2:claimed")
    status = {"field": "status", "fromString": "To Do", "toString": "Done"}
    assert adapter.webhook({}, _update("ENG-1", [LABEL_ADD, status]), None).wake is True


def test_own_transition_with_its_resolution_does_not_wake(adapter) -> None:  # type: ignore[no-untyped-def]
    adapter._echoes.expect("ENG-2", "status", "Done")
    items = [{"field": "resolution", "fromString": None, "toString": "Done"},
             {"field": "status", "fromString": "To Do", "toString": "Done"}]
    assert adapter.webhook({}, _update("ENG-2", items, "issue_generic"), None).wake is False


def test_an_issue_outside_the_projects_in_scope_does_not_wake(adapter) -> None:  # type: ignore[no-untyped-def]
    adapter._projects = frozenset({"ENG"})
    status = {"field": "status", "fromString": "To Do", "toString": "Done"}
    v = adapter.webhook({}, _update("OPS-1", [status]), None)
    assert (v.wake, v.reason) == (False, "OPS-1 is outside the projects in scope")
    assert adapter.webhook({}, _update("ENG-1", [status]), None).wake is True


@pytest.mark.parametrize(("name", "wake"), [
    ("webhook_issue_updated.json", True),        # a person moved ENG-1 to Done
    ("webhook_comment_created.json", False),     # a comment, as `comment_created`
    ("webhook_issue_commented.json", False),     # the same, as `jira:issue_updated`
    ("webhook_issuelink_created.json", True),
    ("webhook_issuelink_deleted.json", True),
    ("webhook_issue_deleted.json", True),
])
def test_the_documented_deliveries_through_the_handler(adapter, name: str, wake: bool) -> None:  # type: ignore[no-untyped-def]
    body = _body(name)
    v = adapter.webhook(_signed(body, name), body, SECRET)
    assert (v.status, v.wake) == (200, wake), v
