"""Fixtures of the GitHub source tests: documented JSON shapes and a fake GitHub."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gh_helpers import load

from jr2_sources.testing.fakes.github_server import FakeGitHub


@pytest.fixture
def fixture() -> Callable[[str], Any]:
    return load


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    server.next_number.setdefault("o/r", 1)
    try:
        yield server
    finally:
        server.stop()
