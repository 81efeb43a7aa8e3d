"""jr2_sources: Work Sources, and the public pieces a third-party source reuses.

- `Tracker` (with its `Options`), the one thing a tracker plugin implements (snapshot, claim,
  renew, settle; optional webhook, watch, close), and the Snapshot types it returns
  (`Snapshot`, `SnapshotItem`, `BlockerRef`, `Claim`); `ReadOnly` / `ReadOnlyError`: the one
  read-only wrapper of a dry run; `ItemError`: a failure of one item only.
- `WorkSource`, `WorkItem`, `default_holder`: the tracker-agnostic layer that turns a `Tracker`
  into a jr2 `Source`, enforcing scope, re-offers, one-item failures and people-win once.
  `TrackerAdapter` is a deprecated alias of `Tracker`.
- `Duration`, `parse_duration`: `10m`-style options.
- `Redactor`, `secret_values`: keep secrets out of logs and output.
- `verify_signature`, `hmac_sha256`, `header`, `DeliveryDeduper`, `Verdict`, `attach_webhook`:
  webhooks.
- `CommentClaims`, `CommentThread`: the claim protocol by comment history (`jr2_sources.claims`)
  for trackers with no compare-and-set; `ClaimsByComment`: an adapter's claim / renew / release
  delegated to it; `jr2_sources.retry`: the one retry layer.
- `RestClient`, `RestResponse`, `RequestStats`, `parse_http_date`: a counted, retried, spaced
  REST client for a tracker's JSON API (`requests` is loaded only when one is made).
- `LabelOptions`: the config options of a label-based tracker (scope, priorities, jr2's labels);
  `LabelCommentTracker`: the base of a tracker whose claims are comments and whose marks are
  labels (GitHub, GitLab), so the next one writes only its HTTP calls.
- `jr2_sources.testing`: the conformance kit every source runs against itself.
"""

from .comment_claims import ClaimsByComment, CommentClaims, CommentThread
from .durations import Duration, parse_duration
from .labeloptions import LabelOptions
from .labeltracker import LabelCommentTracker
from .redact import Redactor, secret_values
from .rest import RequestStats, RestClient, RestResponse, parse_http_date
from .tracker import (
    BlockerRef,
    Claim,
    ItemError,
    ReadOnly,
    ReadOnlyError,
    Snapshot,
    SnapshotItem,
    Tracker,
    TrackerOptions,
)
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
    "BlockerRef",
    "Claim",
    "ClaimsByComment",
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Duration",
    "ItemError",
    "LabelCommentTracker",
    "LabelOptions",
    "ReadOnly",
    "ReadOnlyError",
    "Redactor",
    "RequestStats",
    "RestClient",
    "RestResponse",
    "Snapshot",
    "SnapshotItem",
    "Tracker",
    "TrackerAdapter",
    "TrackerOptions",
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
