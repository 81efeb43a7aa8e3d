"""The live view of `jr2 work` on a terminal: active items with their elapsed time, and the
ready / blocked / done / failed counts, redrawn a few times a second (rich).

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
        self.console = Console(stderr=True)
        self._live = Live(console=self.console, refresh_per_second=4, transient=False,
                          get_renderable=self._render)

    def observe(self, ev: RunEvent) -> None:
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
        table = Table(box=None, show_header=True, header_style="bold")
        table.add_column("running")
        table.add_column("for", justify="right")
        for iid, t0 in sorted(self.active.items(), key=lambda kv: kv[1]):
            table.add_row(_plain(iid), f"{now - t0:,.0f}s")
        rs = self.ws.last
        counts = (f"ready {len(rs.ready)}  blocked {len(rs.blocked)}  " if rs is not None else "")
        line = Text(f"{counts}done {self.done}  failed {self.failed}  running {len(self.active)}")
        return Group(table, line)

    def start(self) -> None:
        self._live.start()

    def stop(self) -> None:
        self._live.stop()
