"""Shared fixtures: every test gets its own state directory and working directory.

Hypothesis runs derandomized in CI (the `ci` profile, loaded when `CI=true`): a CI run is
deterministic, so a red build is a real change, while local runs keep exploring new examples.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from clihelp import end_started

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() in ("true", "1"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("JR2_STATE_DIR", str(tmp_path / ".jr2"))
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "JIRA_API_TOKEN", "JIRA_PAT"):
        monkeypatch.delenv(name, raising=False)
    yield
    end_started()  # a test that failed half-way leaves no pool running
