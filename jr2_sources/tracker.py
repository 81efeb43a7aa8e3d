"""`Tracker`: the one thing a tracker plugin implements (the seam), and the Snapshot types it
returns.

Design notes
------------
Modelled on httpx's `BaseTransport` (one small base class, the rest of the library built on top)
and llm's `Model` + nested `Options` (the options a plugin takes, declared as a pydantic model
next to the code that reads them).

* Required: `snapshot()`, `claim(item, holder, lease)`, `renew(item_id, holder, lease)` and
  `settle(item_id, holder, outcome)`. `outcome.status` is `done` (make the item done), `failed`
  (put the failure mark on it, with `outcome.failure.reason`) or `cancelled` (release the claim
  and record nothing: the item is offered again). All block; the WorkSource runs them in a
  thread.
* Optional, with defaults here: `webhook(headers, body, secret)` (None: this tracker takes no
  webhooks), `watch(item_ids, holder)` (people win: which held items a person took back, and
  why; the default reads one snapshot) and `close()`. Bounded retries (`jr2 work
  --max-attempts`, `jr2_sources.capabilities.retries`): a tracker that keeps the attempt record sets
  `retries = True`, takes `settle(item_id, holder, outcome, attempt)` with an
  `Attempt | None`, reads it back as `SnapshotItem.attempts` / `.retry_after`, and refuses a
  claim whose record changed since the snapshot; the WorkSource refuses `--max-attempts` > 1
  on any other tracker. Global caps and conflict groups (`jr2 work --global-cap`,
  `--exclusive-by`, `jr2_sources.capabilities.limits.policy`): a tracker that decides them in the
  claim itself, safely against every pool, sets `limits = True`; its `claim` then refuses an item
  one of whose `SnapshotItem.groups` another live claim holds, or when `global_cap` (set by the
  WorkSource) live claims exist, and the item's claim holds its groups and its cap slot for
  the claim's lease. The WorkSource refuses those options on any other tracker.
* Approval gates (`jr2 work --gate`, `jr2_sources.capabilities.gates.policy`): a tracker that can
  park an item sets
  `gates = True`, implements `park(item_id, holder, request)` (record the gate as awaiting,
  release the claim) and reads gates back as `SnapshotItem.gates`; it may also take
  `answer_gate(item_id, name, status, reason, by)` (the dashboard, `jr2 local approve`). The
  WorkSource refuses `--gate` on any other tracker.
* `Options` declares everything the WorkSource layer reads from a kind's config (`target`,
  `children_block`, `poll_every`, `resync_every`): a kind's config model subclasses it, so
  nothing is looked up with `getattr`. `layer_options(config)` reads them from any config model.
* The rules every tracker shares are enforced once, in `jr2_sources.worksource`, not here: a
  tracker reports; it does not decide scope, re-offers or read-only. It marks items outside the
  user's filter that carry jr2's marks with `in_scope=False` (scope judged ignoring jr2's own
  marks), raises `jr2_core.errors.ItemError` when the tracker refuses one item, and never
  overwrites in `settle` what a person set.
* `ReadOnly(tracker)` is the one read-only wrapper (`jr2 ready`): it exposes `snapshot` and
  raises `ReadOnlyError` from every write, so a dry run makes 0 writes by construction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias, cast

from jr2_core import Outcome
from jr2_core.errors import ItemError, UsageError

from .readyset import BlockerRef, Claim, Snapshot, SnapshotItem
from .registry import REQUIRED_METHODS, missing_methods

if TYPE_CHECKING:
    from jr2_sources.capabilities.gates.policy import GateRequest
    from jr2_sources.capabilities.webhooks import Verdict

    from .kit.bounds import Bounds
    from .trackeroptions import TrackerOptions

def __getattr__(name: str) -> Any:
    """`TrackerOptions`, from its own module (with pydantic) on first use."""
    if name == "TrackerOptions":
        from .trackeroptions import TrackerOptions

        return TrackerOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CLAIM_REMOVED",
    "GONE",
    "OUT_OF_SCOPE",
    "REQUIRED",
    "BlockerRef",
    "Claim",
    "ItemError",
    "ReadOnly",
    "ReadOnlyError",
    "Snapshot",
    "SnapshotItem",
    "Tracker",
    "TrackerOptions",
    "layer_options",
    "missing_methods",
]

GONE = "a person closed, removed or moved it"
"""The `watch` reason for a held item that is no longer in the snapshot."""

OUT_OF_SCOPE = "it was moved out of this pool's scope"
"""The `watch` reason for a held item the user's filter no longer selects."""

CLAIM_REMOVED = "jr2's claim mark was removed"
"""The `watch` reason for an item whose claim mark a person removed (not offered again in the
run: the person took it back)."""

REQUIRED = REQUIRED_METHODS
"""The methods a tracker must implement."""


class ReadOnlyError(UsageError):
    """A write was asked of a tracker opened read-only (a dry run such as `jr2 ready`)."""


LAYER_FIELDS = ("target", "children_block", "poll_every", "resync_every")
"""The options the WorkSource layer reads from a kind's config (`TrackerOptions`' fields)."""


