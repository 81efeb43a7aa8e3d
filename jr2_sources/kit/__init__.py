"""jr2_sources.kit: what a tracker plugin reuses, public and versioned as a unit.

- `Duration`, `parse_duration` (`durations`): `10m`-style options.
- `Redactor`, `secret_values` (`redact`): keep secrets out of logs and output.
- `verify_signature`, `hmac_sha256`, `header`, `DeliveryDeduper`, `Verdict`, `attach_webhook`
  (`jr2_sources.capabilities.webhooks`): webhooks.
- `claims`: the claim protocol by comment history, for trackers with no compare-and-set;
  `CommentClaims`, `CommentThread` (`comment_claims`) run it, `ClaimsByComment` delegates an
  adapter's claim / renew / release to it.
- `MarkerTrust`, `Reading`, `Ignored`, `marker_key`, `TRUST_HELP` (`markers`): the one reader
  of jr2's markers: only trusted authors' markers count, and with `JR2_MARKER_KEY` only signed
  ones; a tracker that builds its own declares `TrustsMarkers` and offers `trust`.
- `retry`: the one retry layer.
- `RestClient`, `RestResponse`, `RequestStats`, `parse_http_date` (`rest`): a counted, retried,
  spaced REST client for a tracker's JSON API (`requests` is loaded only when one is made).
- `gates_of` (`jr2_sources.capabilities.gates.comments`): approval gates (`jr2 work --gate`)
  read from a comment thread.
- `LabelOptions` (`labeloptions`): the config options of a label-based tracker (scope,
  priorities, jr2's labels); `LabelCommentTracker` (`labeltracker`): the base of a tracker whose
  claims are comments and whose marks are labels (GitHub, GitLab): the next one writes only its
  HTTP calls.
- `SinceWindow`, `WindowGap`, `iso_z` (`jr2_sources.capabilities.deltas.sincewindow`): the
  bookkeeping of a tracker read by
  "what changed since" (watermark, overlap, digests, pages walked by time, webhook marks).

The capabilities' helpers live in their slices (`jr2_sources.capabilities`); their names are
re-exported here so a plugin finds what it reuses in one place.
"""

from jr2_sources.capabilities.deltas.sincewindow import SinceWindow, WindowGap, iso_z
from jr2_sources.capabilities.gates.comments import gates_of
from jr2_sources.capabilities.webhooks import (
    DeliveryDeduper,
    Verdict,
    attach_webhook,
    header,
    hmac_sha256,
    verify_signature,
)

from .comment_claims import ClaimsByComment, CommentClaims, CommentThread
from .durations import Duration, parse_duration
from .labeloptions import LabelOptions
from .labeltracker import LabelCommentTracker, labels_of
from .markers import TRUST_HELP, Ignored, MarkerTrust, Reading, marker_key
from .redact import Redactor, secret_values
from .rest import RequestStats, RestClient, RestResponse, parse_http_date

__all__ = [
    "TRUST_HELP",
    "ClaimsByComment",
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Duration",
    "Ignored",
    "LabelCommentTracker",
    "LabelOptions",
    "MarkerTrust",
    "Reading",
    "Redactor",
    "RequestStats",
    "RestClient",
    "RestResponse",
    "SinceWindow",
    "Verdict",
    "WindowGap",
    "attach_webhook",
    "gates_of",
    "header",
    "hmac_sha256",
    "iso_z",
    "labels_of",
    "marker_key",
    "parse_duration",
    "parse_http_date",
    "secret_values",
    "verify_signature",
]
