"""Keeping the dashboard issue up to date: read the body, act on ticks, write only what changed.

* One `update()`: read the body, cut it at jr2's section, act on the boxes ticked there (each
  once), render the section and compare it with the body's (no "last changed" line): equal, no
  write. Else wait for `interval` since this process's last write, read the body again and
  write only if it is still the body the section was built on (a person's text kept exactly);
  a body changed in between (or `BodyChanged` from a board that compares and sets) starts over,
  at most `_ROUNDS` times.
* Ticks: **retry** clears the failure mark of a failed item in scope (`Board.retry`),
  **approve** answers a waiting gate through the `GateDesk`. One that cannot be acted on now is
  drawn ticked again and tried next time. Who may tick is the board's to check.
* Limits are the board's target's; `own(body)` tells the body this process wrote last.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from jr2_core.errors import ItemError, SourceError, UsageError
from jr2_sources.readyset import ReadySet

from .body import BodyParts, BrokenMarkers, Tick
from .layout import MARKDOWN, Layout
from .model import PendingApproval
from .target import target_of

__all__ = ["DEFAULT_INTERVAL", "Board", "BodyChanged", "Dashboard", "GateDesk", "NoGates", "Step"]

log = logging.getLogger("jr2.dashboard")

DEFAULT_INTERVAL = 60.0
"""Least seconds between two writes of the dashboard by one process."""


_ROUNDS = 3  # reads of a body that keeps changing before giving up until the next update


class BodyChanged(Exception):
    """Raised by a board that compares and sets: the body (now `body`) changed since it was
    read, so nothing was written."""

    def __init__(self, body: str) -> None:
        super().__init__("the body changed since it was read")
        self.body = body


class Board(Protocol):
    """The dashboard issue on one tracker: `name` as people name it (`github:o/r#7`), `item_id`
    as the tracker's items are named (never one of the backlog's). Optional attributes:
    `target` (a `target.Target`; GitHub's by default), `layout` (a `layout.Layout`; Markdown by
    default) and `vet(tick) -> str | None` (why a ticked box must be ignored, for a tracker that
    records who edited the body)."""

    name: str
    item_id: str

    def read(self) -> str:
        """The issue's body now (a conditional read: cheap when unchanged)."""
        ...

    def write(self, body: str) -> None:
        """Replace the issue's body (may raise `BodyChanged`: nothing written)."""
        ...

    def retry(self, item_id: str) -> None:
        """Clear jr2's failure mark of `item_id` (an item of the source, failed now)."""
        ...

    def about(self, headers: Mapping[str, str], body: bytes) -> Literal["own", "person"] | None:
        """Whether a verified webhook delivery is about this issue: jr2's own last write, anyone
        else's change, or not about it (None)."""
        ...


class GateDesk(Protocol):
    """Where the dashboard finds the gates that wait for an answer and answers one."""

    def pending(self, rs: ReadySet) -> list[PendingApproval]:
        """The gates of items in `rs` waiting for an answer now."""
        ...

    def approve(self, item_id: str, gate: str) -> bool:
        """Approve `gate` of `item_id`; False when it was not waiting (answered meanwhile)."""
        ...


class NoGates:
    """A `GateDesk` with no gates (a tracker or a run without approval gates)."""

    def pending(self, rs: ReadySet) -> list[PendingApproval]:
        return []

    def approve(self, item_id: str, gate: str) -> bool:
        raise UsageError("approval gates cannot be answered from the dashboard here")


@dataclass
class Step:
    """What one `update()` did: `wrote` the body or not, `why` (`unchanged`, `written`,
    `waiting` `wait` seconds, `busy`, `broken`, `full`), and what the ticks did (`acted`)."""

    wrote: bool
    why: str
    acted: list[str] = field(default_factory=list)
    wait: float = 0.0


