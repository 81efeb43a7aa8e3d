"""Ending the `jr2` process without the interpreter's teardown, when the command says it may.

Design notes. A CPython process that returns from its main function tears itself down: it
joins the non-daemon threads, runs the `atexit` handlers, flushes stdout and stderr, and then
frees every module and object it holds (finalizers run, file buffers are flushed on their
way out). For `jr2 work` the last step alone is about 20-30 ms, a tenth of a 100-item drain
(docs/performance.md §6); `os._exit` skips it.

Skipping it is safe only when no finalizer is left with work to do, so it is opt-in, per
command and per run: a command that has closed everything it opened (its tracker and store
committed and closed, its log files closed, every child reaped) calls `ready()` just before it
exits. The console entry point (`jr2_core.cli.entry`, also behind `python -m jr2_core`) then
hands `SystemExit`'s code to `finish()`, which does what the teardown would have done that
can still matter — the `atexit` handlers (logging's, a plugin's), flushing stdout and stderr —
and ends with `os._exit(code)`. The exit code is the same as the ordinary exit's.

Everything else keeps the ordinary exit: a command that did not opt in (`jr2 run` runs a
user's workflow in this process: its open files are flushed by the teardown), a live non-daemon
thread (the ordinary exit waits for it), a profiler (`python -m cProfile` writes its results
after the command returns), an exit code that is not a number (a message), an
output that cannot be flushed (the ordinary exit reports it and exits 120, as Python does),
and any caller that runs the command line in its own process (`main()` or click's `CliRunner`
in tests never reaches the entry point).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

_ready = False


def ready() -> None:
    """Say that this command has closed everything it opened: the console entry point may end
    the process without the interpreter's teardown (`finish`)."""
    global _ready
    _ready = True


def finish(code: object) -> None:
    """End the process now with `code` (a `SystemExit` code: None or an int) when a command
    called `ready()` and nothing needs the ordinary exit; otherwise return, and the caller
    exits the ordinary way."""
    global _ready
    if not _ready or not (code is None or isinstance(code, int)):
        return
    _ready = False
    if sys.getprofile() is not None:
        return  # a profiler (`python -m cProfile`) writes its results after main returns
    main = threading.main_thread()
    if any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate()):
        return  # the ordinary exit waits for it
    atexit._run_exitfuncs()  # then cleared: the ordinary exit would not run them twice
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return  # reported by the ordinary exit, which flushes again (exit code 120)
    os._exit(code or 0)
