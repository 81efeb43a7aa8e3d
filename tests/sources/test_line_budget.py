"""The line budgets (ISSUE-NOTES 11) count every `.py` file of jr2_core and jr2_sources except
the playground and the fake trackers it serves (`tools/dev.py lines`)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import dev  # noqa: E402


def test_the_budgets_leave_out_only_the_playground_and_its_fakes() -> None:
    counted = {p.relative_to(ROOT).as_posix() for p in dev.budget_files("jr2_sources")}
    every = {p.relative_to(ROOT).as_posix() for p in (ROOT / "jr2_sources").rglob("*.py")}
    left_out = every - counted
    assert "jr2_sources/testing/fakes/github_server.py" in left_out
    assert "jr2_sources/playground/cli.py" in left_out
    assert all(p.startswith(dev.UNBUDGETED) for p in left_out)
    assert "jr2_sources/testing/__init__.py" in counted  # the conformance kit counts
    assert "jr2_sources/cli/commands.py" in counted
