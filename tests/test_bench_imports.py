"""Every jr2 module a benchmark (bench/*.py, including the code it runs in child processes)
imports exists, so a module that moves or goes cannot leave a benchmark broken unnoticed."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
_NAMED = re.compile(r"^\s*(?:from|import)\s+((?:jr2_\w+)(?:\.\w+)*)", re.M)


def jr2_modules(source: str) -> set[str]:
    """The jr2 modules `source` imports: its import statements and those in its strings (the
    scripts a benchmark hands to `python -c`)."""
    names = set(_NAMED.findall(source))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("jr2_"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("jr2_"))
    return names


def test_the_finder_sees_imports_in_code_and_in_child_scripts() -> None:
    src = 'import jr2_core.cli\nCHILD = """\nfrom jr2_gone.mod import x\n"""\n'
    assert jr2_modules(src) == {"jr2_core.cli", "jr2_gone.mod"}


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_jr2_module_a_benchmark_imports_exists(script: Path) -> None:
    missing = sorted(m for m in jr2_modules(script.read_text())
                     if importlib.util.find_spec(m) is None)
    assert missing == [], f"{script.name} imports {missing}"
