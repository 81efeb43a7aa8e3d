"""`jr2 work` reads the backlog once at start (issue 18): the snapshot that checks the source
before the pool starts is the Ready-reader's first full reading (`deltas.first_reading`,
`ReadyReader.prime`), not followed by a second full listing a moment later.

Counted on the fake trackers' request logs, from the start up to the first claim: GitHub's full
reading is the issues lists without `since` (the scope, jr2's claim and failure labels; a delta
asks with `since`; once in a run, the closed issues still awaiting approval), Jira's the search
whose JQL has no `updated >=` clause (a delta's has one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memorytracker import MemoryItem, MemoryTracker

from jr2_sources.capabilities.deltas.reader import ReadyReader, first_reading
from jr2_sources.cli.compose import work
from jr2_sources.readyset import Snapshot, SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.testing.fakes.jira_server import FakeJira

FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]


def before_first_write(log: list[dict[str, Any]], is_write: Any) -> list[dict[str, Any]]:
    """The requests logged before the first claim's write (the whole log if none)."""
    for i, e in enumerate(log):
        if is_write(e):
            return log[:i]
    return log


@pytest.fixture
def github() -> Any:
    server = FakeGitHub().start()
    server.next_number.setdefault("o/r", 1)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def jira() -> Any:
    server = FakeJira().start()
    try:
        yield server
    finally:
        server.stop()


def test_work_github_lists_the_backlog_once_at_start(github: FakeGitHub, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        github.add_issue("o/r", f"item {i}", labels=["agent"])
    github.add_issue("o/r", "not in scope")
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    monkeypatch.chdir(tmp_path)
    result = work("github:o/r", ["true"], options=["--label", "agent", *FAST],
                  state=tmp_path / ".jr2", cap=1, timeout=60)
    assert result.exit_code == 0
    assert len(result.tally.done_ids) == 3
    start = before_first_write(github.requests(), lambda e: e["method"] != "GET")
    assert len(start) < len(github.requests())  # a claim was written after the start
    lists = [e["query"] for e in start if e["method"] == "GET"
             and e["path"] == "/repos/o/r/issues" and "since=" not in e["query"]]
    listings = [q for q in lists if "state=closed" not in q]
    # one full reading: the scope's listing (one page) and the lists of jr2's claim and failure
    # marks, each once, not twice
    assert sorted(q for q in listings if "labels=agent" in q) == [listings[0]]
    assert len(listings) == 3, listings
    # and once in the run, the closed issues of the scope still awaiting approval
    closed = [e["query"] for e in github.requests() if "state=closed" in e["query"]]
    assert closed == ["labels=agent%2Cjr2%3Aawaiting-approval&per_page=100&state=closed"]


def test_work_jira_searches_the_backlog_once_at_start(jira: FakeJira, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        jira.add_issue(f"item {i}", labels=["agent"])
    monkeypatch.setenv("JIRA_EMAIL", "bot@example.com")
    monkeypatch.setenv("JIRA_API_TOKEN", "test-token-123456")
    monkeypatch.delenv("JIRA_PAT", raising=False)
    monkeypatch.chdir(tmp_path)
    result = work(f"jira:{jira.url}", ["true"],
                  options=["--jql", "project = ENG AND labels = agent ORDER BY created", *FAST],
                  state=tmp_path / ".jr2", cap=1, timeout=60)
    assert result.exit_code == 0
    assert len(result.tally.done_ids) == 3
    log = jira.requests()
    start = before_first_write(log, lambda e: e["method"] != "GET"
                               and not e["path"].endswith(("/search", "/search/jql",
                                                           "/comment/list")))
    assert len(start) < len(log)
    searches = [e for e in start if e["path"].endswith(("/search", "/search/jql"))]
    full = [e for e in searches if "updated >=" not in str((e["body"] or {}).get("jql", ""))]
    assert len(full) == 1, [e["body"] for e in searches]


def _item(iid: str) -> SnapshotItem:
    return SnapshotItem(id=iid, title=iid)


def test_a_primed_reader_reads_no_snapshot_before_its_second_read() -> None:
    # a tracker with `snapshot()` only: the primed reading is used once, then read afresh
    tracker = MemoryTracker([MemoryItem("A")])
    calls: list[int] = []

    def snapshot() -> Snapshot:
        calls.append(1)
        return tracker.snapshot()

    reader = ReadyReader(snapshot, None, children_block=True, clock=lambda: 0.0)
    first = first_reading(tracker)
    reader.prime(first)
    assert reader.read().n_ready == 1 and calls == []
    assert reader.read().n_ready == 1 and calls == [1]


def test_a_primed_delta_reader_asks_for_a_delta_next() -> None:
    snap = Snapshot(source="s", items=[_item("A")], done_count=None)

    from jr2_sources import ReadsDeltas

    class Deltas(ReadsDeltas):
        name = "s"

        def __init__(self) -> None:
            self.asked: list[bool] = []

        def snapshot(self) -> Snapshot:
            raise AssertionError("a delta source's first reading is changes(full=True)")

        def changes(self, *, full: bool = False) -> Snapshot:
            self.asked.append(full)
            return snap

    src = Deltas()
    reader = ReadyReader(src.snapshot, src.changes, children_block=True, clock=lambda: 0.0)
    reader.prime(first_reading(src))
    assert src.asked == [True]
    assert reader.read().n_ready == 1 and src.asked == [True]
    reader.read()
    assert src.asked == [True, False]  # the next reading is a delta, counted from the primed one
