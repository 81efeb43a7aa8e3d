"""The dashboard section (`model.Section`) as ADF nodes (Jira Cloud; see `adf.py`).

**Failed** and **Awaiting approval** are `taskList`s (a `retry` or `approve` item each), the
other parts `table`s, the **Graph** a mermaid `codeBlock`; sizes are the compact JSON's, the
budget shared as `model.lay_out` does. Text is data in ADF, not markup: a title cannot draw a
box, end the section or mention anyone; control characters are blanked. Ids link to the item.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from jr2_sources.report import _one_line, describe_reasons

from .adfjson import dumps, key_of, size
from .model import MAX_REFS, Cell, Code, Part, Row, Section, Why, lay_out

__all__ = ["adf"]

Node = dict[str, Any]

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

