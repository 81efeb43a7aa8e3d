"""The dashboard section as Atlassian Document Format nodes (Jira Cloud; see `adf.py`).

Design note: the same report as the Markdown dashboard (`render.py`), in the same order and
cut the same way: **Failed** (a `retry` action item per item) and **Awaiting approval** (an
`approve` action item per gate) as ADF `taskList`s; **In progress**, **Waiting for retry**,
**Ready** and **Blocked** as ADF `table`s (a `tableHeader` row, then `tableCell`s of one
paragraph each); the **Graph** as a `codeBlock` of mermaid text (Jira shows it as text; it is
`jr2 ready --format mermaid`). Sizes are the compact JSON's (`adf.size`): each section is built
to a budget (`render._share`, small ones take what they need, the others split the rest) and
cut with an "… and N more" line. Text needs no escaping in ADF (it is data, not markup): a
title cannot draw a box, end the section or mention anyone (a mention is a `mention` node, never
text); control characters are blanked (`report._one_line`). Ids link to the item's page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from jr2_sources.readyset import BlockedEntry, ClaimedEntry, ReadyEntry, ReadySet, iso_utc
from jr2_sources.report import _claim_words, _clip, _md_graph, _one_line, describe_reasons

from .adfjson import dumps, key_of, size
from .render import PendingGate, _parts, _share

__all__ = ["render_nodes"]

Node = dict[str, Any]
Entry = BlockedEntry | ClaimedEntry | ReadyEntry

_TITLE = 80
_REASON = 200
_MAX_REFS = 10


def _text(text: str, *marks: Node) -> Node:
    node: Node = {"type": "text", "text": _one_line(text) or " "}
    if marks:
        node["marks"] = list(marks)
    return node


_STRONG: Node = {"type": "strong"}
_EM: Node = {"type": "em"}
_CODE: Node = {"type": "code"}


def _para(*inline: Node) -> Node:
    return {"type": "paragraph", "content": list(inline)} if inline else {"type": "paragraph"}


def _heading(level: int, *inline: Node) -> Node:
    return {"type": "heading", "attrs": {"level": level}, "content": list(inline)}


def _item(rs: ReadySet, item_id: str) -> Node:
    """An item's id in code, linked to its page when it has a url."""
    url = rs.entry(item_id).item.url
    if url and re.match(r"https?://", url):
        return _text(item_id, _CODE, {"type": "link", "attrs": {"href": _one_line(url)}})
    return _text(item_id, _CODE)


def _title(rs: ReadySet, item_id: str) -> list[Node]:
    title = rs.entry(item_id).item.title
    return [_text(f" {_clip(title, _TITLE)}")] if title else []


def _task(key: str, ticked: bool, inline: list[Node]) -> Node:
    return {"type": "taskItem", "attrs": {"localId": key, "state": "DONE" if ticked else "TODO"},
            "content": inline}


def _cell(*inline: Node, header: bool = False) -> Node:
    return {"type": "tableHeader" if header else "tableCell", "content": [_para(*inline)]}


def _row(cells: list[Node]) -> Node:
    return {"type": "tableRow", "content": cells}


