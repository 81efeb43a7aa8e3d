"""Fixtures of the Jira source tests: documented JSON shapes and a fake Jira."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jr2_sources.testing.fakes.jira_server import FakeJira


@pytest.fixture
def fake() -> Iterator[FakeJira]:
    server = FakeJira().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_dc() -> Iterator[FakeJira]:
    server = FakeJira(cloud=False).start()
    try:
        yield server
    finally:
        server.stop()
