"""Fencing: a command never outlives its pool's lease by more than a few seconds, even when the
pool process is stopped (SIGSTOP, a closed laptop lid) or killed.

One supervisor process per pool reads lines on a pipe from it: `PGID SECONDS GRACE` (the group's
deadline, set or renewed; `inf`: none) and `PGID -` (the command ended). A group past its
deadline gets SIGTERM, then SIGKILL after its grace; when the pipe closes every group left gets
SIGTERM, then SIGKILL `GRACE` later. It ignores the terminal's signals. Standard library only, so
it runs as a script (`python -I .../fence.py`). The pool side is `Fence` (`guard` / `release`
for a command's group, `lease` / `drop` for its deadline, by item id).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import select
import signal
import subprocess
import sys
import time

log = logging.getLogger("jr2.fence")

GRACE = 2.0
"""The longest grace between SIGTERM and SIGKILL once the pool is gone."""
BATCH = 0.05
"""While groups are fenced, the supervisor reads the pipe at most this often."""


def _now() -> float:
    """Seconds on a clock that also runs while the machine sleeps (a lease on a tracker does)."""
    return time.clock_gettime(getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC))


def _signal(pgid: int, sig: int) -> bool:
    """Send `sig` to group `pgid`; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a pgid reused by someone else's group: not ours any more
        return False
    return True


def supervise(stream: int) -> None:
    """The supervisor: read deadlines from file descriptor `stream` until it closes. Lines are
    read before any deadline is judged, and while groups are fenced it reads at most every
    `BATCH` seconds: a pool's writes then wake no process (two an item)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGTSTP,
                signal.SIGTTIN, signal.SIGTTOU, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    deadline: dict[int, float] = {}
    grace: dict[int, float] = {}
    killing: dict[int, float] = {}  # group -> when SIGKILL follows its SIGTERM
    buf = b""
    open_ = True
    while open_ or deadline or killing:
        now = _now()
        if open_ and select.select([stream], [], [], _next_wake(now, deadline, killing))[0]:
            chunk = os.read(stream, 1 << 16)
            if not chunk:
                open_ = False
                killing = {pgid: min(at, now + GRACE) for pgid, at in killing.items()}
            *lines, buf = (buf + chunk).split(b"\n")
            for line in lines:
                _apply(line, deadline, grace, killing)
        now = _now()
        for pgid, at in list(deadline.items()):
            if at <= now or not open_:
                del deadline[pgid]
                wait = grace.get(pgid, GRACE) if open_ else GRACE  # the pool gone: short
                if _signal(pgid, signal.SIGTERM):
                    killing[pgid] = now + wait
        for pgid, at in list(killing.items()):
            if not _signal(pgid, 0):
                del killing[pgid]
            elif at <= now:
                _signal(pgid, signal.SIGKILL)
                del killing[pgid]
        if not open_:
            if killing:
                time.sleep(0.05)
        elif deadline:  # let the pool's next lines gather
            time.sleep(min(BATCH, _next_wake(now, deadline, killing)))


def _apply(line: bytes, deadline: dict[int, float], grace: dict[int, float],
           killing: dict[int, float]) -> None:
    """One line from the pool: `PGID SECONDS GRACE` or `PGID -` (ended)."""
    fields = line.split()
    with contextlib.suppress(ValueError, IndexError):
        pgid = int(fields[0])
        if fields[1] == b"-":
            deadline.pop(pgid, None)
            grace.pop(pgid, None)
            killing.pop(pgid, None)
            return
        deadline[pgid] = _now() + float(fields[1])  # inf: until the pool ends
        grace[pgid] = float(fields[2])


def _next_wake(now: float, deadline: dict[int, float], killing: dict[int, float]) -> float:
    """How long the supervisor may wait for the pipe before a deadline needs it."""
    if killing:
        return 0.05
    return min(max(0.0, min(deadline.values(), default=math.inf) - now), 60.0)


class Fence:
    """The pool's side: which group runs which item, and each item's lease deadline. The
    supervisor starts before the first command (`start`); `close` ends it (and any group still
    fenced)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._groups: dict[str, int] = {}
        self._leases: dict[str, tuple[float, float]] = {}  # item -> (deadline, grace), _now()
        self._lapsed: set[str] = set()  # items whose command ran past its deadline
        self._broken = False

    def guard(self, key: str, pgid: int) -> None:
        """Command group `pgid` runs item `key`: fence it by the item's lease."""
        self._groups[key] = pgid
        self._send(key)

    def release(self, key: str) -> None:
        """Item `key`'s command group ended."""
        pgid = self._groups.pop(key, None)
        if pgid is not None:
            self._note_lapse(key)
            self._write(f"{pgid} -\n")

    def lease(self, key: str, seconds: float, grace: float) -> None:
        """Item `key`'s command must end in `seconds` unless renewed (SIGKILL `grace` later)."""
        if key in self._groups:
            self._note_lapse(key)
        self._leases[key] = (_now() + seconds, grace)
        if key in self._groups:
            self._send(key)

    def lapsed(self, key: str) -> bool:
        """Whether item `key`'s command ran past a deadline before it was renewed or the
        command ended: the supervisor may have ended it, so its outcome is not the command's."""
        return key in self._lapsed

    def drop(self, key: str) -> None:
        """Item `key` holds no lease any more (settled)."""
        self._leases.pop(key, None)
        self._lapsed.discard(key)

    def _note_lapse(self, key: str) -> None:
        lease = self._leases.get(key)
        if lease is not None and lease[0] <= _now():
            self._lapsed.add(key)

    def _send(self, key: str) -> None:
        at, grace = self._leases.get(key, (math.inf, GRACE))
        self._write(f"{self._groups[key]} {at - _now():.3f} {grace:.3f}\n")

    def start(self) -> None:
        """Start the supervisor, if it is not running yet: before the first command starts, so
        the command is fenced from its first moment (`guard` is then one write)."""
        if self._proc is None and not self._broken:
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", __file__], stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL, close_fds=True)
            except OSError as exc:
                self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self._broken = True
        log.warning("jr2: the command supervisor stopped (%s): commands are no longer "
                    "fenced by their leases", exc)

    def _write(self, line: str) -> None:
        self.start()
        if self._proc is None:
            return
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(line.encode())
            self._proc.stdin.flush()
        except OSError as exc:
            self._proc = None
            self._fail(exc)

    def close(self) -> None:
        """End the supervisor (it ends whatever it still fences first)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=GRACE + 1)


if __name__ == "__main__":
    supervise(sys.stdin.fileno())
