"""jr2_sources: Work Sources, and the public pieces a third-party source reuses.

- `WorkSource`, `TrackerAdapter`, `WorkItem`, `default_holder`: the tracker-agnostic layer that
  turns an adapter (snapshot, claim, renew, release, record) into a jr2 `Source`.
- `Duration`, `parse_duration`: `10m`-style options.
- `Redactor`, `secret_values`: keep secrets out of logs and output.
- `verify_signature`, `hmac_sha256`, `DeliveryDeduper`, `Verdict`, `attach_webhook`: webhooks.
- `jr2_sources.testing`: the conformance kit every source runs against itself.
"""

from .durations import Duration, parse_duration
from .redact import Redactor, secret_values
from .webhooks import DeliveryDeduper, Verdict, attach_webhook, hmac_sha256, verify_signature
from .worksource import TrackerAdapter, WorkItem, WorkSource, default_holder

__all__ = [
    "DeliveryDeduper",
    "Duration",
    "Redactor",
    "TrackerAdapter",
    "Verdict",
    "WorkItem",
    "WorkSource",
    "attach_webhook",
    "default_holder",
    "hmac_sha256",
    "parse_duration",
    "secret_values",
    "verify_signature",
]
