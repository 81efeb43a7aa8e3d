"""jr2_sources: the Work Source layer. This package exports the seam a tracker plugin implements,
and only that, so registering a plugin imports nothing else: `Tracker` and its Snapshot types,
the Ready-set, the capability mixins a tracker inherits to declare each optional capability, and
`SourceKind` / `SourceEnv`, how a plugin registers a kind (`jr2_register_sources`).

Everything else is imported from its own module: `jr2_sources.kit` (what a tracker reuses:
REST client, retries, webhooks, comment claims, label options), `jr2_sources.worksource`
(`WorkSource`, `WorkItem`, `default_holder`), `jr2_sources.cli.compose` (`work`, `work_async`,
`WorkResult`: `jr2 work` as a Python function), `jr2_sources.testing` (the conformance kit),
`jr2_sources.trackers` (the built-in trackers, plugins like any other).
"""

from .capabilities import CAPABILITIES, Capability, capabilities_of
from .capabilities.approvals import KeepsApprovals
from .capabilities.attempts import Attempt, KeepsAttempts
from .capabilities.dashboard import HasDashboard
from .capabilities.deltas import ReadsDeltas
from .capabilities.deltas.incremental import Delta
from .capabilities.feedback import TakesFeedback
from .capabilities.limits import KeepsLimits, LocksByComment, ReadsBodies
from .capabilities.trust import TrustsMarkers
from .capabilities.webhooks import TakesWebhooks
from .readyset import (
    BlockerRef,
    BlockerState,
    Claim,
    ReadySet,
    Reason,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)
from .registry import SourceEnv, SourceKind
from .tracker import ItemError, ReadOnly, ReadOnlyError, Tracker, TrackerOptions

__all__ = [
    "CAPABILITIES",
    "Attempt",
    "BlockerRef",
    "BlockerState",
    "Capability",
    "Claim",
    "Delta",
    "HasDashboard",
    "ItemError",
    "KeepsApprovals",
    "KeepsAttempts",
    "KeepsLimits",
    "LocksByComment",
    "ReadOnly",
    "ReadOnlyError",
    "ReadsBodies",
    "ReadsDeltas",
    "ReadySet",
    "Reason",
    "Snapshot",
    "SnapshotItem",
    "SourceEnv",
    "SourceKind",
    "TakesFeedback",
    "TakesWebhooks",
    "Tracker",
    "TrackerOptions",
    "TrustsMarkers",
    "capabilities_of",
    "compute_ready_set",
]
