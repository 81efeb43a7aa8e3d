"""Adversarial checks of Jira deltas (`trackers/jira/deltas.py`) against what Jira itself does,
each compared with a full reading: a delta must neither miss nor invent work, and a pool never
writes to an issue its JQL does not select."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from jira_helpers import make_adapter

from jr2_sources.capabilities.deltas.incremental import IncrementalReadySet
from jr2_sources.readyset import Snapshot
from jr2_sources.testing.fakes.jira_server import FakeJira
from jr2_sources.trackers.jira.jql import moves_with_time

HOLDER = "run-1@host"


@pytest.mark.parametrize("jql", ['project = ENG AND created >= "-10m"',
                                 "project = ENG AND created >= -10m"])
def test_a_filter_relative_to_now_is_judged_again_before_a_claim(fake: FakeJira,
                                                                   jql: str) -> None:
    """Atlassian's JQL reference: a relative date ("-10m", "-1d", "-4w 2d") and functions
    (`now()`, `startOfDay()`, `openSprints()`, `membersOf()`, ...) are evaluated when the search
    runs, so an issue can leave such a filter without any change to it (its `updated` stays).
    A delta searches `updated >= T`: it cannot see that. A full reading would no longer offer
    the issue; the claim must not write to it either, and the next delta drops it."""
    key = fake.add_issue("fresh work")
    ad = make_adapter(fake.url, jql=jql)
    try:
        first = ad.changes()
        assert isinstance(first, Snapshot)
        (item,) = first.items
        inc = IncrementalReadySet(first, now=datetime.now(UTC))
        fake.advance(11 * 60)  # created 11 minutes ago: the filter no longer selects it
        inc.apply(ad.changes(), now=datetime.now(UTC))
        fake.clear_log()
        assert ad.claim(item, HOLDER, 60) is False
        assert [e["method"] for e in fake.requests()] in (["GET"], ["POST"], ["GET", "POST"])
        assert all("comment" not in e["path"] for e in fake.requests())
        assert fake.issues[key].labels == []
        inc.apply(ad.changes(), now=datetime.now(UTC))
        assert [e.item.id for e in inc.ready_set().ready] == []
    finally:
        ad.close()


@pytest.mark.parametrize(("jql", "moves"), [
    ("project = ENG AND labels = agent ORDER BY created", False),
    ('project = ENG AND updated >= "2024/01/02 10:00"', False),
    ('summary ~ "now() or -1d"', False),  # inside a text search: words, not a date or a call
    ("project = ENG AND labels in (a, b)", False),
    ("project = ENG AND status WAS NOT IN (Done) BY me", False),
    ('project = ENG AND created >= "-1d"', True),
    ("project = ENG AND created >= -4w", True),
    ('project = ENG AND due <= "4w 2d"', True),
    ("sprint in openSprints()", True),
    ("assignee = currentUser()", False),  # the searching account: it does not move
    ("assignee in membersOf(team)", True),
    ("updated > startOfDay( -1 )", True),
    ("project = ENG AND issue IN linkedIssues(ENG-1)", True),
])
def test_moves_with_time_finds_relative_dates_and_functions(jql: str, moves: bool) -> None:
    assert moves_with_time(jql) is moves


def test_a_change_of_the_accounts_time_zone_is_learnt_at_the_next_full_reading(
        fake: FakeJira) -> None:
    """Jira reads a JQL date in the searching account's time zone ("The time zone specified in
    the user's profile", `GET /myself`), and a person can change it while a pool runs. Moved
    west, every literal written for the old zone is read hours later and a delta misses what
    changed meanwhile; the full resynchronisation must also bring the zone up to date, so a
    change hides work for one `--resync-every` at most, not for the rest of the run."""
    fake.add_issue("first", labels=["agent"])
    ad = make_adapter(fake.url, jql="project = ENG AND labels = agent")
    try:
        assert isinstance(ad.changes(), Snapshot)
        ad.changes()  # a delta: the zone (UTC) is looked up
        fake.me["timeZone"] = "America/Los_Angeles"  # UTC-8: a literal now reads 8 hours later
        assert isinstance(ad.changes(full=True), Snapshot)  # the resynchronisation
        new = fake.add_issue("second", labels=["agent"])
        delta = ad.changes()
        assert [it.id for it in getattr(delta, "items", [])] == [new]
    finally:
        ad.close()


def test_a_delta_that_fails_half_way_loses_nothing(fake: FakeJira) -> None:
    """A delta judges the issues that left the scope before it builds the changed ones, and
    building one can fail (its comments are listed: a 5xx past the retry budget). The next
    reading must still deliver every change the failed one had begun on: an issue edited out
    of the filter must leave the Ready-set, as a full reading shows."""
    jql = "project = ENG AND labels = agent"
    leaving = fake.add_issue("edited out of the filter", labels=["agent"])
    held = fake.add_issue("another pool claims it", labels=["agent"])
    other = make_adapter(fake.url, jql=jql)
    ad = make_adapter(fake.url, jql=jql, retry_budget=0.05)
    try:
        first = ad.changes()
        assert isinstance(first, Snapshot)
        inc = IncrementalReadySet(first, now=datetime.now(UTC))
        (claimed,) = [it for it in other.snapshot().items if it.id == held]
        assert other.claim(claimed, "other@host", 600)
        fake.edit(leaving, remove="agent")
        fake.fault(500, times=100, path=rf"/issue/{held}/comment|/comment/list")
        with pytest.raises(Exception, match="500"):
            ad.changes()  # fails while building the claimed issue (its comments)
        fake.faults.clear()
        got = ad.changes()
        if isinstance(got, Snapshot):
            inc.reset(got, now=datetime.now(UTC))
        else:
            inc.apply(got, now=datetime.now(UTC))
        rs = inc.ready_set()
        assert [e.item.id for e in rs.ready] == []
        assert [e.item.id for e in rs.claimed] == [held]
    finally:
        other.close()
        ad.close()


def test_a_held_issue_a_person_edits_out_of_the_filter_is_taken_back(fake: FakeJira) -> None:
    """People win and scope is sacred: the watch searches the held keys inside the scope, and
    one missing from that search is confirmed before its worker is stopped (the search is
    eventually consistent). The confirmation must judge the scope too, not only whether the
    issue is open, unfailed and unassigned: a person who removed the label the JQL selects
    took the issue out of the pool's hands."""
    jql = "project = ENG AND labels = agent"
    keys = [fake.add_issue(f"E{i}", labels=["agent"]) for i in range(2)]
    ad = make_adapter(fake.url, jql=jql)
    try:
        items = {it.id: it for it in ad.snapshot().items}
        for key in keys:
            assert ad.claim(items[key], HOLDER, 600)
        assert ad.watch(keys, HOLDER) == {}
        fake.edit(keys[0], remove="agent")
        assert ad.watch(keys, HOLDER) == {keys[0]: "it was moved out of this pool's scope"}
    finally:
        ad.close()
