"""`jr2 work`'s heap: one glibc malloc arena, free pages given back once the pool is idle, and
nothing done where there is no glibc."""

from __future__ import annotations

import asyncio
import ctypes
import platform
import sys

import pytest

from jr2_core import RunEvent
from jr2_sources.cli import heap

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="needs glibc")


@glibc
def test_glibc_agrees_to_one_arena() -> None:
    assert heap.share_malloc_arena() is True


@glibc
def test_glibc_gives_free_pages_back() -> None:
    blocks = [bytearray(4096) for _ in range(20_000)]
    del blocks
    assert heap.malloc_trim() is True


def test_another_system_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert heap.share_malloc_arena() is False
    assert heap.malloc_trim() is False


def test_a_libc_without_mallopt_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_libc(name: object) -> object:
        raise OSError("no libc")

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert heap.share_malloc_arena() is False
    assert heap.malloc_trim() is False


def _event(kind: str, item: str = "1") -> RunEvent:
    return RunEvent(kind, "run", item_id=item)


async def test_the_heap_is_trimmed_once_when_the_last_worker_ends_and_none_starts() -> None:
    trims: list[int] = []
    idle = heap.IdleTrim(after=0.05, trim=lambda: trims.append(1))
    idle.observe(_event("worker_started", "1"))
    idle.observe(_event("worker_started", "2"))
    idle.observe(_event("worker_finished", "1"))
    await asyncio.sleep(0.1)
    assert trims == []  # one still runs
    idle.observe(_event("worker_failed", "2"))
    await asyncio.sleep(0.1)
    assert trims == [1]
    await asyncio.sleep(0.1)
    assert trims == [1]


async def test_a_worker_starting_within_the_quiet_time_puts_the_trim_off() -> None:
    trims: list[int] = []
    idle = heap.IdleTrim(after=0.1, trim=lambda: trims.append(1))
    for n in range(5):  # a burst: each item ends just before the next starts
        idle.observe(_event("worker_started", str(n)))
        idle.observe(_event("worker_finished", str(n)))
        await asyncio.sleep(0.02)
    assert trims == []
    await asyncio.sleep(0.2)
    assert trims == [1]


async def test_the_end_of_the_run_cancels_a_pending_trim() -> None:
    trims: list[int] = []
    idle = heap.IdleTrim(after=0.05, trim=lambda: trims.append(1))
    idle.observe(_event("worker_started"))
    idle.observe(_event("worker_cancelled"))
    idle.observe(RunEvent("run_ended", "run"))
    await asyncio.sleep(0.1)
    assert trims == []
