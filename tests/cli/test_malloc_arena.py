"""`jr2 work` asks glibc for one malloc arena, and does nothing where there is no glibc."""

from __future__ import annotations

import ctypes
import platform
import sys

import pytest

from jr2_sources.cli import arenas


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="needs glibc")
def test_glibc_agrees_to_one_arena() -> None:
    assert arenas.share_malloc_arena() is True


def test_another_system_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert arenas.share_malloc_arena() is False


def test_a_libc_without_mallopt_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_libc(name: object) -> object:
        raise OSError("no libc")

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert arenas.share_malloc_arena() is False