def _block(title: str, intro: list[Node], total: int, rows: Iterator[Node],
           wrap: Callable[[list[Node], Node | None], list[Node]], budget: int,
           more: Callable[[int], Node]) -> str:
    """A section (`title (total)` heading, `intro`, then `wrap(rows, more line)`) as JSON within
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


def _more_para(n: int) -> Node:
    return _para(_text(f"… and {n:,} more", _EM))


def _more_row(columns: int) -> Callable[[int], Node]:
    return lambda n: _row([_cell(_text(f"… and {n:,} more", _EM)),
                           *[_cell() for _ in range(columns - 1)]])


def _sections(rs: ReadySet, gates: Sequence[PendingGate], keep: set[str]
              ) -> list[Callable[[int], str]]:
    parts = _parts(rs, {g.item_id for g in gates})

    def failed(budget: int) -> str:
        rows = (_task(key_of("retry", e.item.id), key_of("retry", e.item.id) in keep,
                      [_text("retry ", _STRONG), _item(rs, e.item.id), *_title(rs, e.item.id),
                       _text(f": {_clip(e.item.failed or '', _REASON)}")])
                for e in parts.failed)
        intro = [_para(_text("Tick "), _text("retry", _STRONG),
                       _text(" to clear the failure: the item is offered again."))]
        return _block("Failed", intro, len(parts.failed), rows, _task_list("failed"), budget,
                      _more_para)

    def approval(budget: int) -> str:
        shown = [g for g in gates if g.item_id in rs]
        rows = (_task(key_of("approve", g.item_id, g.gate),
                      key_of("approve", g.item_id, g.gate) in keep,
                      [_text("approve ", _STRONG), _text(g.gate, _CODE), _text(" for "),
                       _item(rs, g.item_id), *_title(rs, g.item_id),
                       *([_text(f": {_clip(g.reason, _REASON)}")] if g.reason else []),
                       *([_text(f" (since {iso_utc(g.since)})")] if g.since else [])])
                for g in shown)
        intro = [_para(_text("Tick "), _text("approve", _STRONG), _text(" to answer the gate."))]
        return _block("Awaiting approval", intro, len(shown), rows, _task_list("approve"),
                      budget, _more_para)

    def table(title: str, head: list[str], entries: Sequence[Entry],
              cells: Callable[[Entry], list[Node]]) -> Callable[[int], str]:
        def build(budget: int) -> str:
            rows = (_row([_cell(_item(rs, e.item.id)),
                          _cell(_text(_clip(e.item.title, _TITLE))),
                          *[_cell(c) for c in cells(e)]]) for e in entries)
            return _block(title, [], len(entries), rows, _table(head), budget,
                          _more_row(len(head)))
        return build

    def claim_cells(e: Entry) -> list[Node]:
        assert isinstance(e, ClaimedEntry)
        holder, since, lease = _claim_words(e)
        return [_text(_clip(holder, _TITLE)), _text(since), _text(lease)]

    def retry_cells(e: Entry) -> list[Node]:
        at = e.item.retry_after
        return [_text(iso_utc(at) if at else "?"), _text(f"{e.item.attempts:,}")]

    def why(e: Entry) -> list[Node]:
        assert isinstance(e, BlockedEntry)
        return [_text(describe_reasons(e.reasons, _one_line, _one_line, _MAX_REFS))]

    ready = [e for e in rs.ready if e.item.in_scope]

    def ready_cells(e: Entry) -> list[Node]:
        prio = "" if e.item.priority is None else str(e.item.priority)
        return [_text(prio), _text(_clip(", ".join(e.item.labels), _TITLE))]

    return [
        failed,
        approval,
        table("In progress", ["Item", "Title", "Holder", "Since", "Lease expires"],
              parts.claimed, claim_cells),
        table("Waiting for retry", ["Item", "Title", "Retry after", "Attempts failed"],
              parts.waiting, retry_cells),
        table("Ready", ["Item", "Title", "Priority", "Labels"], ready, ready_cells),
        table("Blocked", ["Item", "Title", "Why"], parts.blocked, why),
    ]


_FENCE = re.compile(r"```mermaid\n(.*?)\n```", re.DOTALL)
_NOTE = re.compile(r"^_(.+)_$", re.MULTILINE)


def _graph(rs: ReadySet, max_nodes: int) -> list[Node]:
    """The graph as a mermaid `codeBlock` (with the line saying what it leaves out)."""
    md = _md_graph(rs, max_nodes)
    code = _FENCE.search(md)
    if code is None:
        return []
    note = _NOTE.search(md[:code.start()])
    return [_heading(3, _text("Graph")),
            *([_para(_text(note.group(1), _EM))] if note else []),
            {"type": "codeBlock", "attrs": {"language": "mermaid"},
             "content": [{"type": "text", "text": code.group(1)}]}]


def render_nodes(rs: ReadySet, *, budget: int, gates: Sequence[PendingGate] = (),
                 keep_ticked: set[str] | frozenset[str] = frozenset(),
                 max_nodes: int = 100) -> list[Node]:
    """The section's nodes for `rs` within `budget` (compact JSON, UTF-16 units), or [] when not
    even a paragraph saying so fits. `keep_ticked`: keys of boxes drawn ticked again."""
    parts = _parts(rs, {g.item_id for g in gates})
    shown = {"ready": sum(1 for e in rs.ready if e.item.in_scope),
             "in progress": len(parts.claimed), "failed": len(parts.failed),
             "awaiting approval": sum(1 for g in gates if g.item_id in rs),
             "waiting for retry": len(parts.waiting), "blocked": len(parts.blocked)}
    counts = ", ".join(f"{n:,} {what}" for what, n in shown.items())
    done = "" if rs.counts["done"] is None else f" ({rs.counts['done']:,} done)"
    head = [_heading(2, _text("jr2 dashboard of "), _text(_clip(rs.source, 200), _CODE)),
            _para(_text(counts, _STRONG), *([_text(done)] if done else []))]
    graph = _graph(rs, max_nodes) if budget > 12_000 else []
    if size(dumps(graph)) > budget // 3:
        graph = _graph(rs, max_nodes // 4)
    if size(dumps(graph)) > budget // 3:
        graph = [_heading(3, _text("Graph")),
                 _para(_text("left out: too large for the description; see "),
                       _text("jr2 ready --format mermaid", _CODE))]
    rest = budget - size(dumps(head)) - size(dumps(graph)) - 16
    nodes = list(head)
    for part in _share(_sections(rs, gates, set(keep_ticked)), max(rest, 0)):
        nodes += _loads(part)
    nodes += graph
    if size(dumps(nodes)) > budget:
        nodes = [_para(_text("jr2: the dashboard does not fit in the room the description "
                             f"leaves ({max(budget, 0):,} characters); shorten the text outside "
                             "jr2's section", _EM))]
    return nodes if size(dumps(nodes)) <= budget else []


def _loads(text: str) -> list[Node]:
    nodes = json.loads(text)
    return nodes if isinstance(nodes, list) else []
