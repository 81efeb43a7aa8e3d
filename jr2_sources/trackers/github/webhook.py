"""GitHub webhook deliveries: verify the signature, drop replays, decide whether to wake.

`X-Hub-Signature-256` is checked in constant time; a repeated `X-GitHub-Delivery` is acknowledged
and ignored; bodies may be form-encoded (`payload=<json>`). `issues`, `issue_dependencies` and
`sub_issues` of the configured repository wake (with `--done-when merged` also `pull_request`,
`check_suite`, `check_run`, `status`; with `--on-feedback rerun` `pull_request_review`), naming
the issues they concern (`Verdict.touched`); a `label` or `milestone` change of scope wakes with
`Verdict.full`; an `issue_comment` only when it answers a gate. `receive` is the tracker's
`webhook`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from jr2_sources.capabilities.approvals.policy import answer_command
from jr2_sources.capabilities.webhooks import DeliveryDeduper, Verdict, header, verify_signature

from .refs import repo_of_api_url, same_repo

__all__ = ["PR_EVENTS", "WAKE_EVENTS", "DeliveryDeduper", "ScopeJudge", "receive", "touched",
           "verify_webhook", "webhook_wakes"]

WAKE_EVENTS = frozenset({"issues", "issue_dependencies", "sub_issues"})
PR_EVENTS = frozenset({"pull_request", "check_suite", "check_run", "status"})
_ISSUE_KEYS = ("issue", "blocked_issue", "blocking_issue", "sub_issue", "parent_issue")


def verify_webhook(headers: Mapping[str, str], body: bytes, secret: str | bytes) -> bool:
    """True when `X-Hub-Signature-256` is the HMAC-SHA256 of the raw `body` under `secret`."""
    return verify_signature(secret, body, header(headers, "X-Hub-Signature-256"))


def webhook_wakes(event_name: str, payload: Mapping[str, Any], repo: str,
                  events: frozenset[str] = WAKE_EVENTS) -> bool:
    """True when the delivery can change the Ready-set of `repo` (`owner/repo`); `events`: the
    event names that can (`WAKE_EVENTS`, plus `PR_EVENTS` with `--done-when merged`)."""
    if not isinstance(payload, Mapping):
        return False
    if event_name == "issue_comment":  # a gate's answer (an approval gate, `--gate`)
        comment = payload.get("comment")
        text = comment.get("body") if isinstance(comment, Mapping) else None
        if payload.get("action") not in ("created", "edited") or not isinstance(text, str) \
                or answer_command(text) is None:
            return False
    elif event_name not in events:
        return False
    repository = payload.get("repository")
    if isinstance(repository, Mapping):
        full = repository.get("full_name")
        return isinstance(full, str) and same_repo(full, repo)
    for key in _ISSUE_KEYS:
        issue = payload.get(key)
        if isinstance(issue, Mapping):
            other = repo_of_api_url(issue.get("repository_url"))
            if other is not None and same_repo(other, repo):
                return True
    return False


def touched(payload: Mapping[str, Any], repo: str) -> tuple[str, ...]:
    """The numbers (as text) of the issues of `repo` a delivery names (`issue`,
    `blocked_issue`, `blocking_issue`, `sub_issue`, `parent_issue`): both sides of a dependency
    or sub-issue change, whose `updated_at` may not move (see `delta.py`); and the pull requests
    of `pull_request`, `check_run` and `check_suite` deliveries (module notes)."""
    out: list[str] = []
    repository = payload.get("repository")
    default = repository.get("full_name") if isinstance(repository, Mapping) else None
    for key in _ISSUE_KEYS:
        issue = payload.get(key)
        if not isinstance(issue, Mapping) or not isinstance(issue.get("number"), int):
            continue
        other = repo_of_api_url(issue.get("repository_url")) or default
        if isinstance(other, str) and same_repo(other, repo):
            out.append(str(issue["number"]))
    if not (isinstance(default, str) and same_repo(default, repo)):
        return tuple(out)
    if isinstance(payload.get("pull_request"), Mapping) and isinstance(payload.get("number"),
                                                                      int):
        out.append(str(payload["number"]))  # a `pull_request` delivery: "The pull request number"
    for key in ("check_run", "check_suite"):
        checks = payload.get(key)
        prs = checks.get("pull_requests") if isinstance(checks, Mapping) else None
        for pr in prs if isinstance(prs, list) else []:
            if isinstance(pr, Mapping) and isinstance(pr.get("number"), int):
                out.append(str(pr["number"]))
    return tuple(out)


def _json_of(headers: Mapping[str, str], body: bytes) -> bytes | str:
    """The JSON text of a delivery: the body, or its `payload` field when form-encoded."""
    kind = (header(headers, "Content-Type") or "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return body
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return (fields.get("payload") or [""])[0]


ScopeJudge = Callable[[str, Mapping[str, Any]], "str | None"]
"""(event, payload) -> why the delivery can change the filter's scope, or None
(`scopehooks.scope_change` bound to a repository and configuration)."""


def receive(headers: Mapping[str, str], body: bytes, secret: str | None, *, repo: str,
            deduper: DeliveryDeduper, events: frozenset[str] = WAKE_EVENTS,
            scope: ScopeJudge | None = None) -> Verdict:
    """The verdict on one delivery. With a secret, an unsigned or badly signed delivery is a 401
    and wakes nothing (and is not remembered); a repeated delivery id is a 200 that wakes
    nothing. Without a secret the run host listens on loopback only (`jr2 work` enforces it).
    `scope` judges the deliveries no event in `events` covers: one it names a reason for wakes
    the pool with `Verdict.full` (the next reading is full)."""
    if secret and not verify_webhook(headers, body, secret):
        return Verdict(401, False, "bad or missing X-Hub-Signature-256")
    if deduper.seen(header(headers, "X-GitHub-Delivery")):
        return Verdict(200, False, "duplicate delivery")
    event = header(headers, "X-GitHub-Event") or ""
    try:
        payload = json.loads(_json_of(headers, body) or b"{}")
    except ValueError:
        return Verdict(400, False, "the body is not JSON")
    if not isinstance(payload, dict):
        return Verdict(400, False, "the body is not a JSON object")
    if webhook_wakes(event, payload, repo, events):
        return Verdict(200, True, f"{event} for {repo}", touched(payload, repo))
    why = scope(event, payload) if scope is not None else None
    if why:
        return Verdict(200, True, why, full=True)
    return Verdict(200, False, f"{event or 'an unnamed event'} ignored")
