"""`TakesFeedback`: the declaration of a tracker that can send an item waiting in review back to
its worker when its pull request gets feedback (`--on-feedback rerun`)."""

from __future__ import annotations

from abc import ABC

__all__ = ["TakesFeedback"]


class TakesFeedback(ABC):  # noqa: B024 (a declaration with one optional hook)
    """Declares the feedback loop: with `feedback_rerun` set (by the run, from `--on-feedback
    rerun`), the tracker reads the feedback of the items it holds in review, records each head
    SHA's feedback once as a trusted marker, offers the item again with the feedback in
    `SnapshotItem.extra["feedback"]` (`report.Feedback.to_json`), and fails it with the last
    feedback as the reason once its attempts are spent."""

    feedback_rerun: bool = False  # `--on-feedback rerun`, set before the first reading
    feedback_attempts: int = 1  # `--max-attempts`, feedback reruns included

    def start_feedback(self, attempts: int, *, here: bool) -> None:
        """Turn the loop on with `attempts` runs per item; `here`: a pool that keeps waiting
        (`--wait`) may offer an item it finished again itself."""
        self.feedback_rerun = True
        self.feedback_attempts = attempts

    def feedback_problem(self) -> str | None:
        """Why this tracker, as configured, cannot rerun on feedback (the options it needs)."""
        return None
