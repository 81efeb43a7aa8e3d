"""The README's main job: the demo ends the way it says, every time, and the commands it prints
are what a shell runs when they are pasted."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from clihelp import ROOT


def test_the_demo_runs_the_backlog_and_the_gates_and_exits_0() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py"), "--gates"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "demo: OK" in res.stdout
    assert "T-4  needs T-9, which does not exist" in res.stdout
    commands = [ln[2:] for ln in res.stdout.splitlines() if ln.startswith("$ ")]
    assert any(c.startswith("jr2 send") for c in commands), commands
    for command in commands:  # bash reads it, and an --input is the JSON the demo sent
        check = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
        assert check.returncode == 0, (command, check.stderr)
        words = shlex.split(command, comments=True)
        if "--input" in words:
            assert json.loads(words[words.index("--input") + 1]) == {"reason": "Not now."}
