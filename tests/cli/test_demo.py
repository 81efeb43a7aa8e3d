"""The README's main job: the demo ends the way it says, every time."""

from __future__ import annotations

import subprocess
import sys

from clihelp import ROOT


def test_the_demo_runs_the_backlog_and_the_gates_and_exits_0() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py"), "--gates"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "demo: OK" in res.stdout
    assert "T-4  needs T-9, which does not exist" in res.stdout
