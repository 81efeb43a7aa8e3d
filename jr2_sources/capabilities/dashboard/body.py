"""The dashboard issue's body: jr2's marked section, a person's text around it, and the ticks.

* jr2 owns only the text between `START` and `END` (two HTML comments); a person's text around
  it is written back exactly as read. No markers: the section is appended after a blank line.
  Markers that do not pair up are `BrokenMarkers`: nothing is written.
* A box jr2 draws ends with a hidden key, `<!-- jr2:retry HEX -->` or `<!-- jr2:approve HEX HEX
  -->` (id and gate as UTF-8 hex, so none can break out of the comment). Only section lines
  that end with a key are read, their visible text never; the renderer escapes `<` and `[` in
  titles, so the key is always the last thing on a line jr2 drew.
* A tick is `[x]` or `[X]` on such a line: a person's request (jr2 draws every box unticked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["END", "START", "BodyParts", "BrokenMarkers", "Tick", "TickKind", "merge", "split",
           "tick_key", "ticks"]

START = "<!-- jr2:dashboard:start -->"
END = "<!-- jr2:dashboard:end -->"

TickKind = Literal["retry", "approve"]

_KEY = re.compile(r"<!-- jr2:(retry|approve) ([0-9a-f]+)(?: ([0-9a-f]+))? -->[ \t]*\Z")
_BOX = re.compile(r"[ \t]*[-*+] \[([ xX])\] ")


class BrokenMarkers(ValueError):
    """The body's dashboard markers do not pair up; nothing is written (see the notes)."""


@dataclass(frozen=True, slots=True)
class BodyParts:
    """A body cut at jr2's section: `before` and `after` are a person's text, kept exactly;
    `section` is jr2's (None: the body has no section yet)."""

    before: str
    section: str | None
    after: str


@dataclass(frozen=True, slots=True)
class Tick:
    """One checkbox jr2 drew: what it asks, the item, the gate (approve only), and whether a
    person ticked it."""

    kind: TickKind
    item_id: str
    gate: str | None
    ticked: bool

    @property
    def key(self) -> str:
        """The hidden key that ends the box's line."""
        return tick_key(self.kind, self.item_id, self.gate)


def tick_key(kind: TickKind, item_id: str, gate: str | None = None) -> str:
    """`<!-- jr2:retry HEX -->` / `<!-- jr2:approve HEX HEX -->` for a box jr2 draws."""
    parts = [kind, item_id.encode().hex()]
    if gate is not None:
        parts.append(gate.encode().hex())
    return f"<!-- jr2:{' '.join(parts)} -->"


def split(body: str, start: str = START, end: str = END) -> BodyParts:
    """Cut `body` at jr2's section (between `start` and `end`); `BrokenMarkers` when the
    markers do not pair up."""
    starts = body.count(start)
    ends = body.count(end)
    if starts == 0 and ends == 0:
        return BodyParts(body, None, "")
    if starts != 1 or ends != 1:
        raise BrokenMarkers(f"{starts} start and {ends} end markers (want one of each)")
    i = body.index(start)
    j = body.index(end)
    if j < i:
        raise BrokenMarkers("the end marker comes before the start marker")
    return BodyParts(body[:i], body[i + len(start):j], body[j + len(end):])


def merge(parts: BodyParts, section: str, start: str = START, end: str = END) -> str:
    """The body with `section` as jr2's part and a person's text around it kept as it was."""
    block = f"{start}\n{section.strip(chr(10))}\n{end}"
    if parts.section is None:
        before = parts.before.rstrip("\n")
        return f"{before}\n\n{block}\n" if before else f"{block}\n"
    return parts.before + block + parts.after


def framing(parts: BodyParts) -> int:
    """Characters of the body that are not jr2's section text (a person's text, the markers)."""
    return len(parts.before) + len(parts.after) + len(START) + len(END) + 4


def _unhex(text: str) -> str | None:
    try:
        return bytes.fromhex(text).decode()
    except ValueError:
        return None


def keyed_tick(key: re.Match[str], ticked: bool) -> Tick | None:
    """The box a key names (groups: kind, item id and gate in hex), or None when it is bad."""
    item_id = _unhex(key.group(2))
    gate = _unhex(key.group(3)) if key.group(3) else None
    kind: TickKind = "retry" if key.group(1) == "retry" else "approve"
    if item_id is None or (kind == "approve") != (gate is not None):
        return None
    return Tick(kind, item_id, gate, ticked)


def ticks(section: str | None) -> list[Tick]:
    """Every checkbox jr2 drew in `section`, ticked or not (lines with a jr2 key only)."""
    out: list[Tick] = []
    for line in (section or "").splitlines():
        box = _BOX.match(line)
        key = _KEY.search(line)
        if box is not None and key is not None and (
                tick := keyed_tick(key, box.group(1) in "xX")) is not None:
            out.append(tick)
    return out
