"""Fixtures shared by the GitLab plugin's tests: a stateful fake GitLab on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_gitlab import FakeGitLab


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    """A fresh, empty fake GitLab, stopped when the test ends."""
    f = FakeGitLab().start()
    try:
        yield f
    finally:
        f.stop()
