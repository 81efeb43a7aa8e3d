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


def test_a_renewal_after_the_supervisor_fired_leaves_the_item_lapsed() -> None:
    """The supervisor ended the command at its deadline, and the pool's renewal came after: the
    command's exit (-15) is the fence's doing, so the item counts as lapsed, not failed."""
    fence = Fence()
    late, renewed = group("sleep 30"), group("sleep 30")
    try:
        fence.lease("late", 0.3, 0.5)
        fence.lease("renewed", 0.6, 0.5)
        fence.guard("late", late.pid)
        fence.guard("renewed", renewed.pid)
        time.sleep(0.2)
        fence.lease("renewed", 30, 0.5)  # in time
        assert ended_within(late, 5) == -signal.SIGTERM
        fence.lease("late", 30, 0.5)  # too late: the command is gone
        fence.release("late")
        assert fence.lapsed("late") and not fence.lapsed("renewed")
        fence.drop("late")
        assert not fence.lapsed("late")
    finally:
        for proc in (late, renewed):
            proc.kill()
        fence.close()


def test_a_command_that_ends_past_its_deadline_is_lapsed_and_one_before_is_not() -> None:
    fence = Fence()
    quick, slow = group("true"), group("sleep 30")
    try:
        fence.lease("quick", 30, 0.5)
        fence.lease("slow", 0.2, 0.5)
        fence.guard("quick", quick.pid)
        fence.guard("slow", slow.pid)
        assert ended_within(quick, 5) == 0
        fence.release("quick")
        ended_within(slow, 5)
        fence.release("slow")
        assert fence.lapsed("slow") and not fence.lapsed("quick")
    finally:
        slow.kill()
        fence.close()