class LayerOptions(Protocol):
    """What `layer_options` gives: the layer's options, read as attributes."""

    target: str
    children_block: bool
    poll_every: float | None
    resync_every: float


def layer_options(config: Any) -> LayerOptions:
    """The layer's options from any kind's config: the config itself when it carries them all
    (a model subclassing `Tracker.Options`, or a kind's plain settings object, `local:`'s
    `SourceKind.quick` result), else a `TrackerOptions` of its fields of the same names (a
    plugin written before the seam; defaults for the rest)."""
    if config is not None and all(hasattr(config, name) for name in LAYER_FIELDS):
        return cast(LayerOptions, config)
    from .trackeroptions import TrackerOptions

    if config is None:
        return TrackerOptions(target="?")
    values = {name: getattr(config, name) for name in TrackerOptions.model_fields
              if name in type(config).model_fields}
    values["target"] = values.get("target") or "?"  # a kind may take its target elsewhere
    return TrackerOptions.model_validate(values)


class _OptionsModel:
    """`Tracker.Options`: `TrackerOptions`, imported (with pydantic) when a config model that
    subclasses it is defined, not when this module is."""

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        from .trackeroptions import TrackerOptions

        return TrackerOptions


class Tracker(ABC):
    """Base class of a tracker: subclass it, set `name`, and implement the four required
    methods. See the module's notes and docs/guides/write-a-source-plugin.md."""

    if TYPE_CHECKING:
        Options: TypeAlias = TrackerOptions
    else:
        Options = _OptionsModel()
    """The options model every kind's config subclasses (`TrackerOptions`, loaded on first
    use)."""

    name: str = "tracker"
    """The source as the user named it (`local:backlog.toml`, `github:o/r`)."""

    spread_claims: ClassVar[bool] = False
    """True: among ready items of equal order, each pool starts at its own offset (GitHub, where
    a lost claim attempt still notifies people). False: every pool tries them in id order."""

    retries: ClassVar[bool] = False
    """True: this tracker keeps the attempt record (`settle` takes a fourth argument, an
    `jr2_sources.capabilities.retries.Attempt | None`; see the module's notes). False:
    `--max-attempts` > 1 is refused."""

    gates: ClassVar[bool] = False
    """True: this tracker parks items awaiting approval (`park`) and reads their gates back
    (`SnapshotItem.gates`). False: `jr2 work --gate` is refused."""

    limits: ClassVar[bool] = False
    """True: `claim` keeps the global cap (`global_cap`) and the item's conflict groups
    (`SnapshotItem.groups`) against every pool (see the module's notes). False: `--global-cap`
    and `--exclusive-by` are refused."""

    global_cap: int | None = None
    """The most items every pool on this tracker may hold at once (`--global-cap`), set by the
    WorkSource on a tracker with `limits`; None: no global cap."""

    inline: ClassVar[bool] = False
    """True: every call is a brief local operation (a `stat`, a SQLite transaction of well
    under a millisecond, no network), so the WorkSource makes it on the event loop instead of
    in a worker thread: a thread hop costs more than the call, and a serial chain of items
    waits for every hop (`local:`). False (any tracker that talks to a server): calls run in a
    thread, so the run host and the commands' output keep flowing while one waits."""

    # -- required -----------------------------------------------------------------------------

    @abstractmethod
    def snapshot(self) -> Snapshot:
        """The open items in scope, with blockers, children, claims and failure marks; items
        outside the user's filter that carry jr2's marks come with `in_scope=False`."""
        raise NotImplementedError

    @abstractmethod
    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        """Claim `item` for `holder` for `lease` seconds: True if won. Must be safe against every
        other pool on any machine. Raise `ItemError` when the tracker refuses this one item."""
        raise NotImplementedError

    @abstractmethod
    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        """Extend `holder`'s lease; False if `holder` no longer holds the item."""
        raise NotImplementedError

    @abstractmethod
    def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
        """End `holder`'s claim: `done` makes the item done, `failed` marks it failed (with
        `outcome.failure.reason`), `cancelled` releases it and records nothing. Never undo what
        a person set (a close reason, a label, a transition)."""
        raise NotImplementedError

    # -- optional -----------------------------------------------------------------------------

    webhook: Callable[[Mapping[str, str], bytes, str | None], Verdict] | None = None
    """`webhook(headers, body, secret) -> Verdict`: verify a delivery and say whether it can
    change the Ready-set. None (the default): this tracker takes no webhooks."""

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        """People win: of the items `holder` holds, those a person took back, each with why
        (closed, reopened, deleted or moved, jr2's claim mark removed, the failure mark added,
        moved out of scope). Items not in the answer are still ours. Raise to say "cannot tell
        now" (the WorkSource looks again later; a worker is never stopped on a guess).

        The default reads one snapshot: an item missing from it, outside the scope, marked
        failed, or no longer claimed by `holder` was taken back. Override it for a cheaper read
        or where a search may miss an item that is still open (confirm with a direct read)."""
        snap = self.snapshot()
        by_id = {it.id: it for it in snap.items}
        out: dict[str, str] = {}
        for iid in item_ids:
            why = taken_back(by_id.get(iid), holder)
            if why is not None:
                out[iid] = why
        return out

    def park(self, item_id: str, holder: str, request: GateRequest) -> None:
        """Gates (`gates = True`): record that `item_id` awaits approval of `request.name` and
        end `holder`'s claim (the item is not offered until a person answers)."""
        raise UsageError(f"{self.name}: this source cannot park an item awaiting approval")

    def close(self) -> None:  # noqa: B027 (optional: a tracker with nothing to free)
        """Free connections and files; called once when the run ends."""

    def bound(self, bounds: Bounds) -> None:  # noqa: B027 (optional: no markers to bound)
        """The pool's own settings as bounds on every field it reads back from a marker (a
        lease, a `retry_after`: `jr2_sources.kit.bounds`), set by the WorkSource before the
        first reading. A tracker that keeps no state in markers ignores it."""

    def dashboard(self, issue: str | int) -> Any:
        """The issue `issue` as the dashboard (`jr2 dashboard`, `jr2 work --dashboard`): a
        `jr2_sources.capabilities.dashboard.Board`. The default refuses: this tracker has none."""
        raise UsageError(f"{self.name}: a dashboard issue is not supported on this tracker "
                         "(GitHub, GitLab, Jira, local; see docs/guides/controls.md)")


