"""jr2_sources: Work Sources, and the public pieces a third-party source reuses.

- `WorkSource`, `TrackerAdapter`, `WorkItem`, `default_holder`: the tracker-agnostic layer that
  turns an adapter (snapshot, claim, renew, release, record) into a jr2 `Source`.
- `Duration`, `parse_duration`: `10m`-style options.
- `Redactor`, `secret_values`: keep secrets out of logs and output.
- `verify_signature`, `hmac_sha256`, `header`, `DeliveryDeduper`, `Verdict`, `attach_webhook`:
  webhooks.
- `CommentClaims`, `CommentThread`: the claim protocol by comment history (`jr2_sources.claims`)
  for trackers with no compare-and-set; `jr2_sources.retry`: the one retry layer.
- `jr2_sources.testing`: the conformance kit every source runs against itself.
"""

from .comment_claims import CommentClaims, CommentThread
from .durations import Duration, parse_duration
from .redact import Redactor, secret_values
from .webhooks import (
    DeliveryDeduper,
    Verdict,
    attach_webhook,
    header,
    hmac_sha256,
    verify_signature,
)
from .worksource import TrackerAdapter, WorkItem, WorkSource, default_holder

__all__ = [
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Duration",
    "Redactor",
    "TrackerAdapter",
    "Verdict",
    "WorkItem",
    "WorkSource",
    "attach_webhook",
    "default_holder",
    "header",
    "hmac_sha256",
    "parse_duration",
    "secret_values",
    "verify_signature",
]
