"""Webhooks: `X-Hub-Signature` checked, Jira's retries deduplicated, only some events wake."""

from __future__ import annotations

import json

import pytest
from jira_helpers import FIXTURES, make_adapter

from jr2_sources.kit.webhooks import hmac_sha256

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
