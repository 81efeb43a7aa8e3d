"""The worker journal of the limits tests (`start|end|stop|orphan <item> <run or pid> <t>`, one
O_APPEND write per line), read back as run intervals, and how many of them overlapped at most."""

from __future__ import annotations

from pathlib import Path


def runs(journal: Path) -> dict[str, list[tuple[float, float]]]:
    """Each item's runs as (start, end) intervals; any line but `start` ends a run, and a run
    that never ended lasts to +inf."""
    out: dict[str, list[tuple[float, float]]] = {}
    open_: dict[tuple[str, str], float] = {}
    for ln in (journal.read_text() if journal.exists() else "").splitlines():
        kind, item, run, t = ln.split()
        if kind == "start":
            open_[(item, run)] = float(t)
        else:
            out.setdefault(item, []).append((open_.pop((item, run)), float(t)))
    for (item, _), start in open_.items():
        out.setdefault(item, []).append((start, float("inf")))
    return out


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The most intervals open at one instant (an end at t comes before a start at t)."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most
