"""What the place a dashboard is written to allows: how long its text may be and how often it may
be written, with the reason in the tracker's own words. A `Board` names its `target`;
`target_of` gives GitHub's, the strictest known, for a board that names none. A body over
`limit` is never sent; an interval below `min_interval` is refused in one line
(`check_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jr2_core.errors import UsageError

__all__ = ["GITHUB", "Target", "check_interval", "target_of"]


@dataclass(frozen=True, slots=True)
class Target:
    """The limits of one kind of dashboard target: the most characters of its text, the least
    seconds between two writes by one process, and where each comes from, in words."""

    limit: int
    min_interval: float
    limit_words: str
    interval_words: str


GITHUB = Target(
    limit=65_536, min_interval=10.0, limit_words="GitHub's limit on an issue body",
    interval_words="GitHub allows about 500 content-creating requests an hour")
"""GitHub: "body is too long (maximum is 65536 characters)" (the 422 of "Update an issue");
about 500 content-creating requests an hour and 80 a minute per user or App (GitHub's REST
"Rate limits" page, secondary limits)."""


def target_of(board: Any) -> Target:
    """`board.target`, or GitHub's limits for a board that names none (see the note)."""
    target = getattr(board, "target", None)
    return target if isinstance(target, Target) else GITHUB


def check_interval(option: str, seconds: float, target: Target) -> float:
    """`seconds`, or a one-line usage error when it is below what `target` allows."""
    if seconds < target.min_interval:
        raise UsageError(f"{option}: at least {target.min_interval:g}s here "
                         f"({target.interval_words})")
    return seconds
