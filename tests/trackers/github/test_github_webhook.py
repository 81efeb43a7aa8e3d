"""Webhook deliveries: GitHub's signature test vector, replays, which events wake a pool, and
the adapter's receiver on the run host's `POST /webhook`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from gh_helpers import make_adapter

from jr2_sources.capabilities.webhooks import Verdict, attach_webhook, hmac_sha256
from jr2_sources.trackers.github.webhook import (
    DeliveryDeduper,
    receive,
    touched,
    verify_webhook,
    webhook_wakes,
)

SECRET = "It's a Secret to Everybody"
VECTOR = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def signed(body: bytes, secret: str = "s3cret", **headers: str) -> dict[str, str]:
    return {"X-Hub-Signature-256": "sha256=" + hmac_sha256(secret, body), **headers}


def test_githubs_documented_test_vector_verifies() -> None:
    assert verify_webhook({"X-Hub-Signature-256": VECTOR}, b"Hello, World!", SECRET)
    assert verify_webhook({"x-hub-signature-256": VECTOR}, b"Hello, World!", SECRET)


@pytest.mark.parametrize(("headers", "body", "secret"), [
    ({}, b"Hello, World!", SECRET),
    ({"X-Hub-Signature-256": VECTOR}, b"Hello, World!!", SECRET),
    ({"X-Hub-Signature-256": VECTOR}, b"Hello, World!", "another secret"),
    ({"X-Hub-Signature-256": VECTOR.replace("sha256=", "sha1=")}, b"Hello, World!", SECRET),
    ({"X-Hub-Signature": VECTOR}, b"Hello, World!", SECRET),  # the SHA-1 header name
    ({"X-Hub-Signature-256": VECTOR}, b"Hello, World!", ""),
])
def test_bad_or_missing_signatures_fail(headers: dict[str, str], body: bytes,
                                        secret: str) -> None:
    assert not verify_webhook(headers, body, secret)


@pytest.mark.parametrize(("event", "name", "repo", "wakes"), [
    ("issues", "issues.opened.json", "octo/app", True),
    ("issues", "issues.opened.json", "OCTO/App", True),
    ("issue_dependencies", "issue_dependencies.blocked_by_added.json", "octo/app", True),
    ("sub_issues", "sub_issues.sub_issue_added.json", "octo/app", True),
    ("issues", "issues.opened.json", "octo/other", False),
    ("issue_comment", "issues.opened.json", "octo/app", False),
    ("ping", "issues.opened.json", "octo/app", False),
])
def test_webhook_wakes(fixture: Callable[[str], Any], event: str, name: str, repo: str,
                       wakes: bool) -> None:
    assert webhook_wakes(event, fixture(f"webhooks/{name}"), repo) is wakes


def test_a_sub_issues_delivery_without_repository_uses_its_issues(
        fixture: Callable[[str], Any]) -> None:
    payload = fixture("webhooks/sub_issues.sub_issue_added.json")
    del payload["repository"]  # optional in the documented schema
    assert webhook_wakes("sub_issues", payload, "octo/app")
    assert not webhook_wakes("sub_issues", payload, "octo/lib")


def test_receive(fixture: Callable[[str], Any]) -> None:
    body = json.dumps(fixture("webhooks/issues.opened.json")).encode()
    good = signed(body, **{"X-GitHub-Event": "issues",
                           "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"})
    dedupe = DeliveryDeduper()
    assert receive(good, body, "s3cret", repo="octo/app", deduper=dedupe) == Verdict(
        200, True, "issues for octo/app")
    assert receive(good, body, "s3cret", repo="octo/app", deduper=dedupe) == Verdict(
        200, False, "duplicate delivery")
    unsigned = {k: v for k, v in good.items() if k != "X-Hub-Signature-256"}
    fresh = DeliveryDeduper()
    assert receive(unsigned, body, "s3cret", repo="octo/app", deduper=fresh).status == 401
    # a refused delivery is not remembered: the signed one with that id still counts
    assert receive(good, body, "s3cret", repo="octo/app", deduper=fresh).wake
    star = {**unsigned, "X-GitHub-Event": "star", "X-GitHub-Delivery": "d-2"}
    assert receive(star, body, None, repo="octo/app", deduper=fresh) == Verdict(
        200, False, "star ignored")
    bad = signed(b"[1", **{"X-GitHub-Event": "issues"})
    assert receive(bad, b"[1", "s3cret", repo="octo/app", deduper=fresh).status == 400


class _Run:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def send(self, gate: str, event: str, data: Any, external: bool = True) -> None:
        self.sent.append((gate, event))


class _Host:
    def __init__(self) -> None:
        self.app = web.Application()

    def add_route(self, method: str, path: str, handler: Any, *, auth: bool = True) -> None:
        self.app.router.add_route(method, path, handler)


async def test_the_adapter_on_the_run_hosts_webhook_route(fixture: Callable[[str], Any]) -> None:
    adapter = make_adapter("http://127.0.0.1:9", "octo/app")
    host, run = _Host(), _Run()
    attach_webhook(host, run, adapter.webhook, "s3cret")
    body = json.dumps(fixture("webhooks/issue_dependencies.blocked_by_added.json")).encode()
    headers = signed(body, **{"X-GitHub-Event": "issue_dependencies",
                              "X-GitHub-Delivery": "d-1", "Content-Type": "application/json"})
    async with TestClient(TestServer(host.app)) as client:
        r1 = await client.post("/webhook", data=body, headers=headers)
        r2 = await client.post("/webhook", data=body, headers=headers)
        r3 = await client.post("/webhook", data=body,
                               headers={**headers, "X-Hub-Signature-256": "sha256=00",
                                        "X-GitHub-Delivery": "d-2"})
    assert (r1.status, r2.status, r3.status) == (200, 200, 401)
    assert run.sent == [("source", "wake")]


def test_a_form_encoded_delivery_is_read_from_its_payload_field(
        fixture: Callable[[str], Any]) -> None:
    """GitHub's webhook form offers `application/x-www-form-urlencoded` first: the JSON comes
    as `payload=<urlencoded json>` and the signature covers that raw body."""
    from urllib.parse import urlencode

    body = urlencode({"payload": json.dumps(fixture("webhooks/issues.opened.json"))}).encode()
    headers = signed(body, **{"X-GitHub-Event": "issues", "X-GitHub-Delivery": "f-1",
                              "Content-Type": "application/x-www-form-urlencoded"})
    assert receive(headers, body, "s3cret", repo="octo/app", deduper=DeliveryDeduper()) == (
        Verdict(200, True, "issues for octo/app"))


def test_a_delivery_for_another_repository_never_wakes_for_an_issue_of_ours(
        fixture: Callable[[str], Any]) -> None:
    payload = fixture("webhooks/issue_dependencies.blocked_by_added.json")
    payload["repository"]["full_name"] = "octo/elsewhere"  # it carries octo/app's issues still
    assert any("octo/app" in str(payload.get(k, {}).get("repository_url"))
               for k in ("blocked_issue", "blocking_issue"))
    assert not webhook_wakes("issue_dependencies", payload, "octo/app")


def test_a_comment_wakes_a_pool_only_when_it_answers_a_gate() -> None:
    """`issue_comment` (GitHub's own example delivery, from the vendored webhook examples):
    an ordinary comment, like jr2's own claim comments, wakes nothing; `/jr2 approve NAME` or
    `/jr2 reject NAME` on the repository wakes the pool (an approval gate was answered)."""
    from pathlib import Path

    specs = Path(__file__).resolve().parents[3] / "fixtures" / "github" / "openapi"
    events = json.loads((specs / "webhook-examples.json").read_text())
    [example] = next(e for e in events if e["name"] == "issue_comment")["examples"][:1]
    repo = example["repository"]["full_name"]
    assert not webhook_wakes("issue_comment", example, repo)
    for text in ("/jr2 approve deploy", "/jr2 reject deploy not now"):
        answer = {**example, "comment": {**example["comment"], "body": text}}
        assert webhook_wakes("issue_comment", answer, repo)
        assert not webhook_wakes("issue_comment", answer, "octo/other")
        assert not webhook_wakes("issue_comment", {**answer, "action": "deleted"}, repo)
    claim = {**example, "comment": {**example["comment"],
                                    "body": '<!-- jr2:claim {"holder": "h"} -->\n/jr2 approve x'}}
    assert not webhook_wakes("issue_comment", claim, repo)


def test_pull_request_and_check_deliveries_name_their_pull_requests() -> None:
    """`pull_request` carries the PR's `number` ("The pull request number"), `check_run` and
    `check_suite` their `pull_requests` (`pull-request-minimal`: `number`), per
    @octokit/openapi-webhooks: a pool read by deltas reads those PRs directly next, so the issues
    each links are judged again (a PR closed, reopened, edited or unlinked)."""
    repo = {"full_name": "o/r"}
    pr = {"action": "closed", "number": 7, "pull_request": {"number": 7}, "repository": repo}
    assert touched(pr, "o/r") == ("7",)
    run = {"action": "completed", "repository": repo,
           "check_run": {"pull_requests": [{"number": 7}, {"number": 9}]}}
    assert touched(run, "o/r") == ("7", "9")
    suite = {"action": "completed", "repository": repo,
             "check_suite": {"pull_requests": [{"number": 9}]}}
    assert touched(suite, "o/r") == ("9",)
    assert touched({**pr, "repository": {"full_name": "o/other"}}, "o/r") == ()
