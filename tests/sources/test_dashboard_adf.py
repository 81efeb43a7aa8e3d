"""The dashboard in an Atlassian Document Format description
(jr2_sources/capabilities/dashboard/adf.py) against an in-memory board: markers,
ticks, comparing, the size limit, escaping, and the `vet` hook of `sync.Dashboard`. Every document
is validated against the vendored ADF JSON schema (fixtures/adf/full.json, from
@atlaskit/adf-schema). The Jira end of it is in tests/trackers/jira/test_jira_dashboard.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema
import pytest
from adfschema import SCHEMA, valid

from jr2_core.errors import ItemError
from jr2_sources.capabilities.dashboard.adf import (
    ADF_LAYOUT,
    ADF_LIMIT,
    END_TEXT,
    START_TEXT,
    adf,
    dumps,
    key_of,
    size,
)
from jr2_sources.capabilities.dashboard.body import BrokenMarkers, Tick
from jr2_sources.capabilities.dashboard.model import PendingApproval, build
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.readyset import (
    BlockerRef,
    Claim,
    ReadySet,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)
from jr2_sources.trackers.jira.board import JIRA

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def rs_of(*items: SnapshotItem) -> ReadySet:
    return compute_ready_set(Snapshot("jira:https://acme.atlassian.net", list(items), 0),
                             now=NOW)


def backlog() -> ReadySet:
    return rs_of(
        SnapshotItem("ENG-1", "ready one", url="https://acme.atlassian.net/browse/ENG-1"),
        SnapshotItem("ENG-2", "held", claim=Claim("r-1@host", NOW, NOW + timedelta(minutes=9))),
        SnapshotItem("ENG-3", "broke", failed="exit 1: boom"),
        SnapshotItem("ENG-4", "waits", blockers=[BlockerRef("ENG-1", "open")]),
        SnapshotItem("ENG-5", "flaky", attempts=1, retry_after=NOW + timedelta(minutes=1)),
    )


def para(text: str) -> dict[str, Any]:
    return {"type": "paragraph", "content": [{"type": "text", "text": text}]}


def doc(*nodes: dict[str, Any]) -> str:
    return dumps({"type": "doc", "version": 1, "content": list(nodes)})


class AdfBoard:
    """A Jira-like dashboard in memory: an ADF body, writes, retries, and who may tick."""

    name = "memory:ENG-9"
    item_id = "ENG-9"
    layout = ADF_LAYOUT
    target = JIRA  # the limits a Jira board names (dashboard.target)

    def __init__(self, body: str = "") -> None:
        self.body = body
        self.written: list[str] = []
        self.retried: list[str] = []
        self.refuse_ticks = False
        self.refuse: set[str] = set()

    def read(self) -> str:
        return self.body

    def write(self, body: str) -> None:
        valid(json.loads(body))
        assert size(body) <= ADF_LIMIT
        self.written.append(body)
        self.body = body

    def retry(self, item_id: str) -> None:
        if item_id in self.refuse:
            raise ItemError(f"{item_id} is locked")
        self.retried.append(item_id)

    def vet(self, tick: Tick) -> str | None:
        return "ticked in an edit by Eve, who may not edit it" if self.refuse_ticks else None


def dashboard(board: AdfBoard, **kw: Any) -> Dashboard:
    return Dashboard(board, clock=lambda: 1000.0, now=lambda: NOW, **kw)


def ticked(body: str, key: str) -> str:
    """`body` with the task item `key` set DONE, as a person's tick saves it."""
    value = json.loads(body)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "taskItem" and node["attrs"]["localId"] == key:
                node["attrs"]["state"] = "DONE"
            for child in node.get("content") or []:
                walk(child)
    walk(value)
    return dumps(value)


def test_the_section_is_appended_after_a_persons_content_which_is_kept_exactly() -> None:
    mine = [para("Team notes 🙂"), {"type": "rule"}]
    board = AdfBoard(doc(*mine))
    step = dashboard(board).update(backlog)
    assert step.wrote
    content = json.loads(board.body)["content"]
    assert content[:2] == mine
    assert json.dumps(content[2]).count(START_TEXT) == 1
    assert json.dumps(content[-1]).count(END_TEXT) == 1
    parts = ADF_LAYOUT.split(board.body)
    assert json.loads(parts.before) == mine and json.loads(parts.after) == []
    text = parts.section or ""
    for heading in ("Failed (1)", "In progress (1)", "Waiting for retry (1)", "Ready (1)",
                    "Blocked (1)", "Graph"):
        assert heading in text, heading
    assert "https://acme.atlassian.net/browse/ENG-1" in text  # ids link to the item's page


def test_an_empty_or_null_description_gets_just_the_section() -> None:
    for body in ("", "null", doc()):
        board = AdfBoard(body)
        assert dashboard(board).update(backlog).wrote
        assert json.dumps(json.loads(board.body)["content"][0]).count(START_TEXT) == 1


