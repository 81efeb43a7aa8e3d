"""The dashboard issue's logic (jr2_sources.capabilities.dashboard) against an in-memory board:
merging, ticks, conditional and spaced writes, escaping, the size limit. The GitHub end of it is in
tests/trackers/github/test_github_dashboard.py."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from jr2_core.errors import ItemError
from jr2_sources.capabilities.dashboard.body import END, START, BrokenMarkers, merge, split, ticks
from jr2_sources.capabilities.dashboard.layout import render_section
from jr2_sources.capabilities.dashboard.model import PendingApproval
from jr2_sources.capabilities.dashboard.scope import hide_items
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.capabilities.dashboard.target import GITHUB
from jr2_sources.readyset import (
    BlockerRef,
    Claim,
    ReadySet,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class MemoryBoard:
    """A dashboard issue in memory: its body, the writes, the retries; `on_read` lets a test
    act as a person at the n-th read."""

    name = "memory:#7"
    item_id = "#7"

    def __init__(self, body: str = "") -> None:
        self.body = body
        self.reads = 0
        self.written: list[str] = []
        self.retried: list[str] = []
        self.on_read: Callable[[int], None] | None = None
        self.refuse: set[str] = set()

    def read(self) -> str:
        self.reads += 1
        if self.on_read is not None:
            self.on_read(self.reads)
        return self.body

    def write(self, body: str) -> None:
        self.written.append(body)
        self.body = body

    def retry(self, item_id: str) -> None:
        if item_id in self.refuse:
            raise ItemError(f"{item_id} is locked")
        self.retried.append(item_id)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def rs_of(*items: SnapshotItem, done: int | None = 0) -> ReadySet:
    return compute_ready_set(Snapshot("github:o/r", list(items), done), now=NOW)


def backlog(failed: bool = True) -> ReadySet:
    return rs_of(
        SnapshotItem("o/r#1", "ready one", url="https://github.com/o/r/issues/1"),
        SnapshotItem("o/r#2", "held", claim=Claim("r-1@host", NOW, NOW + timedelta(minutes=10))),
        SnapshotItem("o/r#3", "broke", failed="exit 1: boom" if failed else None),
        SnapshotItem("o/r#4", "waits", blockers=[BlockerRef("o/r#1", "open")]),
        SnapshotItem("o/r#5", "flaky", attempts=1, retry_after=NOW + timedelta(minutes=1)),
    )


def dashboard(board: MemoryBoard, clock: Clock | None = None, **kw: object) -> Dashboard:
    return Dashboard(board, clock=clock or Clock(), now=lambda: NOW, **kw)  # type: ignore[arg-type]


def tick(body: str, item_id: str) -> str:
    """`body` with the retry box of `item_id` ticked, as GitHub's task list does."""
    key = f"<!-- jr2:retry {item_id.encode().hex()} -->"
    lines = body.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip().endswith(key):
            lines[i] = line.replace("- [ ]", "- [x]", 1)
            return "".join(lines)
    raise AssertionError(f"no retry box for {item_id}")


# -- the body -------------------------------------------------------------------------------------


def test_the_section_is_appended_and_a_persons_text_around_it_is_kept_exactly() -> None:
    board = MemoryBoard("Our board.  \n\n* keep `me`\n")
    clock = Clock()
    dash = dashboard(board, clock)
    assert dash.update(backlog).wrote
    first = board.body
    assert first.startswith("Our board.  \n\n* keep `me`\n\n" + START)
    # a person writes above and below the section; the next change keeps their text exactly
    before, after = "Intro by a person\r\n<!-- their comment -->\n", "\n\nFooter 🙂 |a|b|\n"
    parts = split(first)
    board.body = before + START + (parts.section or "") + END + after
    clock.t += 60
    assert dash.update(lambda: backlog(failed=False)).wrote
    assert board.body.startswith(before + START) and board.body.endswith(END + after)


def test_markers_that_do_not_pair_up_write_nothing() -> None:
    for body in [f"a {START} b", f"{END} {START}", f"{START}{END}{START}{END}"]:
        board = MemoryBoard(body)
        step = dashboard(board).update(backlog)
        assert not step.wrote and step.why.startswith("broken") and board.written == []
        with pytest.raises(BrokenMarkers):
            split(body)


