"""`jr2 work` options that only mean something together are refused alone, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from clihelp import jr2
from jr2_core.errors import UsageError


@pytest.mark.parametrize("opts", [
    ["--transient-exit", "3"],
    ["--retry-backoff", "5s"],
    ["--retry-backoff-max", "2h"],
    ["--max-attempts", "1", "--retry-backoff", "30s"],  # the default value, given: still refused
])
def test_retry_options_without_attempts_to_retry_are_a_usage_error(tmp_path: Path,
                                                                   opts: list[str]) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    res = jr2("work", "local:b.toml", *opts, "--", "sh", "-c", "exit 75", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    [line] = res.stderr.splitlines()
    assert f"{opts[-2]} retries an item: it needs --max-attempts above 1" in line
    assert not (tmp_path / ".jr2" / "logs").exists()  # nothing ran, nothing was claimed


def test_retry_options_with_attempts_and_the_defaults_are_accepted(tmp_path: Path) -> None:
    from jr2_sources.cli.compose import work

    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    with pytest.raises(UsageError, match="--transient-exit retries an item"):
        work(f"local:{tmp_path / 'b.toml'}", ["true"], state=tmp_path / "s", transient_exit=[3])
    done = work(f"local:{tmp_path / 'b.toml'}", ["true"], state=tmp_path / "s")
    assert done.exit_code == 0
    res = jr2("work", "local:b.toml", "--max-attempts", "2", "--transient-exit", "3",
              "--retry-backoff", "1s", "--retry-backoff-max", "2s", "--", "true", cwd=tmp_path)
    assert res.returncode == 0, res.stderr  # A is done already: drained
