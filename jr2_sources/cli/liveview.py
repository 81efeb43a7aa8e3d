"""The live view of `jr2 work` on a terminal: the run id with the ready / blocked / done /
failed counts on its first line, then the active items with their elapsed time, redrawn a few
times a second (rich). On a short terminal the items that do not fit are one `+N more` row, so
the first line is never cropped off.

Ids and failure reasons come from trackers and commands: they are drawn as plain `Text` with
control characters blanked, never parsed as rich markup (an id holding `[/]` would raise)."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from jr2_core import RunEvent
from jr2_core.text import terminal_safe


def _plain(text: object) -> Text:
    return Text(terminal_safe(str(text)).replace("\n", " "))


class LiveView:
    """Observes a run and draws it on stderr."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.active: dict[str, float] = {}
        self.done = 0
        self.failed = 0
        self.run_id: str | None = None  # from the first event (the wake gate opens at start)
        self.console = Console(stderr=True)
        self._live = Live(console=self.console, refresh_per_second=4, transient=False,
                          get_renderable=self._render)

    def observe(self, ev: RunEvent) -> None:
        self.run_id = self.run_id or ev.run_id
        if ev.kind == "worker_started" and ev.item_id is not None:
            self.active[ev.item_id] = time.monotonic()
        elif ev.kind in ("worker_finished", "worker_failed", "worker_cancelled"):
            self.active.pop(ev.item_id or "", None)
            if ev.kind == "worker_finished":
                self.done += 1
            elif ev.kind == "worker_failed":
                self.failed += 1
                self.console.print(Text.assemble(("failed", "red"), " ",
                                                 _plain(f"{ev.item_id}: {ev.detail}")))

    def _render(self) -> Group:
        now = time.monotonic()
        rs = self.ws.last
        counts = (f"ready {len(rs.ready)}  blocked {len(rs.blocked)}  " if rs is not None else "")
        head = Text.assemble(("jr2 work", "bold"), " ", _plain(self.run_id or ""), "  ",
                             f"{counts}done {self.done}  failed {self.failed}  "
                             f"running {len(self.active)}")
        table = Table(box=None, show_header=True, header_style="bold")
        table.add_column("running")
        table.add_column("for", justify="right")
        rows = sorted(self.active.items(), key=lambda kv: kv[1])
        room = max(self.console.size.height - 3, 1)  # the first line, the header, a spare
        shown = rows if len(rows) <= room else rows[:room - 1]
        for iid, t0 in shown:
            table.add_row(_plain(iid), f"{now - t0:,.0f}s")
        if len(shown) < len(rows):
            table.add_row(Text(f"+{len(rows) - len(shown)} more"), "")
        return Group(head, table)

    def start(self) -> None:
        self._live.start()

    def stop(self) -> None:
        self._live.stop()
