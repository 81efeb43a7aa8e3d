"""`label` and `milestone` deliveries (`trackers/github/scopehooks.py`): a label or milestone
the filter names, renamed or deleted, moves no issue's `updated_at`, so a delta cannot see an
issue entering or leaving the scope that way; the delivery makes the next reading a full one.
Every other delivery of those events is ignored at no cost. The deliveries are GitHub's own
example payloads (`fixtures/github/openapi/webhook-examples.json`), adjusted only in documented
fields (`changes.name.from`, `changes.title.from`: the events' schemas), checked against the
vendored schemas and signed like every other delivery."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from gh_helpers import make_adapter
from gh_openapi import examples, webhook_problems
from test_github_deltas import counting, reader_of

from jr2_sources.capabilities.webhooks import Verdict, hmac_sha256
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.scopehooks import scope_change
from jr2_sources.trackers.github.tracker import GitHubTracker

SECRET = "s3cret"


def example(event: str, action: str, **changes: str) -> dict[str, Any]:
    """GitHub's example delivery of `event`/`action` for o/r (of another action of `event`
    when none was recorded: `milestone` `edited`; the first `label` `deleted` predates a field
    the schema now requires, so a described one is taken); `changes` (`name`, `title`): the
    new value and the documented `changes.<key>.from` of an edit (`name="new<old"`; no old:
    not changed). The result is checked against the event's vendored schema."""
    same = [p for ev, p in examples() if ev == event and not webhook_problems(ev, p)]
    found = next((p for p in same if p.get("action") == action), same[0])
    payload = copy.deepcopy(found)
    payload["action"] = action
    payload["repository"]["full_name"] = "o/r"
    obj = payload[event]
    if action == "edited" and not payload.get("changes"):
        payload["changes"] = {"description": {"from": "before"}}
    for key, value in changes.items():
        new, _, old = value.partition("<")
        obj[key] = new
        if old:
            payload["changes"][key] = {"from": old}
    assert webhook_problems(event, payload) == []
    return payload


def deliver(a: GitHubTracker, event: str, payload: dict[str, Any]) -> Verdict:
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": f"d-{random.random()}",
               "X-Hub-Signature-256": "sha256=" + hmac_sha256(SECRET, body),
               "Content-Type": "application/json"}
    return a.webhook(headers, body, SECRET)


def ready_ids(reader: Any) -> list[str]:
    reader.read().ready.close()
    assert reader.last is not None
    return sorted(e.item.id for e in reader.last.ready)


def test_a_label_renamed_into_the_filter_brings_its_issue_in_at_the_next_poll(
        fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "in scope", labels=["agent"])
    fake.add_issue("o/r", "not yet", labels=["bot"])
    fake.advance(60)  # written before the pool started, outside the overlap
    a = make_adapter(fake.url, detail=False, label=["agent"])
    kinds = counting(a)
    reader = reader_of(a)
    assert ready_ids(reader) == ["o/r#1"]
    fake.rename_label("o/r", "bot", "agent")  # moves no updated_at
    verdict = deliver(a, "label", example("label", "edited", name="agent<bot"))
    assert verdict.wake and verdict.full, verdict
    assert ready_ids(reader) == ["o/r#1", "o/r#2"]
    assert kinds == ["full", "full"]
    assert ready_ids(reader) == ["o/r#1", "o/r#2"]  # and deltas again after it
    assert kinds == ["full", "full", "delta"]


def test_a_label_of_the_filter_renamed_away_or_deleted_takes_its_issues_out(
        fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "a", labels=["agent"])
    fake.add_issue("o/r", "b", labels=["agent", "later"])
    fake.advance(60)
    a = make_adapter(fake.url, detail=False, label=["agent"], exclude_label=["later"])
    reader = reader_of(a)
    assert ready_ids(reader) == ["o/r#1"]
    fake.rename_label("o/r", "later", "now")  # out of --exclude-label: #2 enters
    assert deliver(a, "label", example("label", "edited", name="now<later")).full
    assert ready_ids(reader) == ["o/r#1", "o/r#2"]
    fake.rename_label("o/r", "agent", "Agents")
    assert deliver(a, "label", example("label", "edited", name="Agents<agent")).full
    assert ready_ids(reader) == []


def test_unrelated_label_and_milestone_deliveries_cost_no_full_reading(
        fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "a", labels=["agent"])
    fake.advance(60)
    a = make_adapter(fake.url, detail=False, label=["agent"], milestone="*")
    kinds = counting(a)
    reader = reader_of(a)
    ready_ids(reader)
    for event, payload in [
            ("label", example("label", "edited", name="agent")),  # colour only (GitHub's own)
            ("label", example("label", "edited", name="docs<chore")),  # a rename elsewhere
            ("label", example("label", "created", name="agent")),  # no issue carries it yet
            ("label", example("label", "deleted", name="chore")),
            ("milestone", example("milestone", "closed")),
            ("milestone", example("milestone", "created")),
    ]:
        verdict = deliver(a, event, payload)
        assert (verdict.status, verdict.wake, verdict.full) == (200, False, False), payload
    fake.clear_log()
    ready_ids(reader)
    assert kinds == ["full", "delta"]
    assert [r["path"] for r in fake.requests()] == ["/repos/o/r/issues"]  # one 304


