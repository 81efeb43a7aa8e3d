"""Sweeps: only every `SWEEP_EVERY` seconds does a delta reach back the whole overlap, and an
update that is listed late (up to the overlap after the time it carries) is still seen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jr2_sources.capabilities.deltas.sincewindow import (
    DEFAULT_OVERLAP,
    RECENT,
    SWEEP_EVERY,
    SinceWindow,
)

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Server:
    """Issues with update stamps, each listed only from its `visible` time on (a late commit),
    and one clock that both the server's `Date` and the window's clock follow."""

    def __init__(self) -> None:
        self.t = 0.0
        self.issues: dict[int, tuple[datetime, float]] = {}  # key -> (stamp, visible from)
        self.asked: list[datetime] = []

    def now(self) -> datetime:
        return T0 + timedelta(seconds=self.t)

    def fetch(self, since: datetime) -> tuple[list[Any], datetime]:
        self.asked.append(since)
        page = sorted(({"key": k, "at": at} for k, (at, vis) in self.issues.items()
                       if vis <= self.t and at >= since), key=lambda o: o["at"])
        return page, self.now()


def collect(w: SinceWindow, s: Server) -> set[int]:
    return set(w.collect(s.fetch, key_of=lambda o: o["key"], updated_of=lambda o: o["at"]))


def test_deltas_reach_back_recent_and_a_sweep_the_overlap_every_few_seconds() -> None:
    s = Server()
    w = SinceWindow(clock=lambda: s.t)
    w.reset(s.now(), [])  # a full reading counts as a sweep
    for _ in range(int(SWEEP_EVERY * 10) + 10):  # a delta every 0.1 s, for 6 s
        collect(w, s)
        s.t += 0.1
    reach = [(w.watermark - since).total_seconds() for since in s.asked]  # type: ignore[operator]
    sweeps = [r for r in reach if r > RECENT]
    assert sweeps == [DEFAULT_OVERLAP + SWEEP_EVERY]
    assert reach.count(RECENT) == len(reach) - 1


def test_an_update_listed_up_to_the_overlap_late_is_seen_by_a_sweep() -> None:
    """Every stamp and delay: the update is found within `overlap + SWEEP_EVERY` seconds."""
    for stamp_at in (0.5, 1.0, 2.7, 4.9, 6.0):
        for late in (0.0, 2.5, 5.0, 9.9):
            s = Server()
            w = SinceWindow(clock=lambda s=s: s.t)  # type: ignore[misc]
            w.reset(s.now(), [])
            s.issues[0] = (T0 + timedelta(seconds=30), 30.0)  # another issue keeps the
            seen_at = None                                    # watermark moving later
            s.issues[1] = (T0 + timedelta(seconds=stamp_at), stamp_at + late)
            while s.t < 60:
                s.issues[2] = (s.now(), s.t)  # updated at every tick: the watermark follows
                if 1 in collect(w, s) and seen_at is None:
                    seen_at = s.t
                s.t += 0.25
            assert seen_at is not None, (stamp_at, late)
            assert seen_at - (stamp_at + late) <= SWEEP_EVERY + 0.5, (stamp_at, late, seen_at)


def test_without_sweeps_a_late_update_would_be_missed() -> None:
    """The test above can fail: a window that reaches back only `RECENT` misses it."""
    s = Server()
    w = SinceWindow(clock=lambda: 0.0)  # this clock never says a sweep is due
    w.reset(s.now(), [])
    w.sweep_due = lambda: False  # type: ignore[method-assign]
    s.issues[1] = (T0 + timedelta(seconds=1), 6.0)
    found = False
    while s.t < 30:
        s.issues[2] = (s.now(), s.t)
        found |= 1 in collect(w, s)
        s.t += 0.25
    assert not found
