"""The dashboard in an Atlassian Document Format (ADF) document: Jira Cloud's description.

The body is the document as compact JSON (`dumps`); `BodyParts` holds JSON lists of top-level
nodes. jr2's part is fenced by two top-level paragraphs whose whole text is `START_TEXT` /
`END_TEXT` (marks ignored); no markers: the section is appended; markers that do not pair up
are `BrokenMarkers`. The section (`adf`) draws **Failed** and **Awaiting approval** as
`taskList`s whose items' `localId` is jr2's key (`jr2-retry-HEX`, `jr2-approve-HEX-HEX`), the
other parts as `table`s and the graph as a mermaid `codeBlock`; only keyed items inside the
section are read, their text never. Text is data in ADF, not markup: a title cannot draw a box,
end the section or mention anyone; control characters are blanked. Comparing reduces the section
to what jr2 drew, so attributes Jira adds cause no rewrite. Size: the compact JSON in UTF-16 code
units, at most `ADF_LIMIT`. Every document jr2 writes is validated against the vendored schema
(fixtures/adf/) in the tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from jr2_sources.readyset import ReadySet, iso_utc
from jr2_sources.report import _one_line, describe_reasons

from .body import BodyParts, BrokenMarkers, Tick, TickKind, keyed_tick
from .layout import Layout
from .model import MAX_REFS, Cell, Code, Part, Row, Section, Why, build, lay_out

__all__ = ["ADF_LAYOUT", "ADF_LIMIT", "END_TEXT", "START_TEXT", "AdfLayout", "adf", "dumps",
           "empty_doc", "key_of", "loads_doc", "size"]

Node = dict[str, Any]

ADF_LIMIT = 32_767
"""Jira's default limit of a text field, in characters (see the notes); the Jira board's
target (`trackers/jira/board.py`, `JIRA`) names it as its limit."""

START_TEXT = "jr2 dashboard: kept up to date by jr2 down to its end line; write outside it"
END_TEXT = "end of the jr2 dashboard"
_STAMP = "jr2: last changed "
_KEY = re.compile(r"\Ajr2-(retry|approve)-([0-9a-f]+)(?:-([0-9a-f]+))?\Z")


def empty_doc() -> Node:
    return {"type": "doc", "version": 1, "content": []}


def loads_doc(body: str) -> Node:
    """The document of a body ("" or anything but a doc: an empty document)."""
    try:
        doc = json.loads(body) if body else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("type") != "doc":
        return empty_doc()
    if not isinstance(doc.get("content"), list):
        doc = {**doc, "content": []}
    return doc


def _text_of(node: Any) -> str:
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "text":
        return str(node.get("text") or "")
    return "".join(_text_of(c) for c in node.get("content") or [])


def _marker(node: Any) -> str | None:
    if isinstance(node, dict) and node.get("type") == "paragraph":
        text = _text_of(node).strip()
        if text in (START_TEXT, END_TEXT):
            return text
    return None


def _walk(nodes: Sequence[Any]) -> Iterator[Node]:
    for node in nodes:
        if isinstance(node, dict):
            yield node
            yield from _walk(node.get("content") or [])


def _reduce(node: Any) -> Any:
    """What of a node is compared (see the notes)."""
    if not isinstance(node, dict):
        return None
    out: dict[str, Any] = {"t": node.get("type")}
    if "text" in node:
        out["x"] = node.get("text")
    raw = node.get("attrs")
    attrs: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if node.get("type") == "taskItem":
        out["a"] = [attrs.get("localId"), attrs.get("state")]
    elif node.get("type") == "heading":
        out["a"] = attrs.get("level")
    marks = [(m.get("type"), (m.get("attrs") or {}).get("href"))
             for m in node.get("marks") or [] if isinstance(m, dict)]
    if marks:
        out["m"] = sorted(marks, key=str)
    if node.get("content"):
        out["c"] = [_reduce(c) for c in node["content"]]
    return out


def stamp_node(now: datetime) -> Node:
    return {"type": "paragraph", "content": [
        {"type": "text", "text": f"{_STAMP}{iso_utc(now.replace(microsecond=0))}",
         "marks": [{"type": "em"}]}]}


def _is_stamp(node: Any) -> bool:
    return (isinstance(node, dict) and node.get("type") == "paragraph"
            and _text_of(node).startswith(_STAMP))


def marker_node(text: str) -> Node:
    return {"type": "paragraph", "content": [{"type": "text", "text": text,
                                              "marks": [{"type": "em"}]}]}


class AdfLayout(Layout):
    """The dashboard in an ADF description (see the module notes)."""

    def split(self, body: str) -> BodyParts:
        nodes = loads_doc(body)["content"]
        found = [(i, m) for i, n in enumerate(nodes) if (m := _marker(n)) is not None]
        starts = [i for i, m in found if m == START_TEXT]
        ends = [i for i, m in found if m == END_TEXT]
        if not starts and not ends:
            return BodyParts(dumps(nodes), None, "[]")
        if len(starts) != 1 or len(ends) != 1:
            raise BrokenMarkers(f"{len(starts)} start and {len(ends)} end lines (want one of "
                                "each)")
        i, j = starts[0], ends[0]
        if j < i:
            raise BrokenMarkers("the end line comes before the start line")
        return BodyParts(dumps(nodes[:i]), dumps(nodes[i + 1:j]), dumps(nodes[j + 1:]))

    def ticks(self, section: str | None) -> list[Tick]:
        out: list[Tick] = []
        for node in _walk(_nodes(section)):
            attrs = node.get("attrs")
            if node.get("type") != "taskItem" or not isinstance(attrs, dict):
                continue
            key = _KEY.match(str(attrs.get("localId") or ""))
            if key is not None and (tick := keyed_tick(key, attrs.get("state") == "DONE")):
                out.append(tick)
        return out

    def core(self, section: str) -> str:
        return dumps([_reduce(n) for n in _nodes(section) if not _is_stamp(n)])

    def render(self, rs: ReadySet, parts: BodyParts, *, gates: Sequence[Any],
               keep: set[str], now: datetime, limit: int) -> str:
        room = limit - size(self.merge(parts, "[]", now)) - 2
        text = adf(build(rs, gates, keep), room)
        return "" if text == "[]" else text

    def merge(self, parts: BodyParts, section: str, now: datetime) -> str:
        block = [marker_node(START_TEXT), stamp_node(now), *_nodes(section),
                 marker_node(END_TEXT)]
        content = [*_nodes(parts.before), *block, *_nodes(parts.after)]
        return dumps({"type": "doc", "version": 1, "content": content})

    def size(self, body: str) -> int:
        return size(body)


def _nodes(text: str | None) -> list[Any]:
    try:
        nodes = json.loads(text) if text else []
    except ValueError:
        return []
    return nodes if isinstance(nodes, list) else []


ADF_LAYOUT = AdfLayout()


def dumps(value: Any) -> str:
    """Compact JSON, as jr2 sends it and counts it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def size(text: str) -> int:
    """`text`'s length in UTF-16 code units (how Java, and so Jira, counts characters)."""
    return len(text.encode("utf-16-le")) // 2


