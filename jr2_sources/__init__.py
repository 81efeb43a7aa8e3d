"""jr2_sources: the Work Source layer, and the public pieces a third-party source reuses.

- `Tracker` (`tracker`, with its `Options` = `TrackerOptions`): the one thing a tracker plugin
  implements (snapshot, claim, renew, settle; optional webhook, watch, close); `ReadOnly` /
  `ReadOnlyError`: the one read-only wrapper of a dry run; `ItemError`: one item's failure.
- `WorkSource`, `WorkItem`, `default_holder` (`worksource`): the tracker-agnostic layer that
  turns a `Tracker` into a jr2 `Source`, enforcing scope, re-offers, one-item failures and
  people-win once.
- `capabilities_of`, `CAPABILITIES` (`capabilities`) and the mixins a tracker inherits to
  declare each optional capability: `ReadsDeltas`, `KeepsAttempts`, `KeepsLimits`,
  `LocksByComment`, `ReadsBodies`, `KeepsGates`, `HasDashboard`, `TakesWebhooks`.
- `Snapshot`, `SnapshotItem`, `BlockerRef`, `Claim`, `ReadySet`, `Reason`, `compute_ready_set`
  (`readyset`): what an adapter reads and the Ready-set computed from it; `report`: its views.
  `Delta` (`incremental`): what an adapter's optional `changes()` answers between snapshots.
- `SourceKind`, `SourceEnv` (`registry`): how a plugin registers a kind (`jr2_register_sources`,
  added by `hooks`); `projectconfig`: `jr2.toml`.
- `jr2_sources.kit`: what a tracker plugin reuses (REST client, retries, webhooks, comment
  claims, label options); its names are re-exported here too.
- `jr2_sources.trackers`: the built-in trackers (local, github, jira), plugins like any other.
- `work`, `work_async`, `WorkResult` (`cli.compose`): `jr2 work` as a Python function.
- `jr2_sources.cli`: the `ready` / `work` commands and the worker runner.
- `jr2_sources.testing`: the conformance kit every source runs against itself.

"""

from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.retries import Attempt

from .capabilities import CAPABILITIES, Capability, capabilities_of
from .capabilities.dashboard.mixin import HasDashboard
from .capabilities.deltas import ReadsDeltas
from .capabilities.feedback import TakesFeedback
from .capabilities.gates import KeepsGates
from .capabilities.limits import KeepsLimits, LocksByComment, ReadsBodies
from .capabilities.retries import KeepsAttempts
from .capabilities.trust import TrustsMarkers
from .capabilities.webhooks import TakesWebhooks
from .cli.compose import WorkResult, work, work_async
from .kit import (
    ClaimsByComment,
    CommentClaims,
    CommentThread,
    DeliveryDeduper,
    Duration,
    LabelCommentTracker,
    LabelOptions,
    Redactor,
    RequestStats,
    RestClient,
    RestResponse,
    SinceWindow,
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
from .tracker import ItemError, ReadOnly, ReadOnlyError, Tracker, TrackerOptions
from .worksource import WorkItem, WorkSource, default_holder

__all__ = [
    "CAPABILITIES",
    "Attempt",
    "BlockerRef",
    "Capability",
    "Claim",
    "ClaimsByComment",
    "CommentClaims",
    "CommentThread",
    "DeliveryDeduper",
    "Delta",
    "Duration",
    "HasDashboard",
    "ItemError",
    "KeepsAttempts",
    "KeepsGates",
    "KeepsLimits",
    "LabelCommentTracker",
    "LabelOptions",
    "LocksByComment",
    "ReadOnly",
    "ReadOnlyError",
    "ReadsBodies",
    "ReadsDeltas",
    "ReadySet",
    "Reason",
    "Redactor",
    "RequestStats",
    "RestClient",
    "RestResponse",
    "SinceWindow",
    "Snapshot",
    "SnapshotItem",
    "SourceEnv",
    "SourceKind",
    "TakesFeedback",
    "TakesWebhooks",
    "Tracker",
    "TrackerOptions",
    "TrustsMarkers",
    "Verdict",
    "WorkItem",
    "WorkResult",
    "WorkSource",
    "attach_webhook",
    "capabilities_of",
    "compute_ready_set",
    "default_holder",
    "header",
    "hmac_sha256",
    "parse_duration",
    "parse_http_date",
    "secret_values",
    "verify_signature",
    "work",
    "work_async",
]
