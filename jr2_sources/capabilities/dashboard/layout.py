"""How a dashboard body is laid out (`Layout`), and the Markdown layout (`MARKDOWN`).

`sync.Dashboard` keeps a body the same way on every tracker; what differs is its format:
Markdown between two HTML comments (`MARKDOWN`: GitHub, GitLab, a local file), an ADF document
(`adf.ADF_LAYOUT`: Jira Cloud) or wiki markup (`wiki.WIKI_LAYOUT`: Jira Data Center). A `Board`
names its layout with a `layout` attribute (default Markdown). The body is a string in all, so
the sync never looks inside it; its limit is the board's target's, its size the layout's.

Markdown: what a person acts on comes first, **Failed** (a `retry` box per item) and **Awaiting
approval** (an `approve` box per gate), then the tables and the **Graph**, built to the room the
body leaves (`model.lay_out`). Escaping is the report's, so a title cannot break a table, start
a line, draw a box or close an HTML comment, and the dashboard pings nobody. The "last changed"
line is added apart (`Layout.stamp`) and ignored when comparing (`Layout.core`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from jr2_sources.readyset import ReadySet, iso_utc
from jr2_sources.report import (
    _md_code,
    _md_code_plain,
    _md_text,
    describe_reasons,
    md_block,
    md_graph,
    md_item,
    md_more_row,
)

from . import body as md
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

__all__ = ["MARKDOWN", "Layout", "markdown", "render_section"]

_STAMP = re.compile(r"^<sub>jr2: last changed [^<]*</sub>\s*$", re.MULTILINE)
_INTRO = {"failed": "Tick **retry** to clear the failure: the item is offered again.",
          "approval": "Tick **approve** to answer the gate."}


def _cell(c: Cell) -> str:
    if isinstance(c, Why):
        return describe_reasons(c.reasons, _md_code, _md_text, MAX_REFS)
    if isinstance(c, Code):
        return _md_code_plain(c)
    return _md_text(c) if isinstance(c, Text) else c


def _item(r: Row) -> str:
    return md_item(r.item_id, r.url)


def _task(r: Row) -> str:
    title = f" {_md_text(r.title)}" if r.title else ""
    if r.box == "retry":
        what = f"**retry** {_item(r)}{title}: {_cell(r.cells[0])}"
    else:
        gate, reason, since = map(_cell, r.cells)
        what = (f"**approve** {gate} for {_item(r)}{title}" + (f": {reason}" if reason else "")
                + (f" (since {since})" if since else ""))
    key = md.tick_key(r.box or "approve", r.item_id, r.gate)
    return f"{'- [x]' if r.ticked else '- [ ]'} {what} {key}"


def _table_row(r: Row) -> str:
    return f"| {_item(r)} | {_md_text(r.title)} | " + " | ".join(map(_cell, r.cells)) + " |"


def _part(p: Part) -> Callable[[int], str]:
    if p.kind in _INTRO:
        return lambda budget: md_block(p.title, [_INTRO[p.kind], ""], len(p.rows),
                                       map(_task, p.rows), budget, lambda n: f"- … and {n:,} more")
    head = ["| " + " | ".join(p.head) + " |", "| " + " | ".join("---" for _ in p.head) + " |"]
    return lambda budget: md_block(p.title, head, len(p.rows), map(_table_row, p.rows), budget,
                                   md_more_row(head))


def markdown(s: Section, budget: int) -> str:
    """`s` as Markdown in at most `budget` characters, or "" when not even a line fits."""
    head = (f"## jr2 dashboard of {_md_code_plain(s.source)}\n\n**{s.counts}**"
            + ("" if s.done is None else f" ({s.done:,} done)") + "\n")
    return lay_out(
        s, budget, head=head, parts=[_part(p) for p in s.parts],
        graph=lambda n: md_graph(s.graph(n)),
        left_out="### Graph\n\n_left out: too large for the issue body; see "
                 "`jr2 ready --format mermaid`_\n",
        too_big="_jr2: the dashboard does not fit in the room the issue body leaves "
                f"({max(budget, 0):,} characters); shorten the text outside jr2's section_")


def render_section(rs: ReadySet, *, budget: int, gates: Sequence[PendingApproval] = (),
                   keep_ticked: set[str] | frozenset[str] = frozenset(),
                   max_nodes: int = 100) -> str:
    """The Markdown section of `rs` in at most `budget` characters (no "last changed" line),
    or "" when not even a line saying so fits; `keep_ticked`: keys of boxes a person ticked
    that could not be acted on yet, drawn ticked again."""
    return markdown(build(rs, gates, keep_ticked, max_nodes), budget)


class Layout:
    """A body format: cut, ticks, compare, draw, merge and measure (see the module notes). This
    one is Markdown between the HTML comments `body.START` and `body.END`; a text format
    differs in its markers and its "last changed" line (`stamp`, `stamped`)."""

    start, end, stamped = md.START, md.END, _STAMP

    def split(self, body: str) -> md.BodyParts:
        """Cut `body` at jr2's section; `body.BrokenMarkers` when its markers do not pair."""
        return md.split(body, self.start, self.end)

    def ticks(self, section: str | None) -> list[md.Tick]:
        """Every box jr2 drew in `section`, ticked or not."""
        return md.ticks(section)

    def core(self, section: str) -> str:
        """What of a section is compared to decide whether to write (no "last changed")."""
        return self.stamped.sub("", section.replace("\r\n", "\n")).strip("\n")

    def render(self, rs: ReadySet, parts: md.BodyParts, *, gates: Sequence[PendingApproval],
               keep: set[str], now: datetime, limit: int) -> str:
        """The section for `rs` within the room `parts` leave in `limit` ("": none fits)."""
        room = limit - md.framing(parts) - len(self.stamp(now)) - 2
        return render_section(rs, budget=room, gates=gates, keep_ticked=keep)

    def stamp(self, now: datetime) -> str:
        """The "last changed" line written above the section's content."""
        return f"<sub>jr2: last changed {iso_utc(now.replace(microsecond=0))}</sub>"

    def merge(self, parts: md.BodyParts, section: str, now: datetime) -> str:
        """The whole body: `section` and its "last changed" line, a person's text kept."""
        return md.merge(parts, f"{self.stamp(now)}\n\n{section}", self.start, self.end)

    def size(self, body: str) -> int:
        """The body's size as the tracker counts it against its target's `limit`."""
        return len(body)


MARKDOWN = Layout()
