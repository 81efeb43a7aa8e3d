"""Deltas: a tracker read by what changed since the last reading, so a claim costs what changed,
not the backlog's size. A tracker declares it by inheriting `ReadsDeltas` (`mixin`). `reader`
is what a pool reads before each claim (`ReadyReader`); `incremental` keeps the Ready-set
current from `Delta`s; `sincewindow` is the bookkeeping of a tracker whose deltas list issues
by update time (GitHub, GitLab), and `since` reads one delta from such a tracker's queries.
Only the mixin is exported here, so declaring the capability imports nothing else."""

from .mixin import ReadsDeltas

__all__ = ["ReadsDeltas"]