def test_a_milestone_retitled_into_the_filter_is_read_again(fake: FakeGitHub) -> None:
    v1 = fake.add_milestone("o/r", "v1")
    v2 = fake.add_milestone("o/r", "v2")
    fake.add_issue("o/r", "in v1", milestone=v1)
    fake.add_issue("o/r", "in v2", milestone=v2)
    fake.advance(60)
    a = make_adapter(fake.url, detail=False, milestone="v1")
    reader = reader_of(a)
    assert ready_ids(reader) == ["o/r#1"]
    fake.rename_milestone("o/r", v1, "v1 (old)")
    assert deliver(a, "milestone", example("milestone", "edited", title="v1 (old)<v1")).full
    fake.rename_milestone("o/r", v2, "v1")
    assert deliver(a, "milestone", example("milestone", "edited", title="v1<v2")).full
    assert ready_ids(reader) == ["o/r#2"]


def test_a_deleted_milestone_moves_its_issues_out_of_a_number_filter(fake: FakeGitHub) -> None:
    v1 = fake.add_milestone("o/r", "v1")
    fake.add_issue("o/r", "in v1", milestone=v1)
    fake.add_issue("o/r", "none")
    fake.advance(60)
    a = make_adapter(fake.url, detail=False, milestone=str(v1))
    reader = reader_of(a)
    assert ready_ids(reader) == ["o/r#1"]
    fake.delete_milestone("o/r", v1)
    payload = example("milestone", "deleted")
    payload["milestone"]["number"] = v1
    assert deliver(a, "milestone", payload).full
    assert ready_ids(reader) == []


@pytest.mark.parametrize(("event", "action", "options", "changes", "full"), [
    ("label", "deleted", {"label": [":BUG: bugfix"]}, {}, True),  # case-insensitive names
    ("label", "deleted", {"done_label": ":bug: Bugfix"}, {}, True),
    ("label", "deleted", {"failed_label": ":bug: Bugfix"}, {}, True),
    ("label", "deleted", {"label": ["agent"]}, {}, False),
    ("label", "created", {"label": [":bug: Bugfix"]}, {}, False),
    ("label", "edited", {"label": [":bug: Bugfix"]}, {}, False),  # colour only
    ("label", "edited", {"label": ["old"]}, {"name": ":bug: Bugfix<old"}, True),
    ("milestone", "deleted", {"milestone": "v1.0"}, {}, True),
    ("milestone", "deleted", {"milestone": "*"}, {}, True),
    ("milestone", "deleted", {"milestone": "none"}, {}, True),
    ("milestone", "deleted", {"milestone": "999"}, {}, False),
    ("milestone", "deleted", {}, {}, False),
    ("milestone", "created", {"milestone": "v1.0"}, {}, True),
    ("milestone", "created", {"milestone": "v2.0"}, {}, False),
    ("milestone", "closed", {"milestone": "v1.0"}, {}, False),
    ("milestone", "edited", {"milestone": "v0.9"}, {"title": "v1.0<v0.9"}, True),
    ("milestone", "edited", {"milestone": "v1.0"}, {"title": "v1.0"}, False),  # not retitled
])
def test_which_deliveries_can_change_the_scope(event: str, action: str, options: dict[str, Any],
                                               changes: dict[str, str], full: bool) -> None:
    payload = example(event, action, **changes)
    config = GitHubConfig(target="o/r", **options)
    assert (scope_change(event, payload, "O/R", config) is not None) is full
    assert scope_change(event, payload, "o/other", config) is None


def test_a_milestone_retitled_away_keeps_the_run_on_the_milestone_it_named(
        fake: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    """No milestone has the title any more: the full reading goes on with the one the title
    named (a warning says so) rather than ending the run."""
    v1 = fake.add_milestone("o/r", "v1")
    fake.add_issue("o/r", "in v1", milestone=v1)
    fake.advance(60)
    a = make_adapter(fake.url, detail=False, milestone="v1")
    kinds = counting(a)
    reader = reader_of(a)
    assert ready_ids(reader) == ["o/r#1"]
    fake.rename_milestone("o/r", v1, "v1 (old)")
    assert deliver(a, "milestone", example("milestone", "edited", title="v1 (old)<v1")).full
    fake.clear_log()
    assert ready_ids(reader) == ["o/r#1"]
    assert kinds == ["full", "full"]
    assert [r["path"] for r in fake.requests()].count("/repos/o/r/milestones") == 1
    assert "no milestone is titled 'v1' any more" in caplog.text
