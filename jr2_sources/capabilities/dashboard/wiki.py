"""The dashboard in Jira wiki markup: Jira Data Center's description, read-only (no boxes).

Design notes
------------
* Data Center's REST API (v2) gives and takes the description as a string of Jira's wiki markup
  ("Text formatting notation": `h3.` headings, `||head||` and `|cell|` tables, `[text|url]`
  links, `{{monospace}}`, `{noformat}` blocks, `{anchor:NAME}`, `\\X` escaping a special
  character). Wiki markup has no checkbox, so this dashboard is **read-only**: it shows the same
  report as the others, and says how to act where a person is anyway (remove the failed label;
  comment `/jr2 approve NAME` on the issue). `ticks` is always empty.
* Markers: two anchors, `{anchor:jr2-dashboard-start}` and `{anchor:jr2-dashboard-end}`, which
  Jira renders as nothing (an anchor is a link target), so, as on GitHub, the section is fenced
  invisibly; cutting and merging is `body.split`/`body.merge` with these markers.
* Escaping: control characters blanked, then every character that starts markup (`\\`, `*`,
  `_`, `+`, `-`, `^`, `~`, `?`, `{`, `}`, `[`, `]`, `|`, `!`, `#`) escaped with a backslash, so a
  title cannot open a table cell, a macro, a link or a mention (`[~name]`), and posting the
  dashboard pings nobody.
* Size: Jira's 32,767-character limit of a text field (`adf.ADF_LIMIT`, named by the Jira
  board's target), counted in UTF-16 units as Java does (`size`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from jr2_sources.readyset import ReadySet, iso_utc

from . import body as md
from .adf import size
from .render import PendingGate
from .wikirender import render_wiki

__all__ = ["WIKI_END", "WIKI_LAYOUT", "WIKI_START", "WikiLayout"]

WIKI_START = "{anchor:jr2-dashboard-start}"
WIKI_END = "{anchor:jr2-dashboard-end}"
_STAMP = re.compile(r"^_jr2: last changed [^_]*_\s*$", re.MULTILINE)


def stamp(now: datetime) -> str:
    return f"_jr2: last changed {iso_utc(now.replace(microsecond=0))}_"


class WikiLayout:
    """A read-only dashboard in a wiki-markup description (a `layout.Layout`)."""

    def split(self, body: str) -> md.BodyParts:
        return md.split(body, WIKI_START, WIKI_END)

    def ticks(self, section: str | None) -> list[md.Tick]:
        return []  # wiki markup has no checkboxes

    def core(self, section: str) -> str:
        return _STAMP.sub("", section.replace("\r\n", "\n")).strip("\n")

    def render(self, rs: ReadySet, parts: md.BodyParts, *, gates: Sequence[PendingGate],
               keep: set[str], now: datetime, limit: int) -> str:
        room = limit - size(self.merge(parts, "", now)) - 2
        return render_wiki(rs, budget=room, gates=gates)

    def merge(self, parts: md.BodyParts, section: str, now: datetime) -> str:
        return md.merge(parts, f"{stamp(now)}\n\n{section}", WIKI_START, WIKI_END)

    def size(self, body: str) -> int:
        return size(body)


WIKI_LAYOUT = WikiLayout()
