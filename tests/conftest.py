"""Shared fixtures: every test gets its own state directory and working directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("JR2_STATE_DIR", str(tmp_path / ".jr2"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "JIRA_API_TOKEN", "JIRA_PAT"):
        monkeypatch.delenv(name, raising=False)
    yield
