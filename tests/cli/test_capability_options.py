"""Each capability's options of `jr2 work` / `jr2 ready` are declared once, in its slice
(`jr2_sources.capabilities`), and the commands apply them from there: no `click.option` of a
capability's option is written in `jr2_sources/cli`, and each one is declared by a slice."""

from __future__ import annotations

import ast
from pathlib import Path

import click

import jr2_sources
from jr2_sources.capabilities import CAPABILITIES, options

PACKAGE = Path(jr2_sources.__file__).resolve().parent


def declared(root: Path) -> dict[str, list[str]]:
    """Option name -> the files under `root` whose `click.option(...)` calls declare it."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and ast.unparse(node.func) == "click.option"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                found.setdefault(str(node.args[0].value), []).append(path.name)
    return found


def test_capability_options_are_declared_in_their_slices_only() -> None:
    needed = {o for c in CAPABILITIES for o in c.options} - {"--trust"}  # a kind option
    assert {"--max-attempts", "--gate", "--dashboard", "--control-issue"} <= needed
    in_cli = declared(PACKAGE / "cli")
    assert "--cap" in in_cli  # the scan reads the commands
    assert sorted(needed & set(in_cli)) == []
    in_slices = declared(PACKAGE / "capabilities")
    assert sorted(needed - set(in_slices)) == []


def test_options_applies_its_decorators_in_help_order() -> None:
    both = options(click.option("--first"), click.option("--second"))

    @click.command()
    @both
    @click.option("--third")
    def cmd(first: str | None, second: str | None, third: str | None) -> None:
        """A command."""

    assert [p.name for p in cmd.params] == ["first", "second", "third"]
