"""Findings of the session-4 review of #18 (review18) in the Jira source."""

from __future__ import annotations

import pytest

from jr2_sources.trackers.jira.jql import moves_with_time


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
