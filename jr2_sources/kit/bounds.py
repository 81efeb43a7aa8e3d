"""Bounds on what a marker can make a pool do: every field jr2 reads back from a marker is held
within the reading pool's own settings (`Bounds`, set by the WorkSource through `Tracker.bound`).

* A claim's or a lock's lease counts for at most the pool's own `--lease`, from its last edit
  (so every pool of a tracker should run with the same `--lease`).
* A transient failure's `retry_after` is at most `--retry-backoff-max` after the marker was
  written, its `attempts` between 0 and `--max-attempts`.
* Texts (a holder, a failure's or a gate's reason) are cut to a bounded length.

`bounded(comment, bounds)` applies them (the comment itself when nothing had to change); the one
marker reader applies it to every listing, so no protocol reads an unbounded field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..capabilities.approvals.policy import cut_reason
from .claims import MAX_LEASE, Comment, iso_time, render_marker, split_marker

__all__ = ["HOLDER_MAX", "NO_BOUNDS", "Bounds", "bounded"]

HOLDER_MAX = 200  # the most characters of a holder id read from a marker (`run-id@host`)

_LEASED = frozenset({"claim", "lock"})


@dataclass(frozen=True, slots=True)
class Bounds:
    """A pool's `--lease`, `--retry-backoff-max` (seconds) and `--max-attempts`, as bounds on the
    markers it reads; the defaults bound nothing a pool could have written."""

    lease: float = MAX_LEASE
    retry: float = 7 * 86400.0
    attempts: int = 1_000

    def retry_after(self, when: datetime, written: datetime) -> datetime:
        """A `retry_after` of a marker written at `written`: at most `retry` after it."""
        return min(when, written + timedelta(seconds=self.retry))


NO_BOUNDS = Bounds()


def _bound_fields(kind: str, fields: dict[str, Any], written: datetime,
                  bounds: Bounds) -> dict[str, Any]:
    out = dict(fields)
    lease = out.get("lease")
    if kind in _LEASED and isinstance(lease, (int, float)) and not isinstance(lease, bool):
        out["lease"] = min(max(float(lease), 0.0), bounds.lease)
    holder = out.get("holder")
    if isinstance(holder, str) and len(holder) > HOLDER_MAX:
        out["holder"] = holder[:HOLDER_MAX]
    reason = out.get("reason")
    if isinstance(reason, str):
        out["reason"] = cut_reason(reason)
    attempts = out.get("attempts")
    if isinstance(attempts, int) and not isinstance(attempts, bool):
        out["attempts"] = min(max(attempts, 0), bounds.attempts)
    when = iso_time(out.get("retry_after"))
    if when is not None:
        out["retry_after"] = bounds.retry_after(when, written).astimezone(UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    return out


def bounded(comment: Comment, bounds: Bounds) -> Comment:
    """`comment` with its marker's fields within `bounds` (itself when nothing had to change)."""
    found = split_marker(comment.body)
    if found is None:
        return comment
    kind, fields, text = found
    kept = _bound_fields(kind, fields, comment.updated_at, bounds)
    if kept == fields:
        return comment
    return dataclasses.replace(comment, body=render_marker(kind, kept, text.removeprefix("\n")))
