"""Limits shared by every pool on one tracker: global caps and conflict groups (`--global-cap`,
`--exclusive-by`). A tracker keeps them in its claim (`KeepsLimits`) or by lock comments on a
coordination issue (`LocksByComment`, `comment_locks`), and declares `ReadsBodies` when its items
carry bodies (`touches`). `policy` parses the options and tags items with their groups;
`lockreport` is what `jr2 ready` counts of the locks. Only the mixins are exported here.
"""

from .mixin import KeepsLimits, LocksByComment, ReadsBodies

__all__ = ["KeepsLimits", "LocksByComment", "ReadsBodies"]