def key_of(kind: TickKind, item_id: str, gate: str | None = None) -> str:
    """The `localId` of a box jr2 draws."""
    parts = ["jr2", kind, item_id.encode().hex()]
    if gate is not None:
        parts.append(gate.encode().hex())
    return "-".join(parts)

_STRONG: Node = {"type": "strong"}
_EM: Node = {"type": "em"}
_CODE: Node = {"type": "code"}


def _text(text: str, *marks: Node) -> Node:
    node: Node = {"type": "text", "text": _one_line(text) or " "}
    if marks:
        node["marks"] = list(marks)
    return node


def _para(*inline: Node) -> Node:
    return {"type": "paragraph", "content": list(inline)} if inline else {"type": "paragraph"}


def _heading(level: int, *inline: Node) -> Node:
    return {"type": "heading", "attrs": {"level": level}, "content": list(inline)}


def _cell_text(c: Cell) -> Node:
    if isinstance(c, Why):
        return _text(describe_reasons(c.reasons, _one_line, _one_line, MAX_REFS))
    return _text(c, _CODE) if isinstance(c, Code) else _text(c)


def _item(r: Row) -> Node:
    """An item's id in code, linked to its page when it has a url."""
    if r.url and re.match(r"https?://", r.url):
        return _text(r.item_id, _CODE, {"type": "link", "attrs": {"href": _one_line(r.url)}})
    return _text(r.item_id, _CODE)


def _task(r: Row) -> Node:
    title = [_text(f" {r.title}")] if r.title else []
    if r.box == "retry":
        inline = [_text("retry ", _STRONG), _item(r), *title, _text(f": {r.cells[0]}")]
    else:
        gate, reason, since = r.cells
        inline = [_text("approve ", _STRONG), _cell_text(gate), _text(" for "), _item(r), *title,
                  *([_text(f": {reason}")] if reason else []),
                  *([_text(f" (since {since})")] if since else [])]
    key = key_of(r.box or "approve", r.item_id, r.gate)
    return {"type": "taskItem", "attrs": {"localId": key, "state": "DONE" if r.ticked else "TODO"},
            "content": inline}


