"""Conformance against GitHub's own description (fixtures/github/openapi/, vendored from the npm
packages `@octokit/openapi`, `@octokit/openapi-webhooks`, `@octokit/webhooks-examples` by
`tools/vendor_github.py`): every request jr2 sends names a described operation with described
parameters and a valid body; every response the fake serves validates; the real payload
examples get the right verdict from the webhook handler."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from gh_helpers import make_adapter
from gh_openapi import (
    PLANS,
    document,
    examples,
    operation,
    request_problems,
    response_problems,
    webhook_problems,
)

from jr2_core import Failure, Outcome
from jr2_sources.capabilities.webhooks import DeliveryDeduper
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.webhook import WAKE_EVENTS, receive


def _scenario(fake: FakeGitHub, **options: Any) -> None:
    """Everything jr2 does to a repository: a detailed snapshot (native blockers, sub-issues,
    body references, a milestone title), claims with `--assign`, renewals, and the three
    outcomes (close, label, failed) plus a release."""
    fake.next_number.setdefault("o/lib", 1)
    ext = fake.add_issue("o/lib", "outside")
    fake.close_issue("o/lib", ext, "not_planned")
    ms = fake.add_milestone("o/r", "v1")
    a = fake.add_issue("o/r", "a", labels=["agent"], milestone=ms)
    b = fake.add_issue("o/r", "b", f"Depends on #{a} and o/lib#{ext}", labels=["agent"],
                       milestone=ms)
    c = fake.add_issue("o/r", "c", labels=["agent"], milestone=ms)
    d = fake.add_issue("o/r", "d", labels=["agent"], milestone=ms)
    fake.add_dependency("o/r", c, a)
    fake.add_sub_issue("o/r", d, c)
    e = fake.add_issue("o/r", "e", labels=["agent"], milestone=ms)
    fake.add_issue("o/r", "pr", pr=True)
    reader = make_adapter(fake.url, read_only=True, label=["agent"], milestone="v1", detail=True)
    assert reader.snapshot().items
    pool = make_adapter(fake.url, label=["agent"], milestone="v1", assign=True, **options)
    assert pool.snapshot(detail=False).items
    for n in (a, e):
        assert pool.claim(SnapshotItem(id=f"o/r#{n}"), "pool-1", 60)
        assert pool.renew(f"o/r#{n}", "pool-1", 60)
    pool.finish(f"o/r#{a}", "pool-1", Outcome(status="done"))
    pool.finish(f"o/r#{e}", "pool-1", Outcome(status="failed", failure=Failure(reason="x")))
    labeller = make_adapter(fake.url, on_success="label", done_label="done")
    assert labeller.claim(SnapshotItem(id=f"o/r#{b}"), "pool-2", 60)
    labeller.finish(f"o/r#{b}", "pool-2", Outcome(status="done"))
    assert labeller.claim(SnapshotItem(id=f"o/r#{d}"), "pool-2", 60)
    labeller.release(f"o/r#{d}", "pool-2")
    assert not labeller.claim(SnapshotItem(id=f"o/r#{b}"), "pool-3", 60)  # done: no post
    labeller.claims.look_first = False  # a claim that posts, then loses and deletes its comment
    assert not labeller.claim(SnapshotItem(id=f"o/r#{b}"), "pool-3", 60)
    # an approval gate (`--gate`): parked, answered by comments (a writer, a stranger: the
    # permission endpoint) and by a label (the issue's events), read back by a report
    from jr2_sources.capabilities.approvals.policy import ApprovalRequest

    f = fake.add_issue("o/r", "f", labels=["agent"], milestone=ms)
    fake.permissions.update(alice="write", bob="maintain")
    assert pool.claim(SnapshotItem(id=f"o/r#{f}"), "pool-1", 60)
    pool.park(f"o/r#{f}", "pool-1", ApprovalRequest("deploy", "why"))
    fake.add_comment("o/r", f, "/jr2 approve deploy", "stranger")
    fake.add_comment("o/r", f, "/jr2 approve deploy", "alice")
    fake.add_label_by("o/r", f, "jr2:reject:deploy", "bob")
    [gated] = [it for it in reader.snapshot().items if it.id == f"o/r#{f}"]
    assert [(g.status, g.by) for g in gated.gates] == [("approved", "alice")]


@pytest.fixture
def captured() -> Any:
    fake = FakeGitHub(capture=True).start()
    fake.next_number.setdefault("o/r", 1)
    try:
        _scenario(fake)
        yield fake.requests()
    finally:
        fake.stop()


def test_the_vendored_descriptions_carry_every_operation_jr2_sends() -> None:
    doc = document("api.github.com")
    assert doc["info"]["version"] and len(doc["paths"]) >= 14
    for plan in PLANS:
        assert operation(plan, "POST", "/repos/o/r/issues/1/comments") is not None
    # what the Enterprise descriptions lack is what the fake's Enterprise mode leaves out
    assert operation("ghes-3.17", "GET", "/repos/o/r/issues/1/sub_issues") is None
    assert operation("ghes-3.18", "GET", "/repos/o/r/issues/1/dependencies/blocked_by") is None
    assert operation("ghes-3.19", "GET", "/repos/o/r/issues/1/dependencies/blocked_by")


def test_every_request_jr2_sends_is_described(captured: list[dict[str, Any]]) -> None:
    assert {e["method"] for e in captured} == {"GET", "POST", "PATCH", "DELETE"}
    sent = {(e["method"], found[0]) for e in captured
            if (found := operation("api.github.com", e["method"], e["path"])) is not None}
    assert len(sent) >= 14, sorted(sent)  # the scenario reaches every operation of the adapter
    problems = [p for e in captured
                for p in request_problems("api.github.com", e["method"], e["path"],
                                          e["query"], e["body"])]
    assert problems == []


def test_every_response_the_fake_serves_validates(captured: list[dict[str, Any]]) -> None:
    problems = [p for e in captured if e["status"] not in (304,)
                for p in response_problems("api.github.com", e["method"], e["path"],
                                           e["status"], e["data"])]
    assert problems == []


def test_a_response_that_breaks_the_description_is_caught() -> None:
    """The checks can fail: a wrong field type and an undescribed parameter are reported."""
    bad = {"id": "x", "node_id": "n", "url": "u", "html_url": "h", "body": "b",
           "user": None, "created_at": "t", "updated_at": "t", "issue_url": "i",
           "author_association": "OWNER"}
    assert response_problems("api.github.com", "POST", "/repos/o/r/issues/1/comments", 201, bad)
    assert request_problems("api.github.com", "GET", "/repos/o/r/issues", "sorting=asc", None)
    assert request_problems("api.github.com", "PATCH", "/repos/o/r/issues/1", "",
                            {"state": "done"})


# -- webhooks ----------------------------------------------------------------------------------

SECRET = "s3cret"


def _deliver(event: str, payload: dict[str, Any], repo: str, *, form: bool = False) -> Any:
    raw = json.dumps(payload).encode()
    body = urlencode({"payload": raw.decode()}).encode() if form else raw
    sig = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": hashlib.sha1(body).hexdigest(),
               "X-Hub-Signature-256": sig,
               "Content-Type": ("application/x-www-form-urlencoded" if form
                                else "application/json")}
    return receive(headers, body, SECRET, repo=repo, deduper=DeliveryDeduper())


EXAMPLES = examples()


# A recorded example older than a field GitHub's schema now requires (the example predates it).
KNOWN_DRIFT = {"issues/transferred": ["changes/new_repository: 'has_discussions' is a required "
                                      "property"]}


def test_the_examples_are_described_deliveries() -> None:
    checked = [(ev, p) for ev, p in EXAMPLES if ev in ("issues", "ping")]
    assert len(checked) >= 30
    problems = {f"{ev}/{p.get('action')}": webhook_problems(ev, p) for ev, p in checked}
    assert {k: v for k, v in problems.items() if v} == KNOWN_DRIFT


@pytest.mark.parametrize("form", [False, True], ids=["json", "form"])
@pytest.mark.parametrize(("event", "payload"), EXAMPLES,
                         ids=[f"{ev}-{p.get('action', '')}-{i}"
                              for i, (ev, p) in enumerate(EXAMPLES)])
def test_each_real_payload_gets_the_right_verdict(event: str, payload: dict[str, Any],
                                                  form: bool) -> None:
    repo = payload.get("repository", {}).get("full_name")
    wakes = event in WAKE_EVENTS and repo is not None
    verdict = _deliver(event, payload, repo or "some/repo", form=form)
    assert (verdict.status, verdict.wake) == (200, wakes)
    if repo is not None:  # the same delivery for another repository wakes nothing
        other = _deliver(event, payload, "someone/else", form=form)
        assert (other.status, other.wake) == (200, False)


@pytest.mark.parametrize("plan", PLANS[1:])
def test_on_enterprise_server_jr2_asks_a_missing_endpoint_once_and_the_rest_validates(
        plan: str) -> None:
    with FakeGitHub(capture=True, plan=plan) as fake:
        fake.next_number.setdefault("o/r", 1)
        _scenario(fake)
        log = fake.requests()
    undescribed = [(e["method"], e["path"]) for e in log
                   if operation(plan, e["method"], e["path"]) is None]
    assert len(undescribed) == len({p.rsplit("/", 1)[-1] for _, p in undescribed}) >= 1
    problems = [p for e in log if operation(plan, e["method"], e["path"]) is not None
                for p in request_problems(plan, e["method"], e["path"], e["query"], e["body"])
                + (response_problems(plan, e["method"], e["path"], e["status"], e["data"])
                   if e["status"] != 304 else [])]
    assert problems == []


def test_the_dashboard_answers_a_gate_through_jr2() -> None:
    """`jr2_sources.capabilities.approvals.policy.answer` (what the dashboard calls) records a
    `jr2:answer` comment when the gate awaits one, and the snapshot reads it as the answer, by whom
    it names; a second answer is refused (False), nothing written."""
    from jr2_sources.capabilities.approvals.policy import ApprovalRequest, answer

    with FakeGitHub(capture=True) as fake:
        fake.next_number.setdefault("o/r", 1)
        n = fake.add_issue("o/r", "f", labels=["agent"])
        pool = make_adapter(fake.url, label=["agent"])
        assert pool.claim(SnapshotItem(id=f"o/r#{n}"), "pool-1", 60)
        pool.park(f"o/r#{n}", "pool-1", ApprovalRequest("deploy"))
        assert answer(pool, f"o/r#{n}", "deploy", approve=False, reason="no", by="carol")
        [item] = pool.snapshot().items
        [gate] = item.gates
        assert (gate.status, gate.reason, gate.by) == ("rejected", "no", "carol")
        posts = len(fake.requests("POST"))
        assert not answer(pool, f"o/r#{n}", "deploy", approve=True)
        assert len(fake.requests("POST")) == posts
        assert [p for e in fake.requests()
                for p in request_problems("api.github.com", e["method"], e["path"],
                                          e["query"], e["body"])] == []


def test_the_fakes_table_of_operations_is_the_vendored_descriptions() -> None:
    # the fake ships without fixtures/: it reads (method, path) of each plan's operations from
    # its own table, which must say what the vendored descriptions say
    import sys
    from pathlib import Path

    from jr2_sources.testing.fakes import github_server

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
    import vendor_github

    table = json.loads(github_server.OPERATIONS.read_text(encoding="utf-8"))
    assert table == vendor_github.operations_table()
    assert set(table) == set(PLANS)