class Dashboard:
    """Keeps one dashboard issue up to date (see the module notes)."""

    def __init__(self, board: Board, *, interval: float = DEFAULT_INTERVAL,
                 gates: GateDesk | None = None, clock: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 limit: int | None = None) -> None:
        """`limit`: the most characters of the body (default: the board's `target.limit`)."""
        self.board = board
        self.target = target_of(board)
        self.layout: Layout = getattr(board, "layout", None) or MARKDOWN
        self.interval = interval
        self.gates: GateDesk = gates or NoGates()
        self.clock = clock
        self.now = now
        self.limit = self.target.limit if limit is None else limit
        self.writes = 0
        self._last_write: float | None = None
        self._written: str | None = None
        self._lock = threading.Lock()

    def own(self, body: str | None) -> bool:
        """Whether `body` is the body this process wrote last (its own edit coming back)."""
        return body is not None and body == self._written

    def wait_left(self) -> float:
        """Seconds until the interval allows the next write (0: now)."""
        if self._last_write is None:
            return 0.0
        return max(0.0, self._last_write + self.interval - self.clock())

    def update(self, current: Callable[[], ReadySet],
               fresh: Callable[[], ReadySet] | None = None) -> Step:
        """One update (blocking): `current` gives the Ready-set to compare with (a pool's last
        reading), `fresh` a new one once a write is due or a tick acted (default: `current`)."""
        with self._lock:
            return self._update(current, fresh)

    def _update(self, current: Callable[[], ReadySet],
                fresh: Callable[[], ReadySet] | None) -> Step:
        rs = current()
        is_fresh = fresh is None
        acted: list[str] = []
        body = self.board.read()
        for _ in range(_ROUNDS):
            try:
                parts = self.layout.split(body)
            except BrokenMarkers as exc:
                return Step(False, f"broken: {exc}; fix the issue body (nothing written)", acted)
            done, keep = self._act([t for t in self.layout.ticks(parts.section) if t.ticked],
                                   rs)
            if done:
                acted += done
                rs, is_fresh = (fresh or current)(), True
            section = self._render(rs, parts, keep)
            if parts.section is not None and self._same(parts.section, section):
                return Step(False, "unchanged", acted)
            wait = self.wait_left()
            if wait > 0:
                return Step(False, "waiting", acted, wait)
            if not is_fresh and fresh is not None:  # a write is due: show the state as it is
                rs, is_fresh = fresh(), True
                section = self._render(rs, parts, keep)
                if parts.section is not None and self._same(parts.section, section):
                    return Step(False, "unchanged", acted)
            new = self.layout.merge(parts, section, self.now())
            if not section or self.layout.size(new) > self.limit:
                return Step(False, "full: the text outside jr2's section leaves no room for "
                            f"the dashboard ({self.target.limit_words}: {self.limit:,} "
                            "characters)", acted)
            again = self.board.read()
            if again != body:  # a person edited in between: start over from their body
                body = again
                continue
            try:
                self.board.write(new)
            except BodyChanged as changed:  # a person saved just now: start over from it
                body = changed.body
                continue
            self._written = new
            self._last_write = self.clock()
            self.writes += 1
            return Step(True, "written", acted)
        return Step(False, "busy: the body kept changing; trying again later", acted)

    def _same(self, written: str, section: str) -> bool:
        return self.layout.core(written) == self.layout.core(section)

    def _render(self, rs: ReadySet, parts: BodyParts, keep: set[str]) -> str:
        return self.layout.render(rs, parts, gates=self.gates.pending(rs), keep=keep,
                                  now=self.now(), limit=self.limit)

    def _act(self, ticked: Sequence[Tick], rs: ReadySet) -> tuple[list[str], set[str]]:
        """Act on ticked boxes: (what was done, in words; keys of ticks kept for later)."""
        if not ticked:
            return [], set()
        failed = {e.item.id for e in rs.blocked if e.item.in_scope and e.item.failed is not None}
        waiting = {(g.item_id, g.gate) for g in self.gates.pending(rs)}
        done: list[str] = []
        keep: set[str] = set()
        vet = getattr(self.board, "vet", None)  # a board that knows who ticked (Jira)
        for t in ticked:
            why = vet(t) if vet is not None else None
            if why is not None:  # consumed: drawn unticked again, and said
                done.append(f"ignored the tick for {t.item_id}: {why}")
                continue
            try:
                if t.kind == "retry" and t.item_id in failed:
                    self.board.retry(t.item_id)
                    done.append(f"retried {t.item_id}")
                elif (t.kind == "approve" and t.gate and (t.item_id, t.gate) in waiting
                      and self.gates.approve(t.item_id, t.gate)):
                    done.append(f"approved {t.gate} for {t.item_id}")
            except (ItemError, SourceError, UsageError) as exc:
                log.warning("%s: could not act on the tick for %s (kept for the next update): "
                            "%s", self.board.name, t.item_id, exc)
                keep.add(t.key)
        return done, keep
