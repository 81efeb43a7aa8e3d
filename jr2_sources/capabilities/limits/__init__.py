"""Limits shared by every pool on one tracker: global caps and conflict groups (`--global-cap`,
`--exclusive-by`). A tracker declares how it keeps them by inheriting `KeepsLimits` (its claim
decides them) or `LocksByComment` (`comment_locks`: lock comments on a coordination issue,
`--control-issue`; the run puts `comment_locks.LockedClaims` around its claims), and
`ReadsBodies` when its items carry bodies (`touches`). `policy` parses the options and tags items
with their groups; `lockreport` is what `jr2 ready` counts of the locks. Only the mixins are
exported here, so declaring a capability imports nothing else."""

from .mixin import KeepsLimits, LocksByComment, ReadsBodies

__all__ = ["KeepsLimits", "LocksByComment", "ReadsBodies"]
