"""Run the `jr2` CLI in a subprocess, as a user would."""

from __future__ import annotations

import contextlib
import os
import signal
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


def jr2_here(*args: str, cwd: Path,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`jr2 ARGS` inside this process (click's CliRunner, from `cwd`): the exit code, stdout
    and stderr a process would give, without its start-up. Only for commands that need no
    process of their own (no signals, no event loop left running); `env` is the whole
    environment the command sees for its duration, as a process's would be. An exception a
    process would print as a traceback is raised."""
    from click.testing import CliRunner

    from jr2_core.cli import main

    here = os.getcwd()
    os.chdir(cwd)
    try:
        unset: dict[str, str | None] = {k: None for k in os.environ if env is not None
                                        and k not in env}
        res = CliRunner().invoke(main, list(args), prog_name="jr2",
                                 env={**unset, **(env or {})})
    finally:
        os.chdir(here)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return subprocess.CompletedProcess(["jr2", *args], res.exit_code, res.stdout, res.stderr)


STARTED: list[subprocess.Popen[str]] = []
"""Every `popen` of the running test: conftest ends those still running when it ends."""


def popen(*args: str, cwd: Path, **kw: Any) -> subprocess.Popen[str]:
    proc = subprocess.Popen([*JR2, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=kw.pop("env", None) or env(),
                            **kw)
    STARTED.append(proc)
    return proc


def end_started(grace: float = 5.0) -> None:
    """End the `jr2` processes a test left running (it failed half-way): SIGTERM, which ends
    their commands and releases their claims, then SIGKILL after `grace`; so a failed test
    leaves no pool behind to load the rest of the run."""
    left = [p for p in STARTED if p.poll() is None]
    STARTED.clear()
    for proc in left:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGCONT)  # a test may have stopped it
            proc.terminate()
    for proc in left:
        try:
            proc.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


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
