"""Webhooks: X-Gitlab-Token in constant time, X-Gitlab-Event-UUID deduplicated, issue events
of the project wake, anything else is a 200 without wake."""

from __future__ import annotations

import json

from gitlab_helpers import fixture, make_adapter

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
