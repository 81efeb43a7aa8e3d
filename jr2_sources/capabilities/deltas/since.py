"""`SinceReader`: one delta of a tracker read by "what changed since", over a `SinceWindow`.

A tracker gives its queries (`page`, `direct`, `leaves`, `key_of`, `updated_of`, `ident`,
`marks`, `item_of` / `items_of`, and `leave_page` when `page` lists only its scope) and the hooks
it needs; the reader walks the window's pages, reads directly what webhooks marked, judges leaves
and builds the `Delta`. An object both queries answer is judged by the newer answer. Every sign
of a gap (`WindowGap`) is recorded (`window.last_gap`) and answered with None; a delta that
failed half-way makes the next reading full, one that failed before it took anything in keeps
its marks for the next delta. Items this process settled (`skip`) leave as `open`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from jr2_sources.readyset import BlockerState, SnapshotItem

from .incremental import Delta
from .sincewindow import Page, SinceWindow, WindowGap

__all__ = ["SinceReader"]

K = TypeVar("K", bound=Hashable)
_EPOCH = datetime.fromtimestamp(0, UTC)


class SinceReader(ABC, Generic[K]):
    """The reading of one delta from a tracker's queries (module notes). `in_set` holds the
    ids of the items delivered; `full_read` starts it over from a full reading."""

    def __init__(self, window: SinceWindow | None = None) -> None:
        self.window = window or SinceWindow()
        self.in_set: set[str] = set()  # ids delivered as items
        self.leaving: set[K] = set()  # keys whose news came from `leave_page` (this delta)
        self._broken = True  # no full reading yet, or a delta failed half-way

    # -- the tracker's queries -------------------------------------------------------------------

    @abstractmethod
    def page(self, since: datetime) -> Page:
        """One page of the objects updated since `since`, oldest first, and the server's time."""

    def leave_page(self, since: datetime) -> list[Any]:
        """The objects updated since `since` that the scope no longer selects, for a tracker
        whose `page` lists only its scope (Jira); none by default."""
        return []

    def direct(self, key: K) -> Any:
        """The object of `key`, read directly; raise `WindowGap` when it is gone (a tracker
        whose queries name its marks reads nothing directly)."""
        raise NotImplementedError

    @abstractmethod
    def leaves(self, key: K, obj: Any, skip: set[str]) -> BlockerState | None:
        """The state as a blocker of `obj` when it is no item of the set now, else None."""

    @abstractmethod
    def key_of(self, obj: Any) -> K:
        """The window's key of an object read."""

    @abstractmethod
    def updated_of(self, obj: Any) -> datetime | None:
        """When an object read was last updated."""

    def ident(self, key: K) -> str:
        """The item id of `key` (default: the key as text)."""
        return str(key)

    def item_of(self, key: K, obj: Any, delta: Delta) -> SnapshotItem | None:
        """The item `obj` is now, or None to build it in the batch (`items_of`)."""
        return None

    def items_of(self, objs: dict[K, Any], fresh: dict[K, Any],
                 skip: set[str]) -> Iterable[SnapshotItem]:
        """The items of the objects `item_of` left to the batch (`fresh`: all the news)."""
        return ()

    # -- hooks (no-ops by default) ---------------------------------------------------------------

    def prepare(self) -> None:
        """Before the listing: mark what to read directly whatever the list says."""

    def after_listing(self, fresh: dict[K, Any]) -> None:
        """After the listing, before the marks are read."""

    def follow(self, fresh: dict[K, Any], marked: set[K], skip: set[str]) -> None:
        """Before the delta is built: read into `fresh` what the news calls for."""

    def judge(self, fresh: dict[K, Any]) -> None:
        """Before the leave judgements: note what every fresh object says (states first)."""

    def dropped(self, ident: str, *, settled: bool) -> None:
        """Item `ident` left the set (`settled`: by this process's settle, not seen changed)."""

    def finish(self, delta: Delta) -> None:
        """The delta is built: add what the tracker reads besides."""

    # -- one delta ---------------------------------------------------------------------------------

    def start(self, began: datetime | None, listed: Iterable[tuple[Hashable, Any]],
              items: Iterable[SnapshotItem]) -> None:
        """A full reading that began at server time `began` listed `listed` and delivered
        `items`: the window starts from it (no `began`: the next reading is full too)."""
        self.window.reset(began, listed)
        self.in_set = {it.id for it in items}
        self._broken = began is None

    def read(self, skip: set[str]) -> Delta | None:
        """What changed since the last reading, or None when a full reading is needed."""
        if self._broken or not self.window.ready:
            return None
        self._broken = True  # until this delta is built whole
        self.window.taken, self.window.took = set(), False
        try:
            self.prepare()
            fresh = self.listing()
            self.window.took = True  # from here on the tracker's own state moves too
            self.after_listing(fresh)
            marked = self.read_marked(fresh)
            self.follow(fresh, marked, skip)
            delta = self.build(fresh, skip)
            self.finish(delta)
        except WindowGap as gap:
            self.window.gap(str(gap))
            return None
        except BaseException:
            if not self.window.took:  # failed before it took anything in: the next delta
                self.window.unmark(self.window.taken)  # reads it all again
                self._broken = False
            raise
        self._broken = False
        return delta

    def listing(self) -> dict[K, Any]:
        """The objects updated since the watermark (less the overlap) that are news."""
        self.leaving = set()
        found = self.window.collect(self._both, self.key_of, self.updated_of)
        return {self.key_of(obj): obj for obj in found.values()}  # the keys, typed

    def _both(self, since: datetime) -> Page:
        """`page`, and `leave_page`'s objects where they are the newer answer (a tie: in scope)."""
        objs, date = self.page(since)
        out = self.leave_page(since)
        if not out:
            return objs, date
        inside = {self.key_of(obj): obj for obj in objs}
        for obj in out:
            key = self.key_of(obj)
            seen = inside.get(key)
            if seen is None or (self.updated_of(seen) or _EPOCH) < (self.updated_of(obj)
                                                                    or _EPOCH):
                inside[key] = obj
                self.leaving.add(key)
        return list(inside.values()), date

    def take(self, fresh: dict[K, Any], obj: Any) -> None:
        """An object read directly into `fresh` when it is news (it does not move the window)."""
        self.window.take(fresh, self.key_of(obj), obj, self.updated_of(obj), listed=False)

    def read_directly(self, fresh: dict[K, Any], key: K) -> None:
        """Read `key` directly into `fresh`, rebuilt even when it is unchanged."""
        self.window.forget(key)
        self.take(fresh, self.direct(key))

    def read_marked(self, fresh: dict[K, Any]) -> set[K]:
        """Read the keys webhooks marked that the listing did not bring; the marked keys."""
        marked = self.marks()
        for key in marked:
            if key not in fresh:
                self.read_directly(fresh, key)
        return set(marked)

    @abstractmethod
    def marks(self) -> list[K]:
        """The window's marks (cleared) that are keys of this tracker, in the order to read."""

    def build(self, fresh: dict[K, Any], skip: set[str]) -> Delta:
        """The delta: each fresh object as a leave or an item, then what this process settled."""
        self.judge(fresh)
        delta = Delta()
        batch: dict[K, Any] = {}
        for key in sorted(fresh):  # type: ignore[type-var]
            obj = fresh[key]
            ident = self.ident(key)
            state = self.leaves(key, obj, skip)
            if state is not None:
                delta.left[ident] = state
                self.in_set.discard(ident)
                self.dropped(ident, settled=False)
                continue
            item = self.item_of(key, obj, delta)
            if item is None:
                batch[key] = obj
            else:
                delta.items.append(item)
                self.in_set.add(item.id)
        if batch:
            for item in self.items_of(batch, fresh, skip):
                delta.items.append(item)
                self.in_set.add(item.id)
        for ident in sorted(skip & self.in_set):  # settled by this process
            delta.left[ident] = "open"
            self.in_set.discard(ident)
            self.dropped(ident, settled=True)
        return delta
