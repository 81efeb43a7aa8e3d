"""The read-only dashboard in Jira wiki markup (Data Center;
jr2_sources/capabilities/dashboard/wiki.py) against an in-memory board: anchors as
markers, a person's text kept, escaping, no boxes, the size limit. The Jira end of it is in
tests/trackers/jira/test_jira_dashboard.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jr2_sources.capabilities.dashboard.adf import ADF_LIMIT, size
from jr2_sources.capabilities.dashboard.body import BrokenMarkers
from jr2_sources.capabilities.dashboard.model import PendingApproval, build
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.capabilities.dashboard.wiki import (
    WIKI_END,
    WIKI_LAYOUT,
    WIKI_START,
    wiki,
    wiki_text,
)
from jr2_sources.readyset import (
    BlockerRef,
    ReadySet,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)
from jr2_sources.trackers.jira.board import JIRA

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def rs_of(*items: SnapshotItem) -> ReadySet:
    return compute_ready_set(Snapshot("jira:https://jira.acme.example", list(items), 0), now=NOW)


def backlog() -> ReadySet:
    return rs_of(SnapshotItem("ENG-1", "ready one", url="https://jira.acme.example/browse/ENG-1"),
                 SnapshotItem("ENG-3", "broke", failed="exit 1: boom"),
                 SnapshotItem("ENG-4", "waits", blockers=[BlockerRef("ENG-1", "open")]),
                 SnapshotItem("ENG-5", "flaky", attempts=1,
                              retry_after=NOW + timedelta(minutes=1)))


class WikiBoard:
    name = "memory:ENG-9"
    item_id = "ENG-9"
    layout = WIKI_LAYOUT
    target = JIRA  # the limits a Jira board names (dashboard.target)

    def __init__(self, body: str = "") -> None:
        self.body = body
        self.written: list[str] = []

    def read(self) -> str:
        return self.body

    def write(self, body: str) -> None:
        assert size(body) <= ADF_LIMIT
        self.written.append(body)
        self.body = body

    def retry(self, item_id: str) -> None:
        raise AssertionError("a read-only dashboard never retries")


def test_the_section_sits_between_two_anchors_after_a_persons_text() -> None:
    board = WikiBoard("h2. Team notes\r\n* mine")
    dash = Dashboard(board, clock=lambda: 0.0, now=lambda: NOW)
    assert dash.update(backlog).wrote
    assert board.body.startswith("h2. Team notes\r\n* mine\n\n" + WIKI_START)
    assert board.body.rstrip("\n").endswith(WIKI_END)
    text = WIKI_LAYOUT.split(board.body).section or ""
    for heading in ("h3. Failed (1)", "h3. Ready (1)", "h3. Blocked (1)",
                    "h3. Waiting for retry (1)", "h3. Graph"):
        assert heading in text
    assert "[ENG-1|https://jira.acme.example/browse/ENG-1]" in text
    assert WIKI_LAYOUT.ticks(text) == []
    again = Dashboard(board, clock=lambda: 100.0, now=lambda: NOW + timedelta(hours=1))
    assert again.update(backlog).why == "unchanged"  # the stamp alone never rewrites


def test_anchors_that_do_not_pair_up_write_nothing() -> None:
    for body in (WIKI_START, f"{WIKI_END}\n{WIKI_START}", f"{WIKI_START}{WIKI_START}{WIKI_END}"):
        with pytest.raises(BrokenMarkers):
            WIKI_LAYOUT.split(body)
        board = WikiBoard(body)
        step = Dashboard(board, clock=lambda: 0.0, now=lambda: NOW).update(backlog)
        assert step.why.startswith("broken") and board.written == []


def test_titles_and_reasons_cannot_open_markup_or_mention_anyone() -> None:
    nasty = "[~admin] |x| {anchor:jr2-dashboard-end} *b* _i_ -s- !img.png! #1 \x1b\n h1. y"
    assert wiki_text(nasty).count("\\") >= 16 and "\n" not in wiki_text(nasty)
    rs = rs_of(SnapshotItem("ENG-2", nasty, failed=nasty))
    text = wiki(build(rs, [PendingApproval("ENG-2", "ship", NOW, nasty)]), 10_000)
    assert "[~" not in text and WIKI_END not in text and "\x1b" not in text
    assert "{{/jr2 approve NAME}}" in text  # how to answer a gate here
    assert "h3. Awaiting approval (1)" in text


def test_a_huge_backlog_is_cut_within_jiras_limit() -> None:
    items = [SnapshotItem(f"ENG-{n}", "é words 🙂 " * 8, failed="boom" if n % 4 == 0 else None)
             for n in range(1, 3001)]
    board = WikiBoard("mine")
    assert Dashboard(board, clock=lambda: 0.0, now=lambda: NOW).update(
        lambda: rs_of(*items)).wrote
    assert ADF_LIMIT - 3000 < size(board.body) <= ADF_LIMIT and "more_|" in board.body