def _cell(*inline: Node, header: bool = False) -> Node:
    return {"type": "tableHeader" if header else "tableCell", "content": [_para(*inline)]}


def _row(cells: list[Node]) -> Node:
    return {"type": "tableRow", "content": cells}


def _table_row(r: Row) -> Node:
    return _row([_cell(_item(r)), _cell(_text(r.title)), *[_cell(_cell_text(c)) for c in r.cells]])


def _block(title: str, intro: list[Node], total: int, rows: Iterator[Node],
           wrap: Callable[[list[Node], Node | None], list[Node]], budget: int,
           more: Callable[[int], Node]) -> str:
    """A part (`title (total)` heading, `intro`, then `wrap(rows, more line)`) as JSON within
    `budget`: rows are built only until the budget is overrun; the cut is said by `more(n)`."""
    heading = _heading(3, _text(f"{title} ({total:,})"))
    if total == 0:
        return dumps([heading, _para(_text("none", _EM))])
    head = [heading, *intro]
    used = size(dumps([*head, *wrap([], None)]))
    kept: list[Node] = []
    for row in rows:
        kept.append(row)
        used += size(dumps(row)) + 1
        if used > budget:
            break
    if len(kept) == total:
        whole = dumps([*head, *wrap(kept, None)])
        if size(whole) <= budget:
            return whole
    while True:
        out = dumps([*head, *wrap(kept, more(total - len(kept)))])
        if size(out) <= budget or not kept:
            return out
        kept.pop()


def _task_list(name: str) -> Callable[[list[Node], Node | None], list[Node]]:
    def wrap(items: list[Node], more: Node | None) -> list[Node]:
        out = [{"type": "taskList", "attrs": {"localId": f"jr2-{name}"}, "content": items}] \
            if items else []
        return out + ([more] if more is not None else [])
    return wrap


def _table(head: Sequence[str]) -> Callable[[list[Node], Node | None], list[Node]]:
    def wrap(rows: list[Node], more: Node | None) -> list[Node]:
        header = _row([_cell(_text(h), header=True) for h in head])
        tail = [more] if more is not None else []
        return [{"type": "table", "attrs": {"isNumberColumnEnabled": False,
                                            "layout": "default"},
                 "content": [header, *rows, *tail]}]
    return wrap


def _more(n: int) -> Node:
    return _text(f"… and {n:,} more", _EM)


_INTRO = {"failed": ("retry", " to clear the failure: the item is offered again.", "failed"),
          "approval": ("approve", " to answer the gate.", "approve")}


def _part(p: Part) -> Callable[[int], str]:
    if p.kind in _INTRO:
        word, rest, name = _INTRO[p.kind]
        intro = [_para(_text("Tick "), _text(word, _STRONG), _text(rest))]
        return lambda budget: _block(p.title, intro, len(p.rows), map(_task, p.rows),
                                     _task_list(name), budget, lambda n: _para(_more(n)))
    blanks = [_cell() for _ in range(len(p.head) - 1)]
    return lambda budget: _block(p.title, [], len(p.rows), map(_table_row, p.rows),
                                 _table(p.head), budget, lambda n: _row([_cell(_more(n)), *blanks]))


def _graph(s: Section, max_nodes: int) -> str:
    """The graph as a mermaid `codeBlock` (with the line saying what it leaves out)."""
    graph = s.graph(max_nodes)
    if graph is None:
        return "[]"
    note, code = graph
    return dumps([_heading(3, _text("Graph")), *([_para(_text(note, _EM))] if note else []),
                  {"type": "codeBlock", "attrs": {"language": "mermaid"},
                   "content": [{"type": "text", "text": code}]}])


def _join(parts: list[str]) -> str:
    return "[" + ",".join(p[1:-1] for p in parts if p[1:-1]) + "]"


def adf(s: Section, budget: int) -> str:
    """`s` as a JSON list of ADF nodes within `budget` (UTF-16 units), or "[]"."""
    done = [] if s.done is None else [_text(f" ({s.done:,} done)")]
    head = dumps([_heading(2, _text("jr2 dashboard of "), _text(s.source, _CODE)),
                  _para(_text(s.counts, _STRONG), *done)])
    return lay_out(
        s, budget, head=head, parts=[_part(p) for p in s.parts],
        graph=lambda n: _graph(s, n), size=size, join=_join, empty="[]",
        left_out=dumps([_heading(3, _text("Graph")),
                        _para(_text("left out: too large for the description; see "),
                              _text("jr2 ready --format mermaid", _CODE))]),
        too_big=dumps([_para(_text("jr2: the dashboard does not fit in the room the description "
                                   f"leaves ({max(budget, 0):,} characters); shorten the text "
                                   "outside jr2's section", _EM))]))
