"""Shared fixtures: every test gets its own state directory and working directory.

Hypothesis runs derandomized in CI (the `ci` profile, loaded when `CI=true`): a CI run is
deterministic, so a red build is a real change, while local runs keep exploring new examples.
Where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE), jr2 and its plugins are
byte-compiled once at the start, as pip compiles an installed jr2: otherwise every `jr2` process
a test starts compiles its modules from source again (about 0.08 s of CPU each, thousands of
processes a run). A run started where SIGINT is ignored (a background job of a script, nohup)
restores its default first: the processes a test interrupts with SIGINT would inherit the
ignoring and never end.
"""

from __future__ import annotations

import compileall
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from clihelp import end_started

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile jr2 and the plugins once (in the controlling process, before any worker);
    let SIGINT reach the processes tests start."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not hasattr(config, "workerinput"):
        for package in ("jr2_core", "jr2_sources", "plugins"):
            compileall.compile_dir(ROOT / package, quiet=2)


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
