"""jr2_sources: the Work Source layer, and the public pieces a third-party source reuses.

- `WorkSource`, `TrackerAdapter`, `WorkItem`, `default_holder` (`worksource`): the
  tracker-agnostic layer that turns an adapter (snapshot, claim, renew, release, record) into a
  jr2 `Source`.
- `Snapshot`, `SnapshotItem`, `BlockerRef`, `Claim`, `ReadySet`, `Reason`, `compute_ready_set`
  (`readyset`): what an adapter reads and the Ready-set computed from it; `report`: its views.
- `SourceKind`, `SourceEnv` (`registry`): how a plugin registers a kind (`jr2_register_sources`,
  added by `hooks`); `projectconfig`: `jr2.toml`.
- `jr2_sources.kit`: what a tracker plugin reuses (REST client, retries, webhooks, comment
  claims, label options); its names are re-exported here too.
- `jr2_sources.trackers`: the built-in trackers (local, github, jira), plugins like any other.
- `jr2_sources.cli`: the `ready` / `work` commands and the worker runner.
- `jr2_sources.testing`: the conformance kit every source runs against itself.

The names are re-exported lazily (`jr2_core.lazy`): a plugin importing one pays for its module
only, and `jr2 --help` for none.
"""

from typing import TYPE_CHECKING

from jr2_core import _moved
from jr2_core.lazy import lazy_exports

if TYPE_CHECKING:
    from .kit import (
        ClaimsByComment,
        CommentClaims,
        CommentThread,
        DeliveryDeduper,
        Duration,
        LabelOptions,
        Redactor,
        RequestStats,
        RestClient,
        RestResponse,
        Verdict,
        attach_webhook,
        header,
        hmac_sha256,
        parse_duration,
        parse_http_date,
        secret_values,
        verify_signature,
    )
    from .readyset import (
        BlockerRef,
        Claim,
        ReadySet,
        Reason,
        Snapshot,
        SnapshotItem,
        compute_ready_set,
    )
    from .registry import SourceEnv, SourceKind
    from .retries import Attempt
    from .worksource import TrackerAdapter, WorkItem, WorkSource, default_holder

_WHERE = {
    "ClaimsByComment": ".kit",
    "CommentClaims": ".kit",
    "CommentThread": ".kit",
    "DeliveryDeduper": ".kit",
    "Duration": ".kit",
    "LabelOptions": ".kit",
    "Redactor": ".kit",
    "RequestStats": ".kit",
    "RestClient": ".kit",
    "RestResponse": ".kit",
    "Verdict": ".kit",
    "attach_webhook": ".kit",
    "header": ".kit",
    "hmac_sha256": ".kit",
    "parse_duration": ".kit",
    "parse_http_date": ".kit",
    "secret_values": ".kit",
    "verify_signature": ".kit",
    "BlockerRef": ".readyset",
    "Claim": ".readyset",
    "ReadySet": ".readyset",
    "Reason": ".readyset",
    "Snapshot": ".readyset",
    "SnapshotItem": ".readyset",
    "compute_ready_set": ".readyset",
    "Attempt": ".retries",
    "SourceEnv": ".registry",
    "SourceKind": ".registry",
    "TrackerAdapter": ".worksource",
    "WorkItem": ".worksource",
    "WorkSource": ".worksource",
    "default_holder": ".worksource",
}

lazy_exports(__name__, _WHERE)

__all__ = [
    "Attempt",
    "BlockerRef",
    "Claim",
    "ClaimsByComment",
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Duration",
    "LabelOptions",
    "ReadySet",
    "Reason",
    "Redactor",
    "RequestStats",
    "RestClient",
    "RestResponse",
    "Snapshot",
    "SnapshotItem",
    "SourceEnv",
    "SourceKind",
    "TrackerAdapter",
    "Verdict",
    "WorkItem",
    "WorkSource",
    "attach_webhook",
    "compute_ready_set",
    "default_holder",
    "header",
    "hmac_sha256",
    "parse_duration",
    "parse_http_date",
    "secret_values",
    "verify_signature",
]

_moved.install()
