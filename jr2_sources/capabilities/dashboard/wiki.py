"""The dashboard in Jira wiki markup: Jira Data Center's description, read-only (no boxes).

Wiki markup has no checkbox, so the dashboard shows the report and says how to act (remove the
failed label; comment `/jr2 approve NAME`); `ticks` is always empty. The section is fenced by two
anchors, which Jira renders as nothing (`WIKI_START`, `WIKI_END`, cut and merged by `body`).
Every part is a wiki table cut as `model.lay_out` shares the budget, the graph a `{noformat}`
block. Every character that starts markup is escaped with a backslash (`wiki_text`), so a title
cannot open a cell, a macro, a link or a mention. Size: UTF-16 units, as Java counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from jr2_sources.readyset import ReadySet, iso_utc
from jr2_sources.report import _one_line, cut_lines, describe_reasons

from . import body as md
from .adf import size
from .layout import Layout
from .model import (
    MAX_REFS,
    Cell,
    Code,
    Part,
    PendingApproval,
    Row,
    Section,
    Text,
    Why,
    build,
    lay_out,
)

__all__ = ["WIKI_END", "WIKI_LAYOUT", "WIKI_START", "WikiLayout", "wiki", "wiki_text"]

WIKI_START = "{anchor:jr2-dashboard-start}"
WIKI_END = "{anchor:jr2-dashboard-end}"
_STAMP = re.compile(r"^_jr2: last changed [^_]*_\s*$", re.MULTILINE)
_SPECIAL = re.compile(r"([\\*_+\-^~?{}\[\]|!#])")
_URL = re.compile(r"https?://[^\s|\]\[{}]+\Z")
_JIRA_KEY = re.compile(r"[A-Z][A-Z0-9_]*-[0-9]+")
_INTRO = {"failed": "To retry one, remove its failed label (ticking needs Jira Cloud).",
          "approval": "To answer, someone who may edit the issue comments {{/jr2 approve NAME}} "
                      "or {{/jr2 reject NAME REASON}} on it."}


class WikiLayout(Layout):
    """A read-only dashboard in a wiki-markup description."""

    start, end, stamped = WIKI_START, WIKI_END, _STAMP

    def ticks(self, section: str | None) -> list[md.Tick]:
        return []  # wiki markup has no checkboxes

    def render(self, rs: ReadySet, parts: md.BodyParts, *, gates: Sequence[PendingApproval],
               keep: set[str], now: datetime, limit: int) -> str:
        room = limit - size(self.merge(parts, "", now)) - 2
        return wiki(build(rs, gates), room)

    def stamp(self, now: datetime) -> str:
        return f"_jr2: last changed {iso_utc(now.replace(microsecond=0))}_"

    def size(self, body: str) -> int:
        return size(body)


WIKI_LAYOUT = WikiLayout()


def wiki_text(text: str) -> str:
    """`text` on one line with every markup character escaped."""
    return _SPECIAL.sub(r"\\\1", _one_line(text))


def _cell(c: Cell) -> str:
    if isinstance(c, Why):
        return describe_reasons(c.reasons, wiki_text, wiki_text, MAX_REFS)
    if isinstance(c, Code):
        return f"{{{{{wiki_text(c)}}}}}"
    return wiki_text(c) if isinstance(c, Text) else c


def _item(r: Row) -> str:
    """An item's id in monospace, linked when it has a url (a Jira key is shown as it is: no
    markup starts inside one)."""
    shown = r.item_id if _JIRA_KEY.fullmatch(r.item_id) else wiki_text(r.item_id)
    return f"[{shown}|{r.url}]" if _URL.match(r.url or "") else f"{{{{{shown}}}}}"


def _row(r: Row) -> str:
    cells = [_item(r), wiki_text(r.title), *map(_cell, r.cells)]
    return "|" + "|".join(c or " " for c in cells) + "|"


def _part(p: Part) -> Callable[[int], str]:
    """`h3. title (total)`, an intro, then a table cut to the budget with an "… and N more" row."""
    heading = f"h3. {p.title} ({len(p.rows):,})"
    if not p.rows:
        return lambda budget: f"{heading}\n_none_\n"
    intro = [_INTRO[p.kind]] if p.kind in _INTRO else []
    out = [heading, *intro, "||" + "||".join(p.head) + "||"]
    blanks = " |" * (len(p.head) - 1)
    return lambda budget: cut_lines(out, len(p.rows), map(_row, p.rows), budget,
                                    lambda n: f"|_… and {n:,} more_|{blanks}", size)


def _graph(s: Section, max_nodes: int) -> str:
    graph = s.graph(max_nodes)
    if graph is None or "{noformat}" in graph[1]:
        return ""
    note, code = graph
    said = f"_{wiki_text(note)}_\n" if note else ""
    return f"h3. Graph\n{said}{{noformat}}\n{code}\n{{noformat}}\n"


def wiki(s: Section, budget: int) -> str:
    """`s` in at most `budget` characters (UTF-16 units), or "" when not even a line fits."""
    done = "" if s.done is None else f" ({s.done:,} done)"
    head = (f"h2. jr2 dashboard of {{{{{wiki_text(s.source)}}}}}\n*{s.counts}*{done}\n"
            "_Read-only: boxes to tick need Jira Cloud._\n")
    return lay_out(
        s, budget, head=head, parts=[_part(p) for p in s.parts], graph=lambda n: _graph(s, n),
        size=size,
        left_out="h3. Graph\n_left out: too large for the description; see {{jr2 ready "
                 "\\-\\-format mermaid}}_\n",
        too_big="_jr2: the dashboard does not fit in the room the description leaves "
                f"({max(budget, 0):,} characters); shorten the text outside jr2's section_")