def test_the_body_is_written_once_and_not_again_while_nothing_changed() -> None:
    board = MemoryBoard()
    clock = Clock()
    dash = dashboard(board, clock)
    assert dash.update(backlog).wrote
    for _ in range(5):
        clock.t += 3600  # the interval is long past: only "nothing changed" keeps it quiet
        step = dash.update(backlog)
        assert (step.wrote, step.why) == (False, "unchanged")
    assert len(board.written) == 1


def test_writes_are_spaced_by_the_interval() -> None:
    board = MemoryBoard()
    clock = Clock()
    dash = dashboard(board, clock, interval=60.0)
    assert dash.update(backlog).wrote
    writes = [clock.t]
    state = False
    for _ in range(40):  # the backlog changes every 5 s for 200 s
        clock.t += 5
        state = not state
        step = dash.update(lambda s=state: backlog(failed=s))  # type: ignore[misc]
        if step.wrote:
            writes.append(clock.t)
        else:
            assert step.why in ("waiting", "unchanged")
    gaps = [b - a for a, b in itertools.pairwise(writes)]
    assert len(writes) >= 3 and min(gaps) >= 60.0, writes


def test_a_persons_edit_between_the_read_and_the_write_is_not_lost() -> None:
    board = MemoryBoard("Notes\n")

    def person(n: int) -> None:
        if n == 2:  # jr2's re-read just before writing: a person saved in between
            board.body = "Notes, edited by a person\n"

    board.on_read = person
    assert dashboard(board).update(backlog).wrote
    assert board.body.startswith("Notes, edited by a person\n\n" + START)
    assert len(board.written) == 1 and board.reads == 3


# -- ticks ----------------------------------------------------------------------------------------


def test_a_retry_tick_is_acted_on_once_and_the_line_redrawn() -> None:
    board = MemoryBoard()
    clock = Clock()
    dash = dashboard(board, clock, interval=10.0)
    dash.update(backlog)
    board.body = tick(board.body, "o/r#3")
    clock.t += 10
    step = dash.update(backlog, fresh=lambda: backlog(failed=False))
    assert step.wrote and step.acted == ["retried o/r#3"] and board.retried == ["o/r#3"]
    assert [t for t in ticks(split(board.body).section) if t.ticked] == []
    assert "o/r#3" not in {t.item_id for t in ticks(split(board.body).section)}
    clock.t += 10
    assert dash.update(lambda: backlog(failed=False)).why == "unchanged"
    assert board.retried == ["o/r#3"]


def test_a_tick_the_tracker_refuses_is_kept_ticked_for_the_next_update() -> None:
    board = MemoryBoard()
    clock = Clock()
    dash = dashboard(board, clock, interval=10.0)
    dash.update(backlog)
    board.body = tick(board.body, "o/r#3")
    board.refuse.add("o/r#3")
    clock.t += 10
    step = dash.update(backlog)
    assert step.acted == [] and [t.item_id for t in ticks(split(board.body).section)
                                  if t.ticked] == ["o/r#3"]
    board.refuse.clear()
    clock.t += 10
    assert dash.update(backlog, fresh=lambda: backlog(failed=False)).acted == ["retried o/r#3"]


def test_a_tick_for_an_item_that_is_not_failed_or_not_in_scope_does_nothing() -> None:
    outside = rs_of(SnapshotItem("o/r#9", "other scope", failed="x", in_scope=False),
                    SnapshotItem("o/r#1", "fine"))
    key9 = f"<!-- jr2:retry {b'o/r#9'.hex()} -->"
    key1 = f"<!-- jr2:retry {b'o/r#1'.hex()} -->"
    board = MemoryBoard(f"{START}\n- [x] retry {key9}\n- [x] retry {key1}\n{END}")
    step = dashboard(board).update(lambda: outside)
    assert board.retried == [] and step.acted == [] and step.wrote
    assert "o/r#9" not in board.body.split(START)[1]  # never drawn: outside the scope


def test_an_approve_tick_answers_a_waiting_gate_through_the_gate_desk() -> None:
    class Desk:
        def __init__(self) -> None:
            self.approved: list[tuple[str, str]] = []

        def pending(self, rs: ReadySet) -> list[PendingApproval]:
            return [] if self.approved else [PendingApproval("o/r#4", "deploy", NOW, "ship?")]

        def approve(self, item_id: str, gate: str) -> bool:
            self.approved.append((item_id, gate))
            return True

    desk = Desk()
    board = MemoryBoard()
    clock = Clock()
    dash = dashboard(board, clock, interval=10.0, gates=desk)
    dash.update(backlog)
    section = split(board.body).section or ""
    assert "### Awaiting approval (1)" in section and "**approve** `deploy`" in section
    board.body = board.body.replace("- [ ] **approve**", "- [x] **approve**")
    clock.t += 10
    step = dash.update(backlog)
    assert desk.approved == [("o/r#4", "deploy")] and step.acted == ["approved deploy for o/r#4"]
    assert "### Awaiting approval (0)" in board.body


