"""How a dashboard body is laid out: cut at jr2's section, its ticks, drawn, measured.

`sync.Dashboard` keeps a body the same way on every tracker; what differs is its format, a
`Layout`: Markdown between two HTML comments (`MARKDOWN`: GitHub, GitLab, a local file), an ADF
document (`adf.ADF_LAYOUT`: Jira Cloud) or wiki markup (`wiki.WIKI_LAYOUT`: Jira Data Center).
A `Board` names its layout with a `layout` attribute (default Markdown). The body is a string in
all, so the sync never looks inside it; how long it may be is the board's target's to say, how
its size is counted the layout's (`size`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from jr2_sources.readyset import ReadySet

from . import body as md
from .render import PendingApproval, core, render_section, stamp

__all__ = ["MARKDOWN", "Layout", "MarkdownLayout"]


class Layout(Protocol):
    """A body format: cut, ticks, compare, draw, merge and measure (see the module note)."""

    def split(self, body: str) -> md.BodyParts:
        """Cut `body` at jr2's section; `body.BrokenMarkers` when its markers do not pair."""
        ...

    def ticks(self, section: str | None) -> list[md.Tick]:
        """Every box jr2 drew in `section`, ticked or not."""
        ...

    def core(self, section: str) -> str:
        """What of a section is compared to decide whether to write (no "last changed")."""
        ...

    def render(self, rs: ReadySet, parts: md.BodyParts, *, gates: Sequence[PendingApproval],
               keep: set[str], now: datetime, limit: int) -> str:
        """The section for `rs` (comparable with `core`), within the room `parts` leave in
        `limit`; "" when not even a line fits."""
        ...

    def merge(self, parts: md.BodyParts, section: str, now: datetime) -> str:
        """The whole body: `section` with its "last changed" line as jr2's part, a person's
        text around it as it was."""
        ...

    def size(self, body: str) -> int:
        """The body's size as the tracker counts it against its target's `limit`."""
        ...


class MarkdownLayout:
    """GitHub Markdown between HTML-comment markers (`body.py`, `render.py`)."""

    def split(self, body: str) -> md.BodyParts:
        return md.split(body)

    def ticks(self, section: str | None) -> list[md.Tick]:
        return md.ticks(section)

    def core(self, section: str) -> str:
        return core(section)

    def render(self, rs: ReadySet, parts: md.BodyParts, *, gates: Sequence[PendingApproval],
               keep: set[str], now: datetime, limit: int) -> str:
        room = limit - md.framing(parts) - len(stamp(now)) - 2
        return render_section(rs, budget=room, gates=gates, keep_ticked=keep)

    def merge(self, parts: md.BodyParts, section: str, now: datetime) -> str:
        return md.merge(parts, f"{stamp(now)}\n\n{section}")

    def size(self, body: str) -> int:
        return len(body)


MARKDOWN = MarkdownLayout()