def taken_back(item: SnapshotItem | None, holder: str) -> str | None:
    """Why `holder` no longer holds `item` as the snapshot shows it, or None while it does."""
    if item is None:
        return GONE
    if not item.in_scope:
        return OUT_OF_SCOPE
    if item.failed is not None:
        return "it was marked failed"
    if item.claim is None:
        return CLAIM_REMOVED
    if item.claim.holder != holder:
        return "another pool holds it now"
    return None


class ReadOnly:
    """A tracker opened for reading only (`jr2 ready`): `snapshot` passes through; every write
    raises `ReadOnlyError` before it reaches the tracker, so a dry run makes no write by
    construction."""

    def __init__(self, tracker: Any) -> None:
        self._tracker = tracker
        self.name: str = str(getattr(tracker, "name", "tracker"))

    def snapshot(self) -> Snapshot:
        result: Snapshot = self._tracker.snapshot()
        return result

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise ReadOnlyError(f"{self.name}: read-only here (a report never writes to a tracker)")

    claim = renew = settle = release = record = _refuse

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        return {}

    def close(self) -> None:
        close = getattr(self._tracker, "close", None)
        if callable(close):
            close()


class _Legacy(Tracker):
    """A pre-seam adapter (`release` + `record`, no `settle`) seen through the seam."""

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        self.name = str(getattr(adapter, "name", "tracker"))
        hook = getattr(adapter, "webhook", None)
        self.webhook = hook if callable(hook) else None
        self.spread_claims = bool(getattr(adapter, "spread_claims", False))  # type: ignore[misc]
        self.retries = bool(getattr(adapter, "retries", False))  # type: ignore[misc]
        self.gates = bool(getattr(adapter, "gates", False))  # type: ignore[misc]

    def snapshot(self) -> Snapshot:
        snap: Snapshot = self._adapter.snapshot()
        return snap

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        return bool(self._adapter.claim(item, holder, lease))

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        return bool(self._adapter.renew(item_id, holder, lease))

    def settle(self, item_id: str, holder: str, outcome: Outcome, *attempt: Any) -> None:
        if outcome.status == "cancelled":
            self._adapter.release(item_id, holder)
        else:
            self._adapter.record(item_id, holder, outcome, *attempt)

    def close(self) -> None:
        close = getattr(self._adapter, "close", None)
        if callable(close):
            close()


def as_tracker(obj: Any) -> Tracker:
    """`obj` as a `Tracker`: itself when it is one (or has the four methods), else a pre-seam
    adapter (`release` + `record`) adapted, with a `DeprecationWarning`."""
    if isinstance(obj, Tracker):
        return obj
    if not missing_methods(type(obj)):
        return _Duck(obj)
    import warnings

    if callable(getattr(obj, "release", None)) and callable(getattr(obj, "record", None)):
        warnings.warn(f"{getattr(obj, 'name', obj)!s}: an adapter with release/record is "
                      "deprecated; subclass jr2_sources.Tracker and implement settle",
                      DeprecationWarning, stacklevel=2)
        return _Legacy(obj)
    raise UsageError(f"{getattr(obj, 'name', obj)!s} is not a tracker: it lacks "
                     f"{', '.join(missing_methods(type(obj)))}")


class _Duck(_Legacy):
    """An object with the four methods that does not subclass `Tracker`."""

    def park(self, item_id: str, holder: str, request: GateRequest) -> None:
        self._adapter.park(item_id, holder, request)

    def settle(self, item_id: str, holder: str, outcome: Outcome, *attempt: Any) -> None:
        self._adapter.settle(item_id, holder, outcome, *attempt)

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        watch = getattr(self._adapter, "watch", None)
        if callable(watch):
            return dict(watch(item_ids, holder))
        return super().watch(item_ids, holder)
