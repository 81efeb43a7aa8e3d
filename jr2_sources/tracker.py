"""`Tracker`: the one thing a tracker plugin implements (the seam); the Snapshot types it
returns live in `readyset` (both exported by `jr2_sources`).

* Required: `snapshot()`, `claim(item, holder, lease)`, `renew(item_id, holder, lease)` and
  `settle(item_id, holder, outcome)`. `outcome.status` is `done`, `failed` (the failure mark,
  with `outcome.failure.reason`) or `cancelled` (release, record nothing). All block; the
  WorkSource runs them in a thread unless the tracker sets `inline`.
* Defaults: `watch(item_ids, holder)` (which held items a person took back, and why; the default
  reads one snapshot) and `close()`; two plain traits, `spread_claims` and `inline`.
* Everything else is a capability, declared by inheriting its mixin from
  `jr2_sources.capabilities`; `capabilities_of` lists them, and an option whose capability the
  tracker lacks is refused in one line. docs/guides/write-a-source-plugin.md has the table.
* `Options` declares what the WorkSource layer reads from a kind's config (`target`,
  `children_block`, `poll_every`, `resync_every`); a kind's config model subclasses it.
* A tracker reports; it does not decide scope, re-offers or read-only (`worksource` does). It
  marks items outside the user's filter that carry jr2's marks `in_scope=False`, raises
  `ItemError` when the tracker refuses one item, and never overwrites what a person set.
* `ReadOnly(tracker)` exposes `snapshot` and raises `ReadOnlyError` from every write.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from jr2_core import Outcome
from jr2_core.errors import ItemError, UsageError

from .readyset import Snapshot, SnapshotItem
from .registry import TrackerOptions, missing_methods

if TYPE_CHECKING:
    from .kit.bounds import Bounds


__all__ = ["CLAIM_REMOVED", "GONE", "OUT_OF_SCOPE", "ItemError", "ReadOnly", "ReadOnlyError",
           "Tracker", "TrackerOptions", "as_tracker", "taken_back"]

GONE = "a person closed, removed or moved it"
"""The `watch` reason for a held item that is no longer in the snapshot."""

OUT_OF_SCOPE = "it was moved out of this pool's scope"
"""The `watch` reason for a held item the user's filter no longer selects."""

CLAIM_REMOVED = "jr2's claim mark was removed"
"""The `watch` reason for an item whose claim mark a person removed (not offered again in the
run: the person took it back)."""

class ReadOnlyError(UsageError):
    """A write was asked of a tracker opened read-only (a dry run such as `jr2 ready`)."""


class Tracker(ABC):
    """Base class of a tracker: subclass it, set `name`, and implement the four required
    methods. See the module's notes and docs/guides/write-a-source-plugin.md."""

    Options: TypeAlias = TrackerOptions
    """The options model every kind's config subclasses."""

    name: str = "tracker"
    """The source as the user named it (`local:backlog.toml`, `github:o/r`)."""

    spread_claims: ClassVar[bool] = False
    """True: among ready items of equal order, each pool starts at its own offset (GitHub, where
    a lost claim attempt still notifies people). False: every pool tries them in id order."""

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

    def close(self) -> None:  # noqa: B027 (optional: a tracker with nothing to free)
        """Free connections and files; called once when the run ends."""

    def bound(self, bounds: Bounds) -> None:  # noqa: B027 (optional: no markers to bound)
        """The pool's own settings as bounds on every field it reads back from a marker (a
        lease, a `retry_after`: `jr2_sources.kit.bounds`), set by the WorkSource before the
        first reading. A tracker that keeps no state in markers ignores it."""


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

    def __init__(self, tracker: Tracker) -> None:
        self._tracker = tracker
        self.name: str = tracker.name

    def snapshot(self) -> Snapshot:
        return self._tracker.snapshot()

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise ReadOnlyError(f"{self.name}: read-only here (a report never writes to a tracker)")

    claim = renew = settle = park = _refuse

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        return {}

    def close(self) -> None:
        self._tracker.close()


def as_tracker(obj: Any) -> Tracker:
    """`obj` when it is a `Tracker`; a one-line `UsageError` otherwise (a kind's factory must
    return a subclass of `jr2_sources.Tracker`)."""
    if isinstance(obj, Tracker):
        return obj
    missing = missing_methods(type(obj))
    lacks = f": it lacks {', '.join(missing)}" if missing else ""
    raise UsageError(f"{obj!r} is not a tracker (subclass jr2_sources.Tracker){lacks}")