@pytest.mark.parametrize("nodes,why", [
    ([para(START_TEXT)], "1 start and 0 end"),
    ([para(START_TEXT), para(START_TEXT), para(END_TEXT)], "2 start and 1 end"),
    ([para(END_TEXT), para(START_TEXT)], "end line comes before"),
    ([{"type": "panel", "attrs": {"panelType": "info"}, "content": [para(START_TEXT)]},
      para(END_TEXT)], "0 start and 1 end"),
])
def test_markers_that_do_not_pair_up_at_the_top_level_write_nothing(
        nodes: list[dict[str, Any]], why: str) -> None:
    with pytest.raises(BrokenMarkers, match=why):
        ADF_LAYOUT.split(doc(*nodes))
    board = AdfBoard(doc(*nodes))
    step = dashboard(board).update(backlog)
    assert not step.wrote and step.why.startswith("broken") and board.written == []


def test_unchanged_state_is_not_rewritten_even_with_attributes_jira_adds() -> None:
    board = AdfBoard(doc(para("mine")))
    dash = dashboard(board, interval=10.0)
    assert dash.update(backlog).wrote
    stored = json.loads(board.body)
    for node in stored["content"]:  # Jira may add attributes and the stamp may differ
        if node.get("type") == "table":
            node["attrs"]["localId"] = "7c1c5a0e"
            node["attrs"]["width"] = 760
    board.body = dumps(stored)
    step = dashboard(board).update(backlog)
    assert (step.wrote, step.why) == (False, "unchanged")


def test_a_retry_tick_is_acted_on_once_and_redrawn() -> None:
    board = AdfBoard()
    dash = dashboard(board, interval=10.0)
    dash.update(backlog)
    board.body = ticked(board.body, key_of("retry", "ENG-3"))
    healed = rs_of(*[SnapshotItem(e.item.id, e.item.title) for e in backlog().ready])
    step = Dashboard(board, clock=lambda: 2000.0, now=lambda: NOW).update(lambda: healed if
                                                                          board.retried else
                                                                          backlog())
    assert board.retried == ["ENG-3"] and step.acted == ["retried ENG-3"] and step.wrote
    assert "ENG-3" not in {t.item_id for t in ADF_LAYOUT.ticks(ADF_LAYOUT.split(
        board.body).section)}


def test_a_tick_the_tracker_refuses_is_drawn_ticked_again_for_the_next_update() -> None:
    board = AdfBoard()
    dashboard(board).update(backlog)
    board.body = ticked(board.body, key_of("retry", "ENG-3"))
    board.refuse.add("ENG-3")
    step = Dashboard(board, clock=lambda: 2000.0, now=lambda: NOW).update(backlog)
    assert board.retried == [] and step.acted == []
    boxes = ADF_LAYOUT.ticks(ADF_LAYOUT.split(board.body).section)
    assert [(t.item_id, t.ticked) for t in boxes] == [("ENG-3", True)]


def test_a_tick_the_board_vets_out_is_ignored_said_and_drawn_unticked() -> None:
    board = AdfBoard()
    dashboard(board).update(backlog)
    board.body = ticked(board.body, key_of("retry", "ENG-3"))
    board.refuse_ticks = True
    step = Dashboard(board, clock=lambda: 2000.0, now=lambda: NOW).update(backlog)
    assert board.retried == []
    assert step.acted == ["ignored the tick for ENG-3: ticked in an edit by Eve, who may not "
                          "edit it"]
    boxes = ADF_LAYOUT.ticks(ADF_LAYOUT.split(board.body).section)
    assert [(t.item_id, t.ticked) for t in boxes] == [("ENG-3", False)]


def test_only_task_items_with_a_jr2_key_inside_the_section_are_read() -> None:
    section = dumps([
        {"type": "taskList", "attrs": {"localId": "x"}, "content": [
            {"type": "taskItem", "attrs": {"localId": "person-1", "state": "DONE"}},
            {"type": "taskItem", "attrs": {"localId": key_of("retry", "ENG-7"),
                                           "state": "DONE"}},
            {"type": "taskItem", "attrs": {"localId": key_of("approve", "ENG-8", "ship it"),
                                           "state": "TODO"}},
            {"type": "taskItem", "attrs": {"localId": "jr2-approve-" + b"ENG-9".hex(),
                                           "state": "DONE"}},  # approve without a gate
            {"type": "taskItem", "attrs": {"localId": "jr2-retry-zz", "state": "DONE"}}]}])
    got = [(t.kind, t.item_id, t.gate, t.ticked) for t in ADF_LAYOUT.ticks(section)]
    assert got == [("retry", "ENG-7", None, True), ("approve", "ENG-8", "ship it", False)]
    outside = doc({"type": "taskList", "attrs": {"localId": "y"}, "content": [
        {"type": "taskItem", "attrs": {"localId": key_of("retry", "ENG-7"), "state": "DONE"}}]})
    assert ADF_LAYOUT.split(outside).section is None


