"""Run the `jr2` CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
JR2 = [sys.executable, "-m", "jr2_core"]


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e.update(extra)
    return e


def jr2(*args: str, cwd: Path, timeout: float = 60, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*JR2, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=kw.pop("env", None) or env(), **kw)


def popen(*args: str, cwd: Path, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([*JR2, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=kw.pop("env", None) or env(),
                            **kw)


def wait_for(pred: Callable[[], Any], timeout: float = 20, every: float = 0.05) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not met in time")


def alive(pid: int) -> bool:
    """Whether a process with this id exists (and is not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
