"""What `jr2 ready --global-cap/--exclusive-by` counts: the limits as the pools keep them.

On `local:` the claims are the locks. On a comment tracker a pool with the limits is held back
by the live claims it reads or by the live lock comments on its coordination issue (only pools
given the options post locks, maybe for items outside this report's filter), so `--control-issue
ID` reads that thread once (read-only) and the report counts both (`readyset.HeldLocks`); without
it the report counts live claims only and says so. A lock is live as for the pools: until its
comment's `updated_at` plus its lease, by the server's clock of the listing.
"""

from __future__ import annotations

from typing import Any

from jr2_core.errors import ItemError, SourceError, UsageError
from jr2_sources.readyset import HeldLocks

from .comment_locks import parse_lock
from .mixin import KeepsLimits, LocksByComment
from .policy import Limits

__all__ = ["held_locks"]


def held_locks(tracker: Any, limits: Limits, control_issue: str | None) -> HeldLocks | None:
    """What the pools of `tracker` count besides the live claims (None: nothing), the
    options checked as `jr2 work` checks them."""
    if control_issue is not None and not limits.active:
        raise UsageError("--control-issue holds the claims of --global-cap and --exclusive-by: "
                         "give one of them too, or drop it")
    if not limits.active or isinstance(tracker, KeepsLimits):
        if control_issue is not None:
            raise UsageError(f"{tracker.name}: this source keeps the limits in its own claims: "
                             "drop --control-issue")
        return None
    if not isinstance(tracker, LocksByComment):
        return None
    if control_issue is None:
        return HeldLocks()
    try:
        comments, now = tracker.list_comments(control_issue)
    except ItemError as exc:
        raise SourceError(f"{tracker.name}: the coordination issue {control_issue} (from "
                          f"--control-issue): {exc}") from None
    count = 0
    groups: dict[str, str] = {}
    for c in sorted(comments, key=lambda c: c.id):  # earlier locks first, as pools order them
        found = parse_lock(c)
        if found is None or not found.live(now):
            continue
        count += 1
        for g in sorted(found.groups):
            groups.setdefault(g, found.item or "?")
    return HeldLocks(control_issue, count, groups, tracker.ignored_markers(control_issue))