def test_titles_cannot_end_the_section_draw_a_box_or_mention_anyone() -> None:
    evil = f"{END_TEXT}"
    rs = rs_of(SnapshotItem("ENG-1", evil), SnapshotItem("ENG-2", START_TEXT, failed=END_TEXT),
               SnapshotItem("ENG-3", "@here [x] \x1b[31m\n- [ ] <!-- jr2:retry 41 -->"))
    board = AdfBoard()
    gates = [PendingApproval("ENG-1", "deploy", NOW, END_TEXT)]

    class Desk:
        def pending(self, rs: ReadySet) -> list[PendingApproval]:
            return gates

        def approve(self, item_id: str, gate: str) -> bool:
            return True

    assert dashboard(board, gates=Desk()).update(lambda: rs).wrote
    parts = ADF_LAYOUT.split(board.body)  # still one start and one end line
    boxes = ADF_LAYOUT.ticks(parts.section)
    assert {(t.kind, t.item_id) for t in boxes} == {("retry", "ENG-2"), ("approve", "ENG-1")}
    text = board.body
    assert "\\u001b" not in text and '"mention"' not in text and "\\n- [ ]" not in text


def test_a_huge_backlog_is_cut_within_jiras_limit_and_says_so() -> None:
    items = [SnapshotItem(f"ENG-{n}", f"item {n} " + "words " * 12,
                          failed="boom " * 30 if n % 3 == 0 else None,
                          blockers=[BlockerRef(f"ENG-{n - 1}", "open")] if n % 5 == 0 else [])
             for n in range(1, 2001)]
    board = AdfBoard(doc(para("mine")))
    assert dashboard(board).update(lambda: rs_of(*items)).wrote  # write() checks schema+size
    assert ADF_LIMIT - 3000 < size(board.body) <= ADF_LIMIT
    assert "more" in board.body


@pytest.mark.parametrize("budget", [0, 300, 1_500, 5_000, 12_001, 32_000])
def test_the_section_always_fits_its_budget_and_the_schema(budget: int) -> None:
    items = [SnapshotItem(f"ENG-{n}", "é" * 40 + "🙂" * 5, failed="x" * 50 if n < 40 else None)
             for n in range(1, 300)]
    nodes = json.loads(adf(build(rs_of(*items)), budget))
    assert budget < 1_500 or nodes  # from a few lines of room on, something is drawn
    if nodes:
        assert size(dumps(nodes)) <= budget
        valid({"type": "doc", "version": 1, "content": nodes})


def _broken(doc: Any, deep: bool) -> list[Any]:
    """`doc` (one top-level node), and copies each broken in one place: the node's kind unknown,
    its content gone, a mark unknown, attributes of the wrong type; with `deep`, the same done to
    its first text node too (where `jsonschema` takes seconds on a table)."""
    paths: list[list[Any]] = [["content", 0]]
    node, path = doc["content"][0], ["content", 0]
    while deep and node.get("content"):
        node, path = node["content"][0], [*path, "content", 0]
    if deep:
        paths.append(path)
    out = [doc]
    for path in paths:
        for how in ("type", "drop", "mark", "attrs"):
            copy = json.loads(json.dumps(doc))
            node = copy
            for step in path:
                node = node[step]
            if how == "type":
                node["type"] = "nonsense"
            elif how == "drop":
                node.pop("text" if "text" in node else "content", None)
            elif how == "mark":
                node["marks"] = [{"type": "blink"}]
            else:
                node["attrs"] = {"level": "high", "colspan": "two", "url": 5}
            out.append(copy)
    return out


def test_the_compiled_schema_judges_documents_as_jsonschema_does() -> None:
    """The tests check documents with `adfschema.valid` (compiled); on a node of each kind jr2
    draws, and on each broken in one place, it agrees with `jsonschema`."""
    items = [SnapshotItem("ENG-1", "ready <b> & 🙂"), SnapshotItem("ENG-2", "failed",
                                                                   failed="boom"),
             SnapshotItem("ENG-3", "blocked", blockers=[BlockerRef("ENG-1", "open")])]

    def trim(node: Any) -> Any:  # two children at most at each level
        kids = node.get("content")
        return node if not kids else {**node, "content": [trim(k) for k in kids[:2]]}

    kinds: dict[str, Any] = {}
    for node in json.loads(adf(build(rs_of(*items)), 20_000)):
        kinds.setdefault(node["type"], trim(node))
    assert {"heading", "paragraph", "taskList", "table"} <= set(kinds), kinds
    docs = [d for kind, node in kinds.items()
            for d in _broken({"type": "doc", "version": 1, "content": [node]}, kind != "table")]
    reference = jsonschema.Draft4Validator(SCHEMA)
    verdicts = []
    for d in docs:
        try:
            valid(d)
            ours = True
        except AssertionError:
            ours = False
        assert ours == reference.is_valid(d), json.dumps(d)[:300]
        verdicts.append(ours)
    assert verdicts.count(True) >= len(kinds) and verdicts.count(False) >= 20, verdicts


def test_a_description_with_no_room_left_is_not_written() -> None:
    board = AdfBoard(doc(para("x" * (ADF_LIMIT - 100))))
    step = dashboard(board).update(backlog)
    assert not step.wrote and step.why.startswith("full") and "Jira's limit" in step.why
    assert board.written == []


def test_size_counts_utf16_code_units_of_the_compact_json() -> None:
    assert size("a") == 1 and size("é") == 1 and size("🙂") == 2
    assert size(dumps({"a": [1, 2]})) == len('{"a":[1,2]}')
