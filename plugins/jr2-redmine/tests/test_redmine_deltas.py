"""Deltas against a real Redmine: what `updated_on` shows, and readiness kept right without it."""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import Any

from redmine_helpers import Project

from jr2_redmine import RedmineTracker
from jr2_sources import Delta, Snapshot, compute_ready_set
from jr2_sources.capabilities.deltas.incremental import IncrementalReadySet


def _updated_on(p: Project, *numbers: int) -> list[str]:
    return [p.get(n, "relations")["updated_on"] for n in numbers]


def test_a_relation_added_or_removed_moves_neither_issues_updated_on(
        redmine_project: Project) -> None:
    """Redmine journals a relation on both issues but touches neither: a list asked with
    `updated_on>=` cannot see it (the reason the deltas also ask `blocked=*`)."""
    p = redmine_project
    a, b = p.issue("a"), p.issue("b")
    before = _updated_on(p, a, b)
    time.sleep(1.2)  # updated_on has whole seconds
    rel = p.admin.call("POST", f"/issues/{a}/relations.json",
                       {"relation": {"issue_to_id": b, "relation_type": "blocks"}})
    assert _updated_on(p, a, b) == before
    assert [r["issue_id"] for r in p.get(b, "relations")["relations"]] == [a]
    time.sleep(1.2)
    p.admin.call("DELETE", f"/relations/{rel['relation']['id']}.json")
    assert _updated_on(p, a, b) == before
    details = [d["property"] for j in p.get(b)["journals"] for d in j["details"]]
    assert details == ["relation", "relation"]  # journalled, yet updated_on stayed


class Follower:
    """A tracker read by deltas into an incremental Ready-set, checked against a full reading
    of a second tracker after every step. Its window has no overlap, so an issue updated
    before the last reading is not listed again by `updated_on>=` (in use the overlap would
    hide, for a few seconds, what the relation lists catch), and a clock that makes every step
    a sweep (which asks the relation list). `ready` is a set: issues created in one second tie
    on `created_on` (whole seconds) and the run order tells them apart by id as text (`#100`
    before `#99`); `step` checks the order against the full reading's."""

    def __init__(self, p: Project) -> None:
        self.p = p
        self.tracker: RedmineTracker = p.tracker()
        assert self.tracker.reader.changes is not None
        self.tracker.reader.changes.window.overlap = 0.0
        self.tracker.reader.changes.window.clock = itertools.count(0, 10).__next__
        first = self.tracker.changes(full=True)
        assert isinstance(first, Snapshot)
        self.set = IncrementalReadySet(first, now=datetime.now(UTC))
        self.deltas = 0

    def step(self) -> dict[str, Any]:
        """Read one delta; returns what it cost; asserts the set equals a full reading's."""
        stats = self.tracker.client.stats
        before = stats.requests
        change = self.tracker.changes()
        assert isinstance(change, Delta), self.tracker.reader.changes.window.last_gap  # type: ignore[union-attr]
        self.deltas += 1
        self.set.apply(change, now=datetime.now(UTC))
        full = compute_ready_set(self.p.tracker().snapshot(), now=datetime.now(UTC))
        mine = self.set.ready_set()
        assert [e.item.id for e in mine.ready] == [e.item.id for e in full.ready]
        assert sorted(e.item.id for e in mine.blocked) == sorted(e.item.id for e in full.blocked)
        return {"requests": stats.requests - before, "delta": change}

    def ready(self) -> set[str]:
        return {e.item.id for e in self.set.ready_set().ready}


def test_deltas_keep_readiness_right_through_relations_subtasks_and_closing(
        redmine_project: Project) -> None:
    p = redmine_project
    a, b, c = p.issue("a"), p.issue("b"), p.issue("c")
    time.sleep(1.1)  # a, b and c are older than the first reading (whole seconds)
    f = Follower(p)
    assert f.ready() == {f"#{a}", f"#{b}", f"#{c}"}

    quiet = f.step()  # nothing changed: the same two questions, both answered 304
    assert quiet["requests"] == 2 and not quiet["delta"]

    rel = p.admin.call("POST", f"/issues/{a}/relations.json",
                       {"relation": {"issue_to_id": b, "relation_type": "blocks"}})
    assert f.step()["requests"] == 2  # the same two; the relation list now holds b
    assert f"#{b}" not in f.ready()

    kid = p.issue("kid", parent_issue_id=c)
    f.step()
    assert f"#{c}" not in f.ready() and f"#{kid}" in f.ready()

    p.admin.call("DELETE", f"/relations/{rel['relation']['id']}.json")  # no updated_on moves
    f.step()
    assert f"#{b}" in f.ready()

    p.block(a, b)
    f.step()
    p.close(a)
    p.close(kid)
    f.step()
    assert f.ready() == {f"#{b}", f"#{c}"}

    p.admin.call("PUT", f"/issues/{b}.json", {"issue": {"custom_fields": [
        {"id": p.redmine.field_id, "value": "jr2:failed"}]}})
    f.step()
    assert f.ready() == {f"#{c}"}


def test_a_blocker_in_another_project_closing_is_seen_by_a_delta(
        redmine_project: Project) -> None:
    """Redmine refuses a relation across projects by default (422 "Related issue doesn't belong
    to the same project"), so the blocker elsewhere is named in the description."""
    from redmine_helpers import new_project

    p = redmine_project
    other = new_project(p.redmine)
    outside = other.issue("elsewhere")
    mine = p.issue("mine", description=f"Depends on #{outside}")
    f = Follower(p)
    assert f.ready() == set()
    other.close(outside, who=other.admin)
    f.step()
    assert f.ready() == {f"#{mine}"}


def test_between_sweeps_a_delta_is_one_list_and_a_claim_sees_a_new_relation(
        redmine_project: Project) -> None:
    """A delta that is not a sweep asks only `updated_on>=`, so it cannot see a relation just
    added; the claim can: its read of the issue carries the relations. Nothing is posted on the
    newly blocked issue, and the next delta reads it again, blocked."""
    p = redmine_project
    a, b = p.issue("a"), p.issue("b")
    time.sleep(4.2)  # older than a delta that is not a sweep reaches back: 2 s, and Redmine's
    # `updated_on>=T` is `updated_on > T - 1 s` against times kept to the microsecond
    tracker = p.tracker()
    changes = tracker.reader.changes
    assert changes is not None
    changes.window.overlap = 0.0
    changes.window.clock = lambda: 0.0  # no sweep falls due by the clock
    first = tracker.changes(full=True)
    assert isinstance(first, Snapshot)
    item = next(it for it in first.items if it.id == f"#{b}")
    before = tracker.client.stats.requests
    assert not tracker.changes()
    assert tracker.client.stats.requests - before == 1
    p.block(a, b)
    assert not tracker.changes()  # the relation moved no `updated_on`
    journals = len(p.get(b)["journals"])
    assert not tracker.claim(item, "me@h", 600)
    assert len(p.get(b)["journals"]) == journals  # the look refused it: no claim note
    delta = tracker.changes()
    assert isinstance(delta, Delta)
    [again] = [it for it in delta.items if it.id == f"#{b}"]
    assert [r.id for r in again.blockers] == [f"#{a}"]
