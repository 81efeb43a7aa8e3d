"""Linear webhook deliveries: verified, replay-checked, de-duplicated, then judged.

Design notes (Linear's webhooks page and `@linear/sdk`'s `LinearWebhookClient`)
-------------------------------------------------------------------------------
* `Linear-Signature` is the hex HMAC-SHA256 of the raw body under the webhook's signing secret;
  it is compared in constant time. No or a wrong signature: 401, and nothing is remembered.
* Replay: the body's `webhookTimestamp` (epoch milliseconds, Linear's `EntityWebhookPayload`)
  must be within `REPLAY_WINDOW` of this machine's clock (the SDK allows one minute); an older
  or a future one is refused with 401, even when signed (a captured delivery sent again).
* `Linear-Delivery` (a UUID per delivery, the same when Linear retries it): a repeat is
  acknowledged (200) and not acted on.
* What wakes: an `Issue` event of this team (`data.teamId`), naming the issue (`data.id`, read
  by id in the next delta); an `Attachment` event (`data.issueId`), unless its marker nonce is
  one of this process's own writes (own deliveries are told by nonce, not by
  account); `IssueLabel` changes wake a full reading (a renamed label may change the scope
  without moving any issue). Anything else is a 200 without wake.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping

from jr2_sources.capabilities.webhooks import DeliveryDeduper, Verdict, header, verify_signature

REPLAY_WINDOW = 60.0
"""Seconds a delivery's `webhookTimestamp` may differ from now."""


def receive(headers: Mapping[str, str], body: bytes, secret: str | None, *,
            team_id: str | None, deduper: DeliveryDeduper, own: Collection[str] = (),
            clock: Callable[[], float] = time.time) -> Verdict:
    """The verdict on one delivery (see the module notes)."""
    if not secret:
        return Verdict(401, reason="no webhook secret configured")
    if not verify_signature(secret, body, header(headers, "Linear-Signature"), prefix=""):
        return Verdict(401, reason="bad or missing Linear-Signature")
    try:
        payload = json.loads(body)
    except ValueError:
        return Verdict(400, reason="not JSON")
    if not isinstance(payload, dict):
        return Verdict(400, reason="not a JSON object")
    stamp = payload.get("webhookTimestamp")
    if not isinstance(stamp, int | float) or abs(clock() - stamp / 1000.0) > REPLAY_WINDOW:
        return Verdict(401, reason="webhookTimestamp outside the replay window")
    if deduper.seen(header(headers, "Linear-Delivery")):
        return Verdict(200, reason="repeat delivery")
    kind, data = payload.get("type"), payload.get("data")
    if not isinstance(data, dict):
        return Verdict(200, reason="no data")
    if kind == "Issue":
        if team_id is not None and data.get("teamId") != team_id:
            return Verdict(200, reason="another team")
        return Verdict(200, wake=True, reason=f"issue {data.get('identifier', '?')} "
                                              f"{payload.get('action', 'changed')}",
                       touched=(str(data.get("id")),))
    if kind == "Attachment":
        meta = data.get("metadata")
        nonce = meta.get("nonce") if isinstance(meta, dict) else None
        if nonce is not None and nonce in own:
            return Verdict(200, reason="own write")
        return Verdict(200, wake=True, reason="attachment changed",
                       touched=(str(data.get("issueId")),))
    if kind == "IssueLabel":
        return Verdict(200, wake=True, reason="label changed", full=True)
    return Verdict(200, reason=f"{kind} events do not change the Ready-set")
