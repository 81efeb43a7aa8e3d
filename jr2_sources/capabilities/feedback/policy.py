"""`--on-feedback rerun|nothing`: checked against the run's other options before anything starts.

`rerun` needs a tracker that declares `TakesFeedback`, whatever that tracker needs to hold an
item in review (`feedback_problem`: GitHub's `--done-when merged --on-success review`), and
`--max-attempts` of 2 or more (a rerun is an attempt). Each refusal is one usage line (exit 2).
"""

from __future__ import annotations

from typing import Any, Literal

from jr2_core.errors import UsageError

from .mixin import TakesFeedback

__all__ = ["CHOICES", "apply"]

CHOICES: tuple[str, ...] = ("nothing", "rerun")
Mode = Literal["nothing", "rerun"]


def apply(tracker: Any, mode: str, max_attempts: int | None, *, wait: bool = False) -> None:
    """Check `--on-feedback MODE` for `tracker` and turn the loop on for `rerun` (`max_attempts`
    None: a report, which counts no attempts)."""
    if mode not in CHOICES:
        raise UsageError(f"--on-feedback {mode!r}: expected rerun or nothing")
    if mode == "nothing":
        return
    if not isinstance(tracker, TakesFeedback):
        raise UsageError(f"{tracker.name}: this source cannot send an item back on review "
                         "feedback (drop --on-feedback rerun)")
    problem = tracker.feedback_problem()
    if problem is not None:
        raise UsageError(f"--on-feedback rerun {problem}")
    if max_attempts is not None and max_attempts < 2:
        raise UsageError("--on-feedback rerun runs an item again: it needs --max-attempts 2 or "
                         "more (each rerun is an attempt)")
    tracker.start_feedback(max_attempts or 2, here=wait)
