"""Child work items from GitLab's GraphQL hierarchy widget (detail mode): an open child makes
its parent wait, a closed one does not, and an instance without `/api/graphql` (404) means no
children with a single warning, never a failed snapshot."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter

from jr2_sources import BlockerRef, compute_ready_set


def _graphql_calls(fake: FakeGitLab) -> int:
    return sum(1 for m, p, _ in fake.requests if (m, p) == ("POST", "/api/graphql"))


def test_a_parent_waits_for_an_open_child_not_for_a_closed_one(fake: FakeGitLab) -> None:
    parent = fake.add_issue("g/p", "parent")
    open_kid = fake.add_issue("g/p", "open task")
    done_kid = fake.add_issue("g/p", "closed task")
    other = fake.add_issue("g/p", "parent of a closed task only")
    fake.set_parent(("g/p", open_kid), ("g/p", parent))
    fake.set_parent(("g/p", done_kid), ("g/p", other))
    fake.close_issue("g/p", done_kid)
    adapter = make_adapter(fake.url)
    snap = adapter.snapshot()
    items = {i.id: i for i in snap.items}
    assert items[f"g/p#{parent}"].children == [BlockerRef(f"g/p#{open_kid}", "open")]
    assert items[f"g/p#{other}"].children == [BlockerRef(f"g/p#{done_kid}", "done")]
    rs = compute_ready_set(snap, now=datetime.now(UTC))
    assert {e.item.id for e in rs.ready} == {f"g/p#{open_kid}", f"g/p#{other}"}
    blocked = {e.item.id: [r.kind for r in e.reasons] for e in rs.blocked}
    assert blocked == {f"g/p#{parent}": ["open_children"]}
    assert _graphql_calls(fake) == 1 and fake.writes() == 0
    assert adapter.client.stats.writes == 0


def test_children_beyond_the_first_100_are_paged(fake: FakeGitLab) -> None:
    """A parent with 150 children: the last 50 come from a second page (`pageInfo`); the one
    open child among them still holds the parent."""
    parent = fake.add_issue("g/p", "parent")
    kids = [fake.add_issue("g/p", f"task {i}") for i in range(150)]
    for kid in kids:
        fake.set_parent(("g/p", kid), ("g/p", parent))
    for kid in kids[:-1]:
        fake.close_issue("g/p", kid)
    snap = make_adapter(fake.url).snapshot()
    item = next(i for i in snap.items if i.id == f"g/p#{parent}")
    assert len(item.children) == 150
    assert [c.id for c in item.children if c.state == "open"] == [f"g/p#{kids[-1]}"]
    assert _graphql_calls(fake) == 2  # the listed issues in one query, then page 2
    rs = compute_ready_set(snap, now=datetime.now(UTC))
    assert f"g/p#{parent}" in {e.item.id for e in rs.blocked}


def test_no_detail_reads_no_children(fake: FakeGitLab) -> None:
    parent = fake.add_issue("g/p", "parent")
    fake.set_parent(("g/p", fake.add_issue("g/p", "task")), ("g/p", parent))
    snap = make_adapter(fake.url, detail=False).snapshot()
    assert all(i.children == [] for i in snap.items)
    assert _graphql_calls(fake) == 0


def test_graphql_404_means_no_children_and_one_warning(
        fake: FakeGitLab, caplog: pytest.LogCaptureFixture) -> None:
    parent = fake.add_issue("g/p", "parent")
    fake.set_parent(("g/p", fake.add_issue("g/p", "task")), ("g/p", parent))
    fake.graphql = False
    adapter = make_adapter(fake.url)
    with caplog.at_level(logging.WARNING, logger="jr2_gitlab"):
        first = adapter.snapshot()
        second = adapter.snapshot()
    for snap in (first, second):
        assert len(snap.items) == 2 and all(i.children == [] for i in snap.items)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "child work items not read" in warnings[0].getMessage()
    assert _graphql_calls(fake) == 1  # a 404 is not asked again


def test_a_graphql_error_means_no_children(fake: FakeGitLab,
                                           caplog: pytest.LogCaptureFixture) -> None:
    parent = fake.add_issue("g/p", "parent")
    fake.set_parent(("g/p", fake.add_issue("g/p", "task")), ("g/p", parent))
    fake.graphql_error = "Field 'workItems' doesn't exist on type 'Project'"
    with caplog.at_level(logging.WARNING, logger="jr2_gitlab"):
        snap = make_adapter(fake.url).snapshot()
    assert all(i.children == [] for i in snap.items)
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
