"""`work()`: `jr2 work`'s composition as a Python function (the command calls it)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from jr2_core.errors import UsageError
from jr2_sources.cli.compose import WorkResult, work, work_async


def _backlog(tmp_path: Path) -> Path:
    path = tmp_path / "b.toml"
    path.write_text('[[items]]\nid = "A"\ntitle = "first"\n'
                    '[[items]]\nid = "B"\ntitle = "second"\nneeds = ["A"]\n'
                    '[[items]]\nid = "C"\ntitle = "third"\nlabels = ["other"]\n')
    return path


def _recorder(tmp_path: Path) -> list[str]:
    seen = tmp_path / "seen"
    return [sys.executable, "-c",
            f"import os; open({str(seen)!r}, 'a').write(os.environ['JR2_ITEM_ID'] + '\\n')"]


def test_work_runs_each_ready_item_once_and_returns_how_the_run_ended(tmp_path: Path) -> None:
    backlog = _backlog(tmp_path)
    result = work(f"local:{backlog}", _recorder(tmp_path), cap=2, lease="1m",
                              workdir=tmp_path, state=tmp_path / "state")
    assert result.exit_code == 0 and result.run.state == "done"
    seen = (tmp_path / "seen").read_text().splitlines()
    assert sorted(seen) == ["A", "B", "C"] and seen.index("A") < seen.index("B")  # B waited
    assert result.tally.done_ids == {"A", "B", "C"} and not result.tally.failed
    assert result.ready_set is not None
    # the claims were settled in the backlog's store: nothing is left to run
    again = work(f"local:{backlog}", ["true"], state=tmp_path / "state")
    assert again.exit_code == 0 and again.tally.done_ids == set()


def test_work_passes_the_kinds_options_and_reports_failures(tmp_path: Path) -> None:
    backlog = _backlog(tmp_path)
    result = work(f"local:{backlog}", ["sh", "-c", "echo no >&2; exit 3"],
                              options=["--label", "other"], workdir=tmp_path,
                              state=tmp_path / "state")
    assert result.exit_code == 1
    assert result.tally.failed == {"C": "exit code 3: no"}  # only the labelled item ran


def test_bad_input_raises_before_anything_is_claimed(tmp_path: Path) -> None:
    backlog = _backlog(tmp_path)
    with pytest.raises(UsageError, match="command not found: no-such-command-xyz"):
        work(f"local:{backlog}", ["no-such-command-xyz"], state=tmp_path / "s")
    with pytest.raises(UsageError, match="--lease"):
        work(f"local:{backlog}", ["true"], lease="soon", state=tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_work_async_runs_inside_a_running_loop(tmp_path: Path) -> None:
    backlog = _backlog(tmp_path)

    async def main() -> WorkResult:
        return await work_async(f"local:{backlog}", _recorder(tmp_path),
                                            workdir=tmp_path, state=tmp_path / "state")

    result = asyncio.run(main())
    assert result.exit_code == 0 and result.tally.done_ids == {"A", "B", "C"}
