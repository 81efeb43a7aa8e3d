"""Named sources from jr2.toml and [tool.jr2]."""

from __future__ import annotations

import json
from pathlib import Path

from clihelp import jr2


def setup(tmp_path: Path, config: str, name: str = "jr2.toml") -> None:
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "A"\ntitle = "a"\nlabels = ["agent"]\n'
        '[[items]]\nid = "B"\ntitle = "b"\n')
    (tmp_path / name).write_text(config)


def test_a_named_source_from_jr2_toml(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\nlabel = ["agent"]\n')
    res = jr2("ready", "work", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["A"]


def test_command_line_options_override_the_file(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\nlabel = ["agent"]\n')
    res = jr2("ready", "work", "--label", "nothing-has-this", "--json", cwd=tmp_path)
    assert json.loads(res.stdout)["ready"] == []


def test_tool_jr2_in_pyproject(tmp_path: Path) -> None:
    setup(tmp_path, '[tool.jr2.sources.all]\nkind = "local"\ntarget = "b.toml"\n',
          name="pyproject.toml")
    res = jr2("ready", "all", "--json", cwd=tmp_path)
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["A", "B"]


def test_errors_name_the_file_the_source_and_the_field(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\nlabel = "agent"\n')
    res = jr2("ready", "work", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: jr2.toml: source 'work': label: ")


def test_inline_secrets_are_refused(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.gh]\nkind = "local"\ntarget = "b.toml"\ntoken = "ghp_abcdef123"\n')
    res = jr2("ready", "gh", cwd=tmp_path)
    assert res.returncode == 2 and "looks like a secret" in res.stderr
    assert "ghp_abcdef123" not in res.stderr


def test_an_unknown_name_lists_the_named_sources(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\n')
    res = jr2("ready", "wrok", cwd=tmp_path)
    assert res.returncode == 2 and "named source (work)" in res.stderr
