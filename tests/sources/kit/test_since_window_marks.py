"""Webhook marks and full readings: a full reading clears only what it could have seen."""

from __future__ import annotations

from datetime import UTC, datetime

from jr2_sources.capabilities.deltas.sincewindow import SinceWindow, WindowGap

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _page(_since: datetime) -> tuple[list[object], datetime]:
    return [], T0


def test_marks_made_during_a_full_reading_outlive_it() -> None:
    w = SinceWindow()
    w.mark([1])            # before the reading began: the reading sees issue 1
    w.begin()
    w.mark([2])            # while it runs: issue 2 may have been listed before its change
    w.reset(T0, [])
    assert w.take_marks() == {2}


def test_a_full_reading_without_begin_clears_every_mark() -> None:
    w = SinceWindow()
    w.mark([1, 2])
    w.reset(T0, [])
    assert w.take_marks() == set()


def test_a_request_for_a_full_reading_made_during_one_is_kept() -> None:
    w = SinceWindow()
    w.want_full("label renamed (before)")
    w.begin()
    w.reset(T0, [])
    assert w.collect(_page, key_of=id, updated_of=lambda o: None) == {}
    w.begin()
    w.want_full("label renamed (during)")
    w.reset(T0, [])
    try:
        w.collect(_page, key_of=id, updated_of=lambda o: None)
    except WindowGap as gap:
        assert "during" in str(gap)
    else:
        raise AssertionError("the request made during the full reading was lost")
