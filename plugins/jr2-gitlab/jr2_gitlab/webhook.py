"""GitLab webhook deliveries: check the token or signature, drop replays, decide whether to wake.

Design notes
------------
* Two ways GitLab proves a delivery, either is accepted with the one secret jr2 is given:
  - the secret token, sent as is in `X-Gitlab-Token`, compared in constant time;
  - the signing token (newer GitLab), which follows Standard Webhooks: `webhook-signature:
    v1,<base64 HMAC-SHA256>` over `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with
    the token's bytes (a `whsec_<base64>` token is base64-decoded first); the header may list
    several space-separated signatures (key rotation). A `webhook-timestamp` more than
    `TOLERANCE` seconds from now is refused (a replayed old delivery). (GitLab merge request
    230944, "Add webhook HMAC signing token"; standardwebhooks.com, "Verifying signatures".)
* Replays: the header that stays the same across GitLab's retries and manual resends is
  `Idempotency-Key` (also sent as `webhook-id`); `X-Gitlab-Event-UUID` is regenerated per send
  and shared by a chain of recursive hooks, so it is only used on older GitLab that sends no
  `Idempotency-Key` (GitLab's webhook docs, "Delivery headers"). The key is remembered by
  `jr2_sources.capabilities.webhooks.DeliveryDeduper`: a repeat is acknowledged and ignored.
* Issue events (`object_kind` `issue`, or `work_item` for
tasks and other work items; header `X-Gitlab-Event: Issue Hook`) of the scoped project
(`project.path_with_namespace`) wake the pool, naming the issue (`object_attributes.iid`, read
directly by the next delta); every other delivery is a 200 that wakes nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from jr2_sources.capabilities.webhooks import DeliveryDeduper, Verdict, header

from .refs import same_project

WAKE_KINDS = frozenset({"issue", "work_item"})
TOLERANCE = 300.0  # seconds a signed delivery's timestamp may be off (Standard Webhooks)


def verify_token(headers: Mapping[str, str], secret: str) -> bool:
    """True when `X-Gitlab-Token` equals `secret` (constant-time compare)."""
    given = header(headers, "X-Gitlab-Token")
    if not given or not secret:
        return False
    return hmac.compare_digest(given.encode(), secret.encode())


def signing_key(secret: str) -> bytes:
    """The HMAC key of a signing token: `whsec_<base64>` decoded, else the token's bytes."""
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
        except (binascii.Error, ValueError):
            pass
    return secret.encode()


def sign(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """The `v1,<base64>` signature GitLab sends for a delivery (Standard Webhooks)."""
    mac = hmac.new(signing_key(secret), f"{msg_id}.{timestamp}.".encode() + body,
                   hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify_signing(headers: Mapping[str, str], body: bytes, secret: str, *,
                   now: Callable[[], float] = time.time) -> bool:
    """True when one `v1` signature of `webhook-signature` matches and the timestamp is
    recent (constant-time compare)."""
    msg_id, stamp = header(headers, "webhook-id"), header(headers, "webhook-timestamp")
    given = header(headers, "webhook-signature")
    if not (msg_id and stamp and given and secret):
        return False
    try:
        if abs(now() - float(stamp)) > TOLERANCE:
            return False
    except ValueError:
        return False
    expected = sign(secret, msg_id, stamp, body).encode()
    return any(hmac.compare_digest(sig.encode(), expected) for sig in given.split()
               if sig.startswith("v1,"))


def delivery_key(headers: Mapping[str, str]) -> str | None:
    """What identifies a delivery across retries: `Idempotency-Key` (or `webhook-id`), and
    `X-Gitlab-Event-UUID` only on a GitLab that sends neither."""
    return (header(headers, "Idempotency-Key") or header(headers, "webhook-id")
            or header(headers, "X-Gitlab-Event-UUID"))


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


def marks_of(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The issue an issue event names (`object_attributes.iid`, as text): a pool read by deltas
    reads it directly next (`delta.py`)."""
    attrs = payload.get("object_attributes")
    iid = attrs.get("iid") if isinstance(attrs, Mapping) else None
    return (str(iid),) if isinstance(iid, int) else ()


def receive(headers: Mapping[str, str], body: bytes, secret: str | None, *, project: str,
            deduper: DeliveryDeduper) -> Verdict:
    """The verdict on one delivery: 401 without the right token or signature (not remembered),
    200 without wake for a repeat or another event, 200 with wake for an issue event of the
    project."""
    if secret and not (verify_token(headers, secret) or verify_signing(headers, body, secret)):
        return Verdict(401, False, "bad or missing X-Gitlab-Token or webhook-signature")
    if deduper.seen(delivery_key(headers)):
        return Verdict(200, False, "duplicate delivery")
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        return Verdict(400, False, "the body is not JSON")
    if not isinstance(payload, dict):
        return Verdict(400, False, "the body is not a JSON object")
    kind = str(payload.get("object_kind") or header(headers, "X-Gitlab-Event") or "event")
    if wakes(payload, project):
        return Verdict(200, True, f"{kind} for {project}", marks_of(payload))
    return Verdict(200, False, f"{kind} ignored")
