"""Deltas at their edges in the Jira source, each in a concrete scenario."""

from __future__ import annotations

import pytest
from jira_helpers import make_adapter

from jr2_sources.testing.fakes.jira_server import FakeJira
from jr2_sources.trackers.jira.jql import moves_with_time

HOLDER = "run-1@host"


@pytest.mark.parametrize("jql", [
    "filter = 10001",
    'project = ENG AND filter = "Agent work"',
    "savedFilter in (10001, 10002)",
    "searchRequest = 10001 ORDER BY created",
    "request != 10001",
])
def test_a_saved_filter_is_taken_to_move_with_time(jql: str) -> None:
    """JQL's `filter` field (aliases `request`, `savedFilter`, `searchRequest`: Atlassian's
    JQL fields reference, "Filter") selects what a saved filter selects, and that filter's
    text is not in the user's JQL: it may hold `openSprints()` or "-1d". `moves_with_time`
    is documented as conservative, so it must say True; it said False, and a claim then went
    on for an issue the saved filter had dropped without any change to the issue."""
    assert moves_with_time(jql) is True


@pytest.mark.parametrize("jql", [
    "labels = request",  # a value, not the field
    'summary ~ "filter = 10001"',
])
def test_the_word_filter_as_a_value_is_not_a_saved_filter(jql: str) -> None:
    assert moves_with_time(jql) is False


def test_a_claim_taken_back_by_an_edit_of_the_filter_is_released(fake: FakeJira) -> None:
    """340bfc3 makes the watch confirm a missing held issue with `_selects_now`, which also
    drops the key from `_scoped`. The worker is then stopped and its claim released, but every
    write of the release passes `_guard`, which now refuses the issue: jr2's claim label and a
    claim comment that never says `released` stay on a person's issue (on GitHub and GitLab
    the same release removes them). The module's contract: writes are refused to an issue
    *no snapshot of this process had in scope*; this one had."""
    jql = "project = ENG AND labels = agent"
    key = fake.add_issue("E0", labels=["agent"])
    ad = make_adapter(fake.url, jql=jql)
    try:
        (item,) = ad.snapshot().items
        assert ad.claim(item, HOLDER, 600)
        assert "jr2:claimed" in fake.issues[key].labels
        fake.edit(key, remove="agent")
        assert ad.watch([key], HOLDER) == {key: "it was moved out of this pool's scope"}
        ad.release(key, HOLDER)
        assert "jr2:claimed" not in fake.issues[key].labels
    finally:
        ad.close()
