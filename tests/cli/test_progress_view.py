"""What a person watching a run sees: the progress lines off a terminal (with the heartbeat that
names long-running items, at most once per interval) and the live view on a short terminal."""

from __future__ import annotations

import asyncio
import io
import time
from types import SimpleNamespace

import pytest
from rich.console import Console

from jr2_core import RunEvent
from jr2_core.commands import progress_printer
from jr2_sources.cli.liveview import LiveView


def _beats(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("jr2: running")]


def test_a_long_item_gets_a_heartbeat_line_at_most_once_per_interval(
        capsys: pytest.CaptureFixture[str]) -> None:
    fake = [0.0]
    interval = 0.05

    async def run() -> tuple[float, list[str], list[str]]:
        show = progress_printer(False, heartbeat=interval, clock=lambda: fake[0])
        t0 = time.monotonic()
        show(RunEvent("worker_started", "r-1", item_id="A"))
        fake[0] = 125.0  # A has run 2m 5s by the time the beats come
        await asyncio.sleep(interval * 2.5)
        show(RunEvent("worker_started", "r-1", item_id="B"))  # just started: not named
        await asyncio.sleep(interval * 2.5)
        show(RunEvent("worker_finished", "r-1", item_id="A"))
        elapsed = time.monotonic() - t0
        while_a = _beats(capsys.readouterr().err)
        await asyncio.sleep(interval * 2.5)  # only B, 0 s long: nothing to say
        show(RunEvent("run_ended", "r-1"))
        await asyncio.sleep(interval * 2.5)
        return elapsed, while_a, _beats(capsys.readouterr().err)

    elapsed, while_a, after = asyncio.run(run())
    assert while_a and set(while_a) == {"jr2: running  A (2m 5s)"}, while_a
    assert len(while_a) <= elapsed / interval  # never more often than the interval
    assert after == []


def test_progress_lines_off_an_event_loop_have_no_heartbeat(
        capsys: pytest.CaptureFixture[str]) -> None:
    show = progress_printer(False, heartbeat=0.01)
    show(RunEvent("worker_started", "r-1", item_id="A"))
    time.sleep(0.05)
    show(RunEvent("worker_finished", "r-1", item_id="A"))
    assert capsys.readouterr().err.splitlines() == ["jr2: started  A", "jr2: finished A"]


def test_the_live_view_shows_the_run_id_and_its_counts_on_a_short_terminal() -> None:
    rs = SimpleNamespace(ready=["x"] * 7, blocked=["y"] * 2)
    view = LiveView(SimpleNamespace(last=rs))
    out = io.StringIO()
    view.console = Console(file=out, width=80, height=8, force_terminal=True, color_system=None)
    view.observe(RunEvent("gate_opened", "r-1a2b3c4d", gate_id="source"))
    for n in range(30):
        view.observe(RunEvent("worker_started", "r-1a2b3c4d", item_id=f"T-{n}"))
    view.observe(RunEvent("worker_finished", "r-1a2b3c4d", item_id="T-0"))
    view.console.print(view._render())
    lines = out.getvalue().splitlines()
    assert len(lines) <= 8, lines
    assert any("r-1a2b3c4d" in ln for ln in lines), lines
    assert any("ready 7  blocked 2  done 1  failed 0  running 29" in ln for ln in lines), lines
    assert any("T-1" in ln for ln in lines) and any("more" in ln for ln in lines), lines
