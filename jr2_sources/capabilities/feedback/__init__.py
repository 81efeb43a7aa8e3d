"""The feedback loop (`jr2 work --on-feedback rerun`): an item in review whose pull request gets
red checks or a writer's "changes requested" is offered again on the same branch, with the
feedback in `JR2_FEEDBACK_JSON` / `JR2_FEEDBACK_TEXT`. A tracker declares it with
`TakesFeedback` (`mixin`, the only name exported here); `policy` checks the option, `report`
bounds and renders what the worker gets.
"""

from .mixin import TakesFeedback

__all__ = ["TakesFeedback"]
