"""Webhooks: X-Gitlab-Token in constant time or the signing token's signature, deliveries
deduplicated on Idempotency-Key (X-Gitlab-Event-UUID on older GitLab), issue events of the
project wake, anything else is a 200 without wake."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import pytest
from gitlab_helpers import fixture, make_adapter

from jr2_gitlab.webhook import sign

SECRET = "hook-secret-123"


def _headers(uuid: str, token: str | None = SECRET) -> dict[str, str]:
    h = {"X-Gitlab-Event": "Issue Hook", "X-Gitlab-Event-UUID": uuid,
         "Content-Type": "application/json"}
    if token is not None:
        h["X-Gitlab-Token"] = token
    return h


def _adapter():  # type: ignore[no-untyped-def]
    return make_adapter("http://127.0.0.1:9", project="group/project")


def test_an_issue_event_of_the_project_wakes_once() -> None:
    a = _adapter()
    body = json.dumps(fixture("webhook_issue.json")).encode()
    v = a.webhook(_headers("u-1"), body, SECRET)
    assert (v.status, v.wake) == (200, True)
    again = a.webhook(_headers("u-1"), body, SECRET)
    assert (again.status, again.wake, again.reason) == (200, False, "duplicate delivery")


def test_a_wrong_or_missing_token_is_401_and_not_remembered() -> None:
    a = _adapter()
    body = json.dumps(fixture("webhook_issue.json")).encode()
    assert a.webhook(_headers("u-2", "nope"), body, SECRET).status == 401
    assert a.webhook(_headers("u-2", None), body, SECRET).status == 401
    assert a.webhook(_headers("u-2"), body, SECRET).wake is True


def test_work_items_wake_and_other_events_or_projects_do_not() -> None:
    a = _adapter()
    hook = fixture("webhook_issue.json")
    work_item = dict(hook, object_kind="work_item", event_type="work_item")
    assert a.webhook(_headers("u-3"), json.dumps(work_item).encode(), SECRET).wake is True
    note = dict(hook, object_kind="note", event_type="note")
    v = a.webhook(_headers("u-4"), json.dumps(note).encode(), SECRET)
    assert (v.status, v.wake) == (200, False)
    other = dict(hook, project=dict(hook["project"], path_with_namespace="group/other"))
    assert a.webhook(_headers("u-5"), json.dumps(other).encode(), SECRET).wake is False
    assert a.webhook(_headers("u-6"), b"not json", SECRET).status == 400


def test_resends_are_caught_by_idempotency_key_and_a_hook_chain_is_not_dropped() -> None:
    """`Idempotency-Key` stays the same across retries and resends; `X-Gitlab-Event-UUID` is
    new per send and shared by a chain of recursive hooks (GitLab's delivery headers)."""
    a = _adapter()
    body = json.dumps(fixture("webhook_issue.json")).encode()
    first = dict(_headers("chain-1"), **{"Idempotency-Key": "k-1"})
    resend = dict(_headers("new-uuid"), **{"Idempotency-Key": "k-1"})
    chained = dict(_headers("chain-1"), **{"Idempotency-Key": "k-2"})
    assert a.webhook(first, body, SECRET).wake is True
    assert a.webhook(resend, body, SECRET).reason == "duplicate delivery"
    assert a.webhook(chained, body, SECRET).wake is True


SIGNING = "whsec_" + base64.b64encode(bytes(range(32))).decode()


def _signed(body: bytes, msg_id: str, stamp: float, secret: str = SIGNING) -> dict[str, str]:
    return {"X-Gitlab-Event": "Issue Hook", "Idempotency-Key": msg_id, "webhook-id": msg_id,
            "webhook-timestamp": str(int(stamp)),
            "webhook-signature": "v1,bm90LXRoaXMtb25l " + sign(secret, msg_id,
                                                               str(int(stamp)), body)}


def test_the_signing_token_signature_is_accepted_and_checked() -> None:
    """Standard Webhooks: `v1,<base64 HMAC-SHA256>` of `id.timestamp.body`, keyed with the
    decoded `whsec_` token; a rotated key's extra signature in the header is fine."""
    a = _adapter()
    body = json.dumps(fixture("webhook_issue.json")).encode()
    now = time.time()
    v = a.webhook(_signed(body, "m-1", now), body, SIGNING)
    assert (v.status, v.wake) == (200, True)
    assert a.webhook(_signed(body, "m-2", now), body + b" ", SIGNING).status == 401
    assert a.webhook(_signed(body, "m-3", now, "whsec_" + "A" * 44), body, SIGNING).status == 401
    assert a.webhook(_signed(body, "m-4", now - 3600), body, SIGNING).status == 401
    assert a.webhook({"X-Gitlab-Event": "Issue Hook"}, body, SIGNING).status == 401
    # the token GitLab sends as is, with the same secret: still accepted
    assert a.webhook(_headers("u-9", SIGNING), body, SIGNING).wake is True


def test_the_signature_matches_a_known_answer() -> None:
    """Computed independently: HMAC-SHA256(key=bytes 0..31, "m.1700000000.{}"), base64."""
    key = bytes(range(32))
    want = base64.b64encode(hmac.new(key, b"m.1700000000.{}", hashlib.sha256).digest())
    assert sign(SIGNING, "m", "1700000000", b"{}") == "v1," + want.decode()


HOOKS = Path(__file__).resolve().parents[3] / "fixtures" / "gitlab" / "webhooks"


@pytest.mark.parametrize(("name", "event", "wake"), [
    ("issue.json", "Issue Hook", True),
    ("work_item_task.json", "Issue Hook", True),
    ("note_issue.json", "Note Hook", False),  # a comment never makes an issue ready
])
def test_gitlabs_documented_payloads_through_the_handler(name: str, event: str,
                                                         wake: bool) -> None:
    """GitLab's own examples (fixtures/gitlab/webhooks, from its webhook events page)."""
    payload = json.loads((HOOKS / name).read_text())
    a = make_adapter("http://127.0.0.1:9", project=payload["project"]["path_with_namespace"])
    headers = {"X-Gitlab-Event": event, "X-Gitlab-Token": SECRET, "Idempotency-Key": name}
    v = a.webhook(headers, json.dumps(payload).encode(), SECRET)
    assert (v.status, v.wake) == (200, wake), v
    other = make_adapter("http://127.0.0.1:9", project="someone/else")
    assert other.webhook(dict(headers, **{"Idempotency-Key": "x"}), json.dumps(payload).encode(),
                         SECRET).wake is False
