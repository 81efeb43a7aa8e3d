"""`jr2_core.childwatch`: on Python 3.11 (Linux), a command's exit is heard through a pidfd read
by the running loop, not by a new thread per command (asyncio 3.11's default watcher), and any
loop may use it (a second `asyncio.run`, a caller's own loop)."""

from __future__ import annotations

import asyncio
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from jr2_core import childwatch

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12) or sys.platform != "linux",
                                reason="3.12+ watches pidfds itself; pidfds are Linux's")


@contextmanager
def _quiet() -> Iterator[None]:
    """The child-watcher API (deprecated from 3.12 on), without its warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


async def _run_many(codes: list[int]) -> tuple[list[int], int]:
    most = threading.active_count()

    async def one(code: int) -> int:
        nonlocal most
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c",
                                                    f"import sys; sys.exit({code})")
        most = max(most, threading.active_count())
        return await proc.wait()

    got = await asyncio.gather(*(one(c) for c in codes))
    return list(got), most


def test_exits_are_heard_without_a_thread_per_command() -> None:
    assert childwatch.install()
    before = threading.active_count()
    codes, most = asyncio.run(_run_many([0, 3, 0, 79, 1, 0]))
    assert codes == [0, 3, 0, 79, 1, 0]
    assert most == before  # the threaded watcher would have started one thread per command
    with _quiet():
        assert isinstance(asyncio.get_child_watcher(), childwatch.PidfdWatcher)


def test_any_loop_may_use_it_one_after_another() -> None:
    assert childwatch.install()
    for _ in range(3):
        codes, _ = asyncio.run(_run_many([2]))
        assert codes == [2]
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(_run_many([5]))[0] == [5]
    finally:
        loop.close()


def test_a_watcher_someone_chose_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(childwatch, "_installed", False)
    policy = asyncio.get_event_loop_policy()
    with _quiet():
        chosen = asyncio.SafeChildWatcher()
    with _quiet():
        old = asyncio.get_child_watcher()
    try:
        with _quiet():
            policy.set_child_watcher(chosen)
        assert not childwatch.install()
        with _quiet():
            assert asyncio.get_child_watcher() is chosen
    finally:
        with _quiet():
            policy.set_child_watcher(old)
