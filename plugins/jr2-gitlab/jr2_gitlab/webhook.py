"""GitLab webhook deliveries: check the secret token, drop replays, decide whether to wake.

Design note: GitLab does not sign deliveries; it sends the webhook's secret token as is in
`X-Gitlab-Token`, which is compared with ours in constant time (`hmac.compare_digest`). Each
delivery carries `X-Gitlab-Event-UUID`, remembered by `jr2_sources.kit.webhooks.DeliveryDeduper`:
a repeat is acknowledged and ignored. Issue events (`object_kind` `issue`, or `work_item` for
tasks and other work items; header `X-Gitlab-Event: Issue Hook`) of the scoped project
(`project.path_with_namespace`) wake the pool; every other delivery is a 200 that wakes nothing.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from typing import Any

from jr2_sources import DeliveryDeduper, Verdict, header

from .refs import same_project

WAKE_KINDS = frozenset({"issue", "work_item"})


def verify_token(headers: Mapping[str, str], secret: str) -> bool:
    """True when `X-Gitlab-Token` equals `secret` (constant-time compare)."""
    given = header(headers, "X-Gitlab-Token")
    if not given or not secret:
        return False
    return hmac.compare_digest(given.encode(), secret.encode())


def wakes(payload: Mapping[str, Any], project: str) -> bool:
    """True when the delivery is an issue event of `project`."""
    if payload.get("object_kind") not in WAKE_KINDS:
        return False
    proj = payload.get("project")
    if isinstance(proj, Mapping):
        path = proj.get("path_with_namespace")
        if isinstance(path, str) and same_project(path, project):
            return True
    return False


def receive(headers: Mapping[str, str], body: bytes, secret: str | None, *, project: str,
            deduper: DeliveryDeduper) -> Verdict:
    """The verdict on one delivery: 401 without the right token (not remembered), 200 without
    wake for a repeat or another event, 200 with wake for an issue event of the project."""
    if secret and not verify_token(headers, secret):
        return Verdict(401, False, "bad or missing X-Gitlab-Token")
    if deduper.seen(header(headers, "X-Gitlab-Event-UUID")):
        return Verdict(200, False, "duplicate delivery")
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        return Verdict(400, False, "the body is not JSON")
    if not isinstance(payload, dict):
        return Verdict(400, False, "the body is not a JSON object")
    kind = str(payload.get("object_kind") or header(headers, "X-Gitlab-Event") or "event")
    if wakes(payload, project):
        return Verdict(200, True, f"{kind} for {project}")
    return Verdict(200, False, f"{kind} ignored")
