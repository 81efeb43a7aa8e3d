"""What `jr2 work` spends that no item needs (issue 18: a 100-item drain within 1.5x of the
floor): the exit of a command is heard when it happens, not found by polling (a poll that
doubles from 5 ms to 50 ms added up to one poll period to every item of a short drain), and a
local drain imports neither the run host's HTTP server (loaded on its first request), nor rich,
nor the retry layer (about 0.2 s of CPU at start together)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jr2_sources.cli import runner


async def test_a_command_exit_is_heard_when_it_happens_not_polled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    proc = await runner._spawn(sys.executable, "-c", "import sys; sys.exit(3)",
                               stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    naps: list[float] = []
    real_sleep = asyncio.sleep

    async def counting_sleep(delay: float, *args: Any) -> Any:
        naps.append(delay)
        return await real_sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", counting_sleep)
    assert await asyncio.wait_for(runner._exited(proc), 30) == 3
    assert naps == []
    await proc.wait()


async def test_a_command_whose_child_holds_its_pipes_is_done_when_it_exits() -> None:
    # the child sleeps on with the command's stdout; the command itself exits at once
    proc = await runner._spawn("/bin/sh", "-c", "sleep 5 & exit 0",
                               stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                               start_new_session=True)
    assert await asyncio.wait_for(runner._exited(proc), 4) == 0
    await runner._end_group(proc)


def test_a_local_drain_loads_no_http_server_no_rich_and_no_retry_layer(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    code = ("import atexit, json, sys\n"
            "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
            "from jr2_core.cli import main\n"
            "main(['work', 'local:b.toml', '--state', 'st', '--', 'true'], prog_name='jr2')")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stderr.strip().splitlines()[-1]))
    assert {"jr2_sources.worksource", "jr2_core.host"} <= loaded  # it ran, with its run host
    assert sorted(m for m in ("aiohttp", "rich", "tenacity", "requests") if m in loaded) == []
