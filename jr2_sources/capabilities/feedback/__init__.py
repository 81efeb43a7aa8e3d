"""The feedback loop (`jr2 work --on-feedback rerun`): an item waiting in review whose pull
request gets red checks or a writer's "changes requested" is offered again, as a new attempt
on the same branch, with the feedback in `JR2_FEEDBACK_JSON` / `JR2_FEEDBACK_TEXT`.

A tracker declares it by inheriting `TakesFeedback` (`mixin`); `policy` checks the option
against the run's other options; `report` bounds and renders what the worker gets; `options`
holds `WORK_OPTIONS`, the click option. Only the mixin is exported here, so declaring it imports
nothing else."""

from .mixin import TakesFeedback

__all__ = ["TakesFeedback"]
