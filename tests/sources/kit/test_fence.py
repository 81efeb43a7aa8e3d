"""The command supervisor (`jr2_sources.kit.fence`): deadlines, renewals, the pipe's end."""

from __future__ import annotations

import signal
import subprocess
import time

from jr2_sources.kit.fence import Fence


def group(script: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sh", "-c", script], start_new_session=True)


def ended_within(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


def test_a_group_past_its_deadline_gets_sigterm_then_sigkill_after_its_grace() -> None:
    fence = Fence()
    stubborn = group('trap "" TERM; while :; do sleep 0.05; done')
    try:
        fence.lease("a", 0.3, 0.5)
        began = time.monotonic()
        fence.guard("a", stubborn.pid)
        assert ended_within(stubborn, 5) == -signal.SIGKILL
        assert 0.7 <= time.monotonic() - began < 3
    finally:
        stubborn.kill()
        fence.close()


def test_renewals_keep_a_group_running_and_it_ends_once_they_stop() -> None:
    fence = Fence()
    proc = group("sleep 30")
    try:
        fence.guard("a", proc.pid)
        for _ in range(8):  # 1.6 s, past the first deadline
            fence.lease("a", 0.5, 0.5)
            time.sleep(0.2)
        assert proc.poll() is None
        assert ended_within(proc, 3) == -signal.SIGTERM
    finally:
        proc.kill()
        fence.close()


def test_closing_the_pipe_ends_every_group_and_a_released_one_is_left_alone() -> None:
    fence = Fence()
    procs = [group("sleep 30") for _ in range(3)]
    try:
        for i, proc in enumerate(procs):
            fence.guard(str(i), proc.pid)  # no lease: until the pool ends
        fence.release("2")
        time.sleep(0.3)
        assert all(p.poll() is None for p in procs)
        fence.close()
        assert [ended_within(p, 3) for p in procs[:2]] == [-signal.SIGTERM] * 2
        assert procs[2].poll() is None
    finally:
        for proc in procs:
            proc.kill()
        fence.close()
