"""The dashboard in Jira wiki markup: Jira Data Center's description, read-only (no boxes).

Wiki markup has no checkbox, so the dashboard shows the report and says how to act (remove the
failed label; comment `/jr2 approve NAME`); `ticks` is always empty. The section is fenced by two
anchors, which Jira renders as nothing (`WIKI_START`, `WIKI_END`, cut and merged by `body`).
Every character that starts markup is escaped with a backslash (`wikirender.wiki_text`), so a
title cannot open a cell, a macro, a link or a mention. Size: UTF-16 units, as Java counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from jr2_sources.readyset import ReadySet, iso_utc

from . import body as md
from .adfjson import size
from .model import PendingApproval, build
from .wikirender import wiki

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

    def render(self, rs: ReadySet, parts: md.BodyParts, *, gates: Sequence[PendingApproval],
               keep: set[str], now: datetime, limit: int) -> str:
        room = limit - size(self.merge(parts, "", now)) - 2
        return wiki(build(rs, gates), room)

    def merge(self, parts: md.BodyParts, section: str, now: datetime) -> str:
        return md.merge(parts, f"{stamp(now)}\n\n{section}", WIKI_START, WIKI_END)

    def size(self, body: str) -> int:
        return size(body)


WIKI_LAYOUT = WikiLayout()
