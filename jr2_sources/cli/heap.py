"""The `jr2 work` process's glibc heap: one malloc arena, and freed memory given back when idle.

`share_malloc_arena` asks glibc for one arena (`M_ARENA_MAX` = 1) before the worker threads
start, so the threads that read the tracker's answers do not each keep their own high-water
mark; the command line calls it, a program that calls `compose.work` keeps its own allocator
settings. `IdleTrim`, an observer of every `work()` run, calls `malloc_trim(0)` once no worker
has run for `after` seconds, so a long-lived `--wait` pool falls back to its idle size after a
burst. Off glibc both do nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import sys
from collections.abc import Callable

from jr2_core import RunEvent

__all__ = ["IdleTrim", "malloc_trim", "share_malloc_arena"]

M_ARENA_MAX = -8
"""glibc's `mallopt` parameter for the most arenas (malloc.h)."""

_ENDED = frozenset({"worker_finished", "worker_failed", "worker_cancelled"})


def _glibc(name: str) -> Callable[..., int] | None:
    """The glibc function `name` with int arguments and result, or None off glibc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


def share_malloc_arena() -> bool:
    """Ask glibc for one malloc arena; True when it agreed (False off glibc or on refusal)."""
    mallopt = _glibc("mallopt")
    return mallopt is not None and bool(mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(1)))


def malloc_trim() -> bool:
    """Give the heap's free pages back to the system; True when glibc released any."""
    trim = _glibc("malloc_trim")
    return trim is not None and bool(trim(ctypes.c_size_t(0)))


class IdleTrim:
    """A run observer: `trim()` once no worker has run for `after` seconds (module notes)."""

    def __init__(self, after: float = 1.0, trim: Callable[[], object] = malloc_trim) -> None:
        self.after = after
        self.trim = trim
        self.running = 0
        self._timer: asyncio.TimerHandle | None = None

    def observe(self, event: RunEvent) -> None:
        """Count the workers running; when the last ends, trim after `after` seconds unless one
        starts first."""
        if event.kind == "worker_started":
            self.running += 1
            self._cancel()
        elif event.kind in _ENDED:
            self.running = max(0, self.running - 1)
            if self.running == 0:
                self._cancel()
                self._timer = asyncio.get_running_loop().call_later(self.after, self._fire)
        elif event.kind == "run_ended":
            self._cancel()

    def _fire(self) -> None:
        self._timer = None
        if self.running == 0:
            self.trim()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
