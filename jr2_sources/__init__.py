"""jr2_sources: Work Sources, and the public pieces a third-party source reuses.

- `WorkSource`, `TrackerAdapter`, `WorkItem`, `default_holder`: the tracker-agnostic layer that
  turns an adapter (snapshot, claim, renew, release, record) into a jr2 `Source`.
- `Duration`, `parse_duration`: `10m`-style options.
- `Redactor`, `secret_values`: keep secrets out of logs and output.
- `verify_signature`, `hmac_sha256`, `header`, `DeliveryDeduper`, `Verdict`, `attach_webhook`:
  webhooks.
- `CommentClaims`, `CommentThread`: the claim protocol by comment history (`jr2_sources.claims`)
  for trackers with no compare-and-set; `ClaimsByComment`: an adapter's claim / renew / release
  delegated to it; `jr2_sources.retry`: the one retry layer.
- `RestClient`, `RestResponse`, `RequestStats`, `parse_http_date`: a counted, retried, spaced
  REST client for a tracker's JSON API (`requests` is loaded only when one is made).
- `LabelOptions`: the config options of a label-based tracker (scope, priorities, jr2's labels).
- `jr2_sources.testing`: the conformance kit every source runs against itself.

The names are re-exported lazily (`jr2_core.lazy`), so a plugin importing one pays for its module
only.
"""

from typing import TYPE_CHECKING

from jr2_core.lazy import lazy_exports

if TYPE_CHECKING:
    from .comment_claims import ClaimsByComment, CommentClaims, CommentThread
    from .durations import Duration, parse_duration
    from .labeloptions import LabelOptions
    from .redact import Redactor, secret_values
    from .rest import RequestStats, RestClient, RestResponse, parse_http_date
    from .webhooks import (
        DeliveryDeduper,
        Verdict,
        attach_webhook,
        header,
        hmac_sha256,
        verify_signature,
    )
    from .worksource import TrackerAdapter, WorkItem, WorkSource, default_holder

_WHERE = {
    "ClaimsByComment": ".comment_claims",
    "CommentClaims": ".comment_claims",
    "CommentThread": ".comment_claims",
    "Duration": ".durations",
    "parse_duration": ".durations",
    "LabelOptions": ".labeloptions",
    "Redactor": ".redact",
    "secret_values": ".redact",
    "RequestStats": ".rest",
    "RestClient": ".rest",
    "RestResponse": ".rest",
    "parse_http_date": ".rest",
    "DeliveryDeduper": ".webhooks",
    "Verdict": ".webhooks",
    "attach_webhook": ".webhooks",
    "header": ".webhooks",
    "hmac_sha256": ".webhooks",
    "verify_signature": ".webhooks",
    "TrackerAdapter": ".worksource",
    "WorkItem": ".worksource",
    "WorkSource": ".worksource",
    "default_holder": ".worksource",
}

lazy_exports(__name__, _WHERE)

__all__ = [
    "ClaimsByComment",
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Duration",
    "LabelOptions",
    "Redactor",
    "RequestStats",
    "RestClient",
    "RestResponse",
    "TrackerAdapter",
    "Verdict",
    "WorkItem",
    "WorkSource",
    "attach_webhook",
    "default_holder",
    "header",
    "hmac_sha256",
    "parse_duration",
    "parse_http_date",
    "secret_values",
    "verify_signature",
]
