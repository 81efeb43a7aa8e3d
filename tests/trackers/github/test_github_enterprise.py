"""Enterprise Server without the sub-issue and dependency endpoints (finding 6), and issue
objects without the summary fields (finding 7): degrade with one warning, never fail open."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from gh_helpers import make_adapter

from jr2_sources.readyset import compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub


def _world(fake: FakeGitHub) -> dict[str, int]:
    fake.next_number.setdefault("o/r", 1)
    n = {k: fake.add_issue("o/r", k) for k in ("blocker", "blocked", "parent", "child")}
    fake.add_dependency("o/r", n["blocked"], n["blocker"])
    fake.add_sub_issue("o/r", n["parent"], n["child"])
    return n


@pytest.fixture(params=["ghes-3.17", "ghes-3.18", "ghes-3.19"])
def ghes(request: pytest.FixtureRequest) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(plan=request.param).start()
    try:
        yield fake
    finally:
        fake.stop()


def _ready(adapter: object, detail: bool) -> list[str]:
    snap = adapter.snapshot(detail=detail)  # type: ignore[attr-defined]
    return [e.item.title for e in compute_ready_set(snap, now=datetime.now(UTC)).ready]


def test_enterprise_server_without_the_endpoints_degrades_with_one_warning(
        ghes: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    _world(ghes)
    adapter = make_adapter(ghes.url)
    with caplog.at_level(logging.WARNING, logger="jr2.github"):
        for _ in range(3):  # `jr2 ready` names blockers: it does not abort
            assert _ready(adapter, detail=True) == ["blocker", "child"]
        assert _ready(adapter, detail=False) == ["blocker", "child"]
    warned = [r.getMessage() for r in caplog.records if "no `" in r.getMessage()]
    lacks = ["sub_issues"] + (["dependencies/blocked_by"] if ghes.plan != "ghes-3.19" else [])
    assert len(warned) == len(lacks) and all(any(x in w for w in warned) for x in lacks)
    asked = ghes.requests("GET", r"/sub_issues$")
    assert len(asked) == 1 and asked[0]["status"] == 404  # asked once, then remembered


def test_missing_summary_fields_never_make_a_blocked_issue_ready(
        caplog: pytest.LogCaptureFixture) -> None:
    with FakeGitHub(summaries=False) as fake:
        _world(fake)
        adapter = make_adapter(fake.url)
        with caplog.at_level(logging.WARNING, logger="jr2.github"):
            assert _ready(adapter, detail=False) == ["blocker", "child"]
            assert _ready(adapter, detail=False) == ["blocker", "child"]
        warned = [r.getMessage() for r in caplog.records if "carry no" in r.getMessage()]
        assert len(warned) == 2  # once per summary field, not once per poll
        # the second poll's endpoint reads were conditional: unchanged, so free
        second = fake.requests("GET", r"/(sub_issues|blocked_by)$")[-8:]
        assert {e["status"] for e in second} == {304}


def test_an_old_server_with_neither_summaries_nor_endpoints_has_no_such_links() -> None:
    with FakeGitHub(plan="ghes-3.17", summaries=False) as fake:
        fake.next_number.setdefault("o/r", 1)
        fake.add_issue("o/r", "a")
        fake.add_issue("o/r", "b")
        assert _ready(make_adapter(fake.url), detail=False) == ["a", "b"]
