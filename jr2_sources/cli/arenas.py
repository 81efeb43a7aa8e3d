"""One glibc malloc arena for the whole `jr2 work` process.

glibc gives each thread that allocates its own arena (up to 8 per core), and an arena keeps its
high-water mark: the worker threads that read the tracker's answers would each hold megabytes
of freed memory after a burst of items. Those threads allocate under the GIL, so one shared
arena is seldom contended. `share_malloc_arena` asks for it (`M_ARENA_MAX` = 1) before the
worker threads start; elsewhere (another libc, another system) it does nothing. Called by the
command line only: a program that calls `compose.work` keeps its own allocator settings.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["share_malloc_arena"]

M_ARENA_MAX = -8
"""glibc's `mallopt` parameter for the most arenas (malloc.h)."""


def share_malloc_arena() -> bool:
    """Ask glibc for one malloc arena; True when it agreed (False off glibc or on refusal)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, 1))