# -- what is drawn --------------------------------------------------------------------------------


def test_every_state_is_drawn_with_holder_lease_reason_and_retry_time() -> None:
    section = render_section(backlog(), budget=GITHUB.limit)
    for text in ["### Failed (1)", "exit 1: boom", "### In progress (1)", "r-1@\u200bhost",
                 "2026-12-01T09:10:00Z", "### Waiting for retry (1)", "2026-12-01T09:01:00Z",
                 "### Ready (1)", "### Blocked (1)", "waits on `o/r#1`", "```mermaid"]:
        assert text in section, text


def test_titles_cannot_break_a_table_draw_a_box_or_forge_a_key() -> None:
    evil = ("x | y\n- [x] **retry** <!-- jr2:retry " + b"o/r#1".hex() + " -->\x1b[2J"
            " @here #1 GH-3 gh-4 ]( <script>")
    rs = rs_of(SnapshotItem("o/r#1", evil), SnapshotItem("o/r#2", evil, failed=evil),
               SnapshotItem("o/r#3", evil, blockers=[BlockerRef("o/r#1", "open"),
                                                     BlockerRef("x|y#`1", "open")]))
    section = render_section(rs, budget=GITHUB.limit)
    assert [(t.item_id, t.ticked) for t in ticks(section)] == [("o/r#2", False)]
    assert "\x1b" not in section and "@here" not in section and "<script>" not in section
    assert "GH-3" not in section and "gh-4" not in section and "GH\u200b-3" in section
    for line in section.splitlines():
        if line.startswith("| `o/r#"):
            cells = line.replace("\\|", "").count("|")
            assert cells in (5, 4), line  # ready: 4 columns (5 pipes), blocked: 3 (4 pipes)


def test_a_huge_backlog_truncates_within_githubs_limit_and_says_so() -> None:
    items = [SnapshotItem(f"o/r#{i}", "t" * 300, labels=["agent"] * 3,
                          failed=("f" * 300) if i % 3 == 0 else None,
                          blockers=[BlockerRef(f"o/r#{i - 1}", "open")] if i % 3 == 1 else [])
             for i in range(1, 20_001)]
    rs = rs_of(*items)
    person = "A person's long preface. " * 800  # 20,000 characters outside the section
    board = MemoryBoard(person)
    assert dashboard(board).update(lambda: rs).wrote
    assert len(board.body) <= GITHUB.limit and board.body.startswith(person)
    section = split(board.body).section or ""
    assert "### Failed (6,666)" in section and "- … and " in section and "more" in section
    assert "| … and " in section


def test_a_body_with_no_room_left_gets_a_one_line_section_or_no_write() -> None:
    board = MemoryBoard("x" * (GITHUB.limit - 400))
    assert dashboard(board).update(backlog).wrote
    assert len(board.body) <= GITHUB.limit and "does not fit" in board.body
    board = MemoryBoard("x" * (GITHUB.limit - 50))
    step = dashboard(board).update(backlog)
    assert not step.wrote and step.why.startswith("full") and board.written == []


def test_merge_appends_to_an_empty_body() -> None:
    assert merge(split(""), "hi") == f"{START}\nhi\n{END}\n"


def test_the_dashboard_issue_is_reported_outside_the_scope_once_hidden() -> None:
    class T:
        def snapshot(self) -> Snapshot:
            return Snapshot("github:o/r", [SnapshotItem("o/r#7"), SnapshotItem("o/r#1")])

    t = T()
    hide_items(t, ["o/r#7"])
    assert [(i.id, i.in_scope) for i in t.snapshot().items] == [("o/r#7", False),
                                                                ("o/r#1", True)]


def test_a_body_saved_with_crlf_by_githubs_editor_is_not_rewritten_for_that_alone() -> None:
    board = MemoryBoard("Notes\n")
    clock = Clock()
    dash = dashboard(board, clock)
    assert dash.update(backlog).wrote
    board.body = board.body.replace("\n", "\r\n")  # a person saved it in the web editor
    clock.t += 3600
    assert dash.update(backlog).why == "unchanged" and len(board.written) == 1
