"""Global caps and conflict groups in the Ready-set and its report
(`jr2_sources.capabilities.limits.policy`): which groups an item is in, the `group_busy` and
`global_cap` reasons in every form, and the WorkSource's refusal of a tracker that cannot keep
them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from memorytracker import MemoryTracker

from jr2_core.errors import UsageError
from jr2_sources.capabilities.limits.policy import Limits
from jr2_sources.readyset import Claim, Snapshot, SnapshotItem, compute_ready_set
from jr2_sources.report import describe_reasons, explain, render_text
from jr2_sources.worksource import WorkSource

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LIVE = Claim("pool-a@host", NOW - timedelta(minutes=1), NOW + timedelta(minutes=5))
EXPIRED = Claim("pool-a@host", NOW - timedelta(minutes=9), NOW - timedelta(seconds=1))


def test_groups_come_from_label_globs_and_touches_lines() -> None:
    limits = Limits.parse(None, ["label:area/*", "touches"])
    assert limits.groups_of(["Area/DB", "agent", "area/ui"], None) == ("area/db", "area/ui")
    body = "Fix the index.\n\nTouches: DB, api ,\n- touches: cache\nnot touches: x"
    assert limits.groups_of([], body) == ("api", "cache", "db")
    assert Limits.parse(None, ["label:area/*"]).groups_of([], body) == ()
    assert Limits.parse(None, ["touches"]).groups_of(["area/db"], None) == ()


@pytest.mark.parametrize("spec", ["area/*", "label:", "labels:x", "touch"])
def test_a_bad_exclusive_by_is_one_usage_error(spec: str) -> None:
    with pytest.raises(UsageError, match=r"--exclusive-by .*expected label:GLOB"):
        Limits.parse(None, [spec])


def _items(*specs: tuple[str, tuple[str, ...], Claim | None]) -> Snapshot:
    return Snapshot("o/r", [SnapshotItem(id=i, title=i, groups=g, claim=c,
                                         created=NOW - timedelta(hours=len(specs) - n))
                            for n, (i, g, c) in enumerate(specs)])


def test_an_item_of_a_held_group_waits_for_it_and_says_who_holds_it() -> None:
    snap = _items(("o/r#12", ("db",), LIVE), ("o/r#13", ("db", "ui"), None),
                  ("o/r#14", ("ui",), None), ("o/r#15", (), None))
    rs = compute_ready_set(snap, now=NOW)
    assert [e.item.id for e in rs.ready] == ["o/r#14", "o/r#15"]
    [blocked] = rs.blocked
    assert blocked.to_json_obj()["reasons"] == [
        {"kind": "group_busy", "group": "db", "held_by": "o/r#12"}]
    assert describe_reasons(blocked.reasons) == "waits for group db (held by o/r#12)"
    assert "o/r#13  waits for group db (held by o/r#12)" in render_text(rs)
    assert explain(rs, "o/r#13") == "o/r#13: blocked, waits for group db (held by o/r#12)"


def test_an_expired_claim_holds_no_group() -> None:
    snap = _items(("A", ("db",), EXPIRED), ("B", ("db",), None))
    assert [e.item.id for e in compute_ready_set(snap, now=NOW).ready] == ["A", "B"]


def test_at_the_global_cap_every_otherwise_ready_item_waits_with_the_count() -> None:
    snap = _items(("A", (), LIVE), ("B", (), LIVE), ("C", (), None), ("D", ("db",), None))
    snap.items[3].failed = "boom"
    rs = compute_ready_set(snap, now=NOW, global_cap=2)
    assert rs.ready == []
    reasons = {e.item.id: [r.to_json_obj() for r in e.reasons] for e in rs.blocked}
    assert reasons == {"C": [{"kind": "global_cap", "count": 2, "cap": 2}],
                       "D": [{"kind": "failed", "reason": "boom"}]}
    assert describe_reasons(rs.blocked[0].reasons) == "waits for the global cap (2 of 2 held)"
    assert explain(rs, "C") == "C: blocked, waits for the global cap (2 of 2 held)"
    assert [e.item.id for e in compute_ready_set(snap, now=NOW, global_cap=3).ready] == ["C"]


def test_a_tracker_that_cannot_keep_limits_is_refused_in_one_line() -> None:
    tracker = MemoryTracker([SnapshotItem(id="A")])
    for limits in (Limits.parse(2, []), Limits.parse(None, ["touches"])):
        with pytest.raises(UsageError, match=r"cannot share a global cap or conflict groups"):
            WorkSource(tracker, holder="me", limits=limits)
    WorkSource(tracker, holder="me", limits=Limits())  # no limit asked: fine


def test_marks_around_a_touched_name_do_not_make_another_group() -> None:
    """Jira returns a rich-text description as wiki markup (`_cache_`, `{{db}}`), people write
    markdown (`*cache*`, `` `db` ``): each is the same group as the plain name."""
    limits = Limits.parse(None, ["touches"])
    body = "Touches: _cache_, {{db}}, `api`, *ui*, **q**, +s+\nTouches: ~x~"
    assert limits.groups_of([], body) == ("api", "cache", "db", "q", "s", "ui", "x")
    assert limits.groups_of([], "Touches: `` , db") == ("db",)


def test_touches_asks_a_source_for_bodies_or_is_refused_where_none_are_read() -> None:
    """`Limits.prepare`: with `touches`, a source that reads bodies on request (Jira) is asked
    to, one that does not declare `ReadsBodies` is refused in one line; label rules ask
    nothing."""
    from jr2_sources.capabilities.limits import ReadsBodies

    asked: list[bool] = []

    class OnRequest(ReadsBodies):
        name = "jira:x"

        def want_bodies(self) -> None:
            asked.append(True)

    class Always(ReadsBodies):
        name = "github:o/r"

    class NoBodies:
        name = "x:y"

    Limits.parse(None, ["label:area/*"]).prepare(OnRequest())
    assert asked == []
    Limits.parse(None, ["touches"]).prepare(OnRequest())
    assert asked == [True]
    with pytest.raises(UsageError, match="cannot see 'Touches:' lines"):
        Limits.parse(None, ["touches"]).prepare(NoBodies())
    Limits.parse(None, ["touches"]).prepare(Always())
