"""The dashboard in an Atlassian Document Format (ADF) document: Jira Cloud's description.

The body is the document as compact JSON (`dumps`); `BodyParts` holds JSON lists of top-level
nodes. jr2's part is fenced by two top-level paragraphs whose whole text is `START_TEXT` /
`END_TEXT` (marks ignored); no markers: the section is appended; markers that do not pair up
are `BrokenMarkers`. Boxes are `taskItem`s whose `localId` is jr2's key (`jr2-retry-HEX`,
`jr2-approve-HEX-HEX`); only keyed items inside the section are read, their text never.
Comparing reduces the section to what jr2 drew, so attributes Jira adds cause no rewrite. Size:
the compact JSON in UTF-16 code units, at most `ADF_LIMIT`. Every document jr2 writes is
validated against the vendored schema (fixtures/adf/) in the tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from jr2_sources.readyset import ReadySet, iso_utc

from .adfjson import dumps, key_of, size
from .adfrender import adf
from .body import BodyParts, BrokenMarkers, Tick, keyed_tick
from .model import build

__all__ = ["ADF_LAYOUT", "ADF_LIMIT", "END_TEXT", "START_TEXT", "AdfLayout", "dumps",
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


class AdfLayout:
    """The dashboard in an ADF description (a `layout.Layout`; see the module notes)."""

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

