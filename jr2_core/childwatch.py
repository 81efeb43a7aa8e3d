"""Hearing a command's exit without a thread per command (Python 3.11 on Linux).

Design notes
------------
On Python 3.11, asyncio learns that a child process exited through its default child watcher,
`ThreadedChildWatcher`: one new thread per process, blocked in `waitpid`, which then wakes the
loop from outside. For `jr2 work` that is a thread created and joined per item, and a thread
that competes with the loop for the GIL while the next command starts (about a third of the
futex calls of a 1,000-item drain). Python 3.12 watches a child through a pidfd on the loop
itself where the kernel has them; this module gives 3.11 the same: `PidfdWatcher` opens a pidfd
(`os.pidfd_open`, Linux 5.3+) for each child, the running loop reads it, and `waitpid` runs on
the loop when it becomes readable (it never blocks then).

Unlike asyncio 3.11's own `PidfdChildWatcher`, which is attached to one loop, this one uses the
loop running when the child is added, so any number of loops (`asyncio.run` called again, tests,
a caller's own loop) may share it, as the threaded watcher allowed.

`install()` puts it in place only where it is safe and useful: Python < 3.12, the default
policy, that policy still on its default `ThreadedChildWatcher` with no child in flight (a
watcher someone chose is left alone), and `pidfd_open` working here (a kernel without it keeps
the threaded watcher). It is called before the first command starts, and costs nothing after.
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

_installed = False


class PidfdWatcher(asyncio.AbstractChildWatcher):
    """A child watcher on pidfds, each read by the loop that was running when its child was
    added (so no thread per child, and no loop of its own)."""

    def __init__(self) -> None:
        self._callbacks: dict[int, tuple[asyncio.AbstractEventLoop, int, Callable[..., Any],
                                         tuple[Any, ...]]] = {}

    def __enter__(self) -> PidfdWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def is_active(self) -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Nothing to attach: each child is read by the loop running when it was added."""

    def close(self) -> None:
        for pid in list(self._callbacks):
            self.remove_child_handler(pid)

    def add_child_handler(self, pid: int, callback: Callable[..., object],  # type: ignore[override]
                          *args: Any) -> None:
        loop = asyncio.get_running_loop()
        old = self._callbacks.get(pid)
        if old is not None:
            self._callbacks[pid] = (old[0], old[1], callback, args)
            return
        pidfd = os.pidfd_open(pid)
        loop.add_reader(pidfd, self._do_wait, pid)
        self._callbacks[pid] = (loop, pidfd, callback, args)

    def remove_child_handler(self, pid: int) -> bool:
        entry = self._callbacks.pop(pid, None)
        if entry is None:
            return False
        loop, pidfd, _, _ = entry
        if not loop.is_closed():
            loop.remove_reader(pidfd)
        os.close(pidfd)
        return True

    def _do_wait(self, pid: int) -> None:
        loop, pidfd, callback, args = self._callbacks.pop(pid)
        loop.remove_reader(pidfd)
        os.close(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # reaped elsewhere: what asyncio's own watchers report
            returncode = 255
        else:
            returncode = os.waitstatus_to_exitcode(status)
        callback(pid, returncode, *args)


def _pidfd_works() -> bool:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return False
    try:
        os.close(opener(os.getpid()))
    except OSError:  # ENOSYS: a kernel before 5.3; EPERM under some sandboxes
        return False
    return True


def install() -> bool:
    """Use `PidfdWatcher` for this process's subprocesses where it is safe (see the module
    notes); True when it is in place."""
    global _installed
    if _installed:
        return True
    if sys.version_info >= (3, 12) or sys.platform != "linux":
        return False  # 3.12+ watches pidfds itself
    policy = asyncio.get_event_loop_policy()
    if type(policy) is not asyncio.DefaultEventLoopPolicy:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        current = policy.get_child_watcher()
        busy = bool(getattr(current, "_threads", None))
        if type(current) is not asyncio.ThreadedChildWatcher or busy or not _pidfd_works():
            return False
        policy.set_child_watcher(PidfdWatcher())
    _installed = True
    return True
