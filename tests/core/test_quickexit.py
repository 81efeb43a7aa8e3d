"""`jr2_core.quickexit`: the process ends without the interpreter's teardown only when a command
said it may, with the same exit code and everything written; otherwise the ordinary exit runs.

Each case runs in a process of its own (the quick exit ends the process). A module-level object
whose finalizer writes a line tells whether the interpreter tore down; an `atexit` handler
whose line must appear either way tells that the handlers ran.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PRELUDE = """
import atexit, os, sys, threading
from jr2_core import quickexit
atexit.register(lambda: os.write(2, b"atexit ran\\n"))
class _Teardown:
    def __del__(self):
        os.write(2, b"torn down\\n")
_marker = _Teardown()
"""


# stdout buffered, as it is by default when it is not a terminal
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PRELUDE + body], capture_output=True,
                          text=True, timeout=60, check=False, env=ENV)


def test_a_ready_command_exits_with_its_code_its_output_flushed_and_no_teardown() -> None:
    big = "x" * 100_000  # far more than stdout's buffer: all of it must reach the pipe
    res = _run(f"sys.stdout.write({big!r}); sys.stdout.write('\\nend\\n')\n"
               "quickexit.ready()\nquickexit.finish(3)\nprint('not reached')\n")
    assert res.returncode == 3
    assert res.stdout == big + "\nend\n"
    assert res.stderr == "atexit ran\n"  # the handlers ran; the teardown did not


@pytest.mark.parametrize("code, expected", [(None, 0), (0, 0), (130, 130)])
def test_the_exit_code_is_the_ordinary_exits(code: int | None, expected: int) -> None:
    res = _run(f"quickexit.ready()\nquickexit.finish({code!r})\n")
    assert res.returncode == expected and res.stderr == "atexit ran\n"


def test_without_ready_the_ordinary_exit_runs() -> None:
    res = _run("quickexit.finish(0)\nprint('returned')\nsys.exit(5)\n")
    assert res.returncode == 5 and res.stdout == "returned\n"
    assert "atexit ran" in res.stderr and "torn down" in res.stderr


def test_a_message_as_the_exit_code_takes_the_ordinary_exit() -> None:
    res = _run("quickexit.ready()\nquickexit.finish('bad')\nprint('returned')\n")
    assert res.returncode == 0 and res.stdout == "returned\n" and "torn down" in res.stderr


def test_a_live_non_daemon_thread_is_waited_for_by_the_ordinary_exit() -> None:
    res = _run("def later():\n"
               "    import time; time.sleep(0.3); os.write(1, b'thread finished\\n')\n"
               "threading.Thread(target=later).start()\n"
               "quickexit.ready()\nquickexit.finish(0)\nos.write(1, b'returned\\n')\n")
    assert res.returncode == 0
    assert res.stdout == "returned\nthread finished\n"
    assert "torn down" in res.stderr


def test_an_output_that_cannot_be_flushed_takes_the_ordinary_exit_and_its_code_120() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _PRELUDE + "sys.stdout.write('buffered')\nos.read(0, 8)\n"
         "quickexit.ready()\nquickexit.finish(0)\nos.write(2, b'returned\\n')\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=ENV)
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.close()  # the reader is gone: flushing stdout fails (EPIPE)
    proc.stdin.write("go\n")
    proc.stdin.close()
    err = proc.stderr.read() if proc.stderr is not None else ""
    assert proc.wait(timeout=60) == 120  # what Python's own exit answers
    assert "returned" in err and "BrokenPipeError" in err


def test_under_a_profiler_the_ordinary_exit_runs() -> None:
    """`python -m cProfile -m jr2_core work ...` writes its profile after the command returns."""
    res = _run("sys.setprofile(lambda *a: None)\nquickexit.ready()\nquickexit.finish(0)\n"
               "sys.setprofile(None)\nos.write(1, b'returned\\n')\n")
    assert res.returncode == 0 and res.stdout == "returned\n" and "torn down" in res.stderr
