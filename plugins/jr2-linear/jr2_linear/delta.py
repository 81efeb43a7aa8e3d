"""Linear deltas: after one full reading, only what changed (`LinearTracker.changes`).

* What changed (`page`): one `Jr2Changed`, the ids and states of the issues of the team (and of
  the teams of outside blockers) updated since the last reading less `OVERLAP`, read by the
  kit's `SinceReader`. The window is not `paged`: its watermark is the answer's `Date`, and an
  answer with a next page (more than 100 changes) is a gap. An issue read back with the
  `updatedAt` already seen is not news.
* Issues marked (`window.mark`, Linear ids: this pool's own settles, a lost claim, a webhook
  naming them) are asked for by id in the same request whatever their `updatedAt` (writing an
  attachment need not move it); one the answer lacks was deleted or trashed and leaves as
  `missing`.
* Only if some are news, one `Jr2Issues` reads them whole, narrowed to the scope (more than
  `PAGE` is a gap); a news issue it does not return left the set (done, missing, or open outside
  the filter), one this process settled as `done`. An unchanged poll is the one small request
  (a few hundred complexity points, where a page of issues is about 10,000).
* A label event (`window.want_full`), or a delta that fails half-way, makes the next reading
  full.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jr2_sources import BlockerState, Delta, SnapshotItem
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow, WindowGap

from . import operations as ops
from .markers import parse_time
from .reader import answer_time, ref_state

if TYPE_CHECKING:
    from .reader import IssueReader

OVERLAP = 10.0
"""Seconds a delta reads back before the server time of the last reading (the `Date` header has
whole seconds; writes may land out of order); an issue read back unchanged costs nothing."""


def _updated_at(node: dict[str, Any]) -> Any:
    return node.get("updatedAt")


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class LinearChanges(SinceReader[str]):
    """Linear's queries for the kit's `SinceReader`, keyed by issue identifier."""

    def __init__(self, reader: IssueReader) -> None:
        super().__init__(SinceWindow(overlap=OVERLAP, paged=False, fingerprint=_updated_at))
        self.reader = reader
        self._direct: list[str] = []  # the Linear ids this delta asks for by id
        self._answered: set[str] = set()  # the Linear ids `Jr2Changed` answered
        self._whole: dict[str, dict[str, Any]] = {}  # the news in scope, read whole
        self._now = datetime.now(UTC)  # the server's time of `_whole`

    def prepare(self) -> None:
        """The marks, asked for by id in this delta's `page`."""
        self._direct = sorted(str(m) for m in self.window.take_marks())
        self._answered, self._whole = set(), {}

    def page(self, since: datetime) -> Page:
        recent: dict[str, Any] = {"and": [{"team": {"key": {"in": sorted(self.reader.teams)}}},
                                          {"updatedAt": {"gt": _iso(since)}}]}
        touched = {"or": [recent, {"id": {"in": self._direct}}]} if self._direct else recent
        ans = self.reader.client.run("Jr2Changed", ops.CHANGED, {"touched": touched})
        conn = ans.data["issues"]
        if conn["pageInfo"]["hasNextPage"]:
            raise WindowGap("more than 100 issues changed")
        self._answered = {n["id"] for n in conn["nodes"]}
        for node in conn["nodes"]:
            if node["id"] in self._direct:  # news even when its `updatedAt` did not move
                self.window.forget(node["identifier"])
        return conn["nodes"], ans.date

    def marks(self) -> list[str]:
        return []  # read in `prepare`: the query names them

    def key_of(self, obj: Any) -> str:
        return str(obj["identifier"])

    def updated_of(self, obj: Any) -> datetime | None:
        return parse_time(obj["updatedAt"]) if obj.get("updatedAt") else None

    def follow(self, fresh: dict[str, Any], marked: set[str], skip: set[str]) -> None:
        """The news read whole, narrowed to the scope (one request)."""
        if not fresh:
            return
        if len(fresh) > ops.PAGE:
            raise WindowGap(f"{len(fresh)} issues changed")
        ans = self.reader.client.run("Jr2Issues", ops.ISSUES, {
            "filter": {"and": [self.reader.config.scope(),
                               {"id": {"in": [n["id"] for n in fresh.values()]}}]},
            "first": ops.PAGE, "after": None})
        self._now = answer_time(ans)
        self._whole = {n["identifier"]: n for n in ans.data["issues"]["nodes"]}

    def leaves(self, key: str, obj: Any, skip: set[str]) -> BlockerState | None:
        if key in skip:
            return "done"
        return None if key in self._whole else ref_state(obj)

    def item_of(self, key: str, obj: Any, delta: Delta) -> SnapshotItem | None:
        return self.reader.item(self._whole[key], self._now)

    def finish(self, delta: Delta) -> None:
        """A marked issue the answer lacks was deleted or trashed."""
        gone = set(self._direct) - self._answered
        for ident, (lid, _url) in dict(self.reader.ids).items():
            if lid in gone:
                delta.left[ident] = "missing"
                self.in_set.discard(ident)
                self.window.forget(ident)
