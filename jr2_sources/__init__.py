"""jr2_sources: the Work Source layer. This package exports the seam a tracker plugin implements,
and only that, so registering a plugin imports nothing else:

- `Tracker` (`tracker`, with its `Options` = `TrackerOptions`): the four required methods
  (snapshot, claim, renew, settle; optional watch, close); `ReadOnly` / `ReadOnlyError`: the one
  read-only wrapper of a dry run; `ItemError`: one item's failure.
- `Snapshot`, `SnapshotItem`, `BlockerRef`, `BlockerState`, `Claim`, `ReadySet`, `Reason`,
  `compute_ready_set` (`readyset`): what a tracker reads and the Ready-set computed from it; `Delta`
  (`capabilities.deltas.incremental`): what an optional `changes()` answers between snapshots.
- `capabilities_of`, `CAPABILITIES`, `Capability` (`capabilities`) and the mixins a tracker
  inherits to declare each optional capability: `ReadsDeltas`, `KeepsAttempts` (with `Attempt`),
  `KeepsLimits`, `LocksByComment`, `ReadsBodies`, `KeepsApprovals`, `HasDashboard`, `TakesWebhooks`,
  `TrustsMarkers`, `TakesFeedback`.
- `SourceKind`, `SourceEnv` (`registry`): how a plugin registers a kind (`jr2_register_sources`,
  added by `hooks`).

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
