"""jr2_sources.kit: what a tracker plugin reuses, public and versioned as a unit.

- `Duration`, `parse_duration` (`durations`): `10m`-style options.
- `Redactor`, `secret_values` (`redact`): keep secrets out of logs and output.
- `verify_signature`, `hmac_sha256`, `header`, `DeliveryDeduper`, `Verdict`, `attach_webhook`:
  webhooks (`jr2_sources.capabilities.webhooks`).
- `claims`: the claim protocol by comment history; `CommentClaims`, `CommentThread`
  (`comment_claims`) run it, `ClaimsByComment` delegates a tracker's claim / renew / release.
- `MarkerTrust`, `Reading`, `Ignored`, `marker_key`, `TRUST_HELP` (`markers`): the one reader of
  jr2's markers: only trusted authors' markers count, and with `JR2_MARKER_KEY` only signed ones.
- `retry`: the one retry layer.
- `RestClient`, `RestResponse`, `RequestStats`, `parse_http_date` (`rest`): a counted, retried,
  spaced REST client.
- `gates_of` (`jr2_sources.capabilities.gates.comments`): approval gates read from a thread.
- `LabelOptions` (`labeloptions`), `LabelCommentTracker` (`labeltracker`): the options and the
  base of a tracker whose claims are comments and whose marks are labels.
- `SinceWindow`, `WindowGap`, `Page`, `iso_z` (`jr2_sources.capabilities.deltas.sincewindow`);
  `SinceReader` (`...deltas.since`) reads a delta from a tracker's queries; `BlockerState`.

The capabilities' helpers live in their slices; they are re-exported here so a plugin finds
what it reuses in one place.
"""

from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow, WindowGap, iso_z
from jr2_sources.capabilities.gates.comments import gates_of
from jr2_sources.capabilities.webhooks import (
    DeliveryDeduper,
    Verdict,
    attach_webhook,
    header,
    hmac_sha256,
    verify_signature,
)
from jr2_sources.readyset import BlockerState

from .comment_claims import ClaimsByComment, CommentClaims, CommentThread
from .durations import Duration, parse_duration
from .labeloptions import LabelOptions
from .labeltracker import LabelCommentTracker, labels_of
from .markers import TRUST_HELP, Ignored, MarkerTrust, Reading, marker_key
from .redact import Redactor, secret_values
from .rest import RequestStats, RestClient, RestResponse, parse_http_date

__all__ = [
    "TRUST_HELP",
    "BlockerState",
    "ClaimsByComment",
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Duration",
    "Ignored",
    "LabelCommentTracker",
    "LabelOptions",
    "MarkerTrust",
    "Page",
    "Reading",
    "Redactor",
    "RequestStats",
    "RestClient",
    "RestResponse",
    "SinceReader",
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
