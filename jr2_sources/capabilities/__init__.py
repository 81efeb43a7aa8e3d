"""jr2_sources.capabilities: one slice per optional capability a tracker may have.

Beyond `Tracker`'s four required methods, each capability is a slice owning all of it (what the
WorkSource calls, its `jr2 work` / `jr2 ready` options, the helpers a tracker reuses): `deltas`,
`retries`, `limits`, `approvals`, `dashboard`, `webhooks`, `trust`, `feedback`. A tracker declares
one by inheriting its mixin (`CAPABILITIES`); the layer asks `isinstance`, the registry
`capabilities_of(tracker class)`, so `jr2 work KIND: --help` lists only the options the kind
supports. A slice declares its options once, as one decorator (`options`: `WORK_OPTIONS`,
`READY_OPTIONS`). This package and each slice's `__init__` import nothing heavy (`mixin_of`
imports a mixin when asked); a slice never imports the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, TypeVar

__all__ = ["CAPABILITIES", "Capability", "capabilities_of", "mixin_of", "options", "readings",
           "unsupported_options"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Capability:
    """One optional capability: its `name`, the mixin that declares it (`module:Class`, imported
    on first use), what it gives, and the options of `jr2 work`/`jr2 ready` that need it."""

    name: str
    mixin: str
    what: str
    options: tuple[str, ...] = ()


CAPABILITIES: tuple[Capability, ...] = (
    Capability("deltas", "jr2_sources.capabilities.deltas.mixin:ReadsDeltas",
               "read by what changed since the last reading (`changes`)"),
    Capability("attempts", "jr2_sources.capabilities.attempts:KeepsAttempts",
               "keeps the attempt record (`settle` takes an `Attempt`)",
               ("--max-attempts", "--transient-exit", "--retry-backoff", "--retry-backoff-max")),
    Capability("limits", "jr2_sources.capabilities.limits.mixin:KeepsLimits",
               "its claim keeps global caps and conflict groups",
               ("--global-cap", "--exclusive-by")),
    Capability("comment_locks", "jr2_sources.capabilities.limits.mixin:LocksByComment",
               "keeps global caps and conflict groups as lock comments on a coordination issue",
               ("--global-cap", "--exclusive-by", "--control-issue")),
    Capability("bodies", "jr2_sources.capabilities.limits.mixin:ReadsBodies",
               "items carry their bodies (`--exclusive-by touches`; `want_bodies`)"),
    Capability("approvals", "jr2_sources.capabilities.approvals.mixin:KeepsApprovals",
               "parks items awaiting approval and records answers (`park`, `answer_approval`)",
               ("--gate",)),
    Capability("dashboard", "jr2_sources.capabilities.dashboard.mixin:HasDashboard",
               "keeps a dashboard issue (`dashboard`)", ("--dashboard", "--dashboard-interval")),
    Capability("webhooks", "jr2_sources.capabilities.webhooks:TakesWebhooks",
               "takes webhook deliveries (`webhook`)",
               ("--webhook-secret-env",)),
    Capability("trust", "jr2_sources.capabilities.trust:TrustsMarkers",
               "its markers count only from trusted accounts (`markers`)", ("--trust",)),
    Capability("feedback", "jr2_sources.capabilities.feedback.mixin:TakesFeedback",
               "sends an item in review back to its worker on red checks or requested changes",
               ("--on-feedback",)),
)
"""Every capability a tracker may declare, in the order `jr2 plugins` lists them."""


def mixin_of(capability: Capability) -> type:
    """The mixin class that declares `capability`."""
    module, _, name = capability.mixin.partition(":")
    cls: type = vars(import_module(module))[name]
    return cls


def capabilities_of(tracker_or_class: object) -> tuple[str, ...]:
    """The names of the capabilities a tracker (or its class) declares, in `CAPABILITIES` order."""
    cls = tracker_or_class if isinstance(tracker_or_class, type) else type(tracker_or_class)
    return tuple(c.name for c in CAPABILITIES if issubclass(cls, mixin_of(c)))


def unsupported_options(capabilities: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """The options that need a capability not in `capabilities` (of two that give one, either)."""
    have = {o for c in CAPABILITIES if c.name in capabilities for o in c.options}
    return frozenset(o for c in CAPABILITIES if c.name not in capabilities
                     for o in c.options if o not in have)


def options(*decorators: Callable[[Any], Any]) -> Callable[[F], F]:
    """A slice's click options as one decorator, listed in `--help` in the order given."""

    def apply(f: F) -> F:
        for decorate in reversed(decorators):
            f = decorate(f)
        return f

    return apply


def readings(snapshot: Callable[..., Any], changes: Callable[..., Any] | None, *,
             before: Callable[[], None] | None = None,
             after: Callable[[Any], None] | None = None
             ) -> tuple[Callable[..., Any], Callable[..., Any] | None]:
    """A tracker's `snapshot` and `changes` (None: it reads no deltas), each calling `before()`
    first and `after(got)` on what it read: how a slice sees every reading."""

    def around(read: Callable[..., Any]) -> Callable[..., Any]:
        def reading(*args: Any, **kwargs: Any) -> Any:
            if before is not None:
                before()
            got = read(*args, **kwargs)
            if after is not None:
                after(got)
            return got
        return reading

    return around(snapshot), (around(changes) if changes is not None else None)
