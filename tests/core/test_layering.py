"""The engine knows nothing about trackers: `jr2_core` imports nothing from `jr2_sources`.

Two checks: importing every `jr2_core` module in a fresh interpreter loads no `jr2_sources`
module, and no `jr2_core` source file imports or names a `jr2_sources` module (built-in plugins
are found through the `jr2` entry points instead).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import jr2_core

CORE = Path(jr2_core.__file__).resolve().parent
MODULES = sorted(f"jr2_core.{p.stem}" for p in CORE.glob("*.py")
                 if p.stem not in {"__init__", "__main__"})
SOURCES_NAME = re.compile(r"^jr2_sources(\.\w+)*$")


def test_importing_every_core_module_loads_nothing_from_jr2_sources() -> None:
    assert len(MODULES) >= 12  # the scan found the package's modules
    code = ("import importlib, json, sys\n"
            f"for name in {MODULES!r}:\n"
            "    importlib.import_module(name)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('jr2'))))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    loaded = json.loads(res.stdout)
    assert set(MODULES) <= set(loaded)
    assert [m for m in loaded if m.split(".")[0] == "jr2_sources"] == []


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string nodes that are docstrings (they may mention jr2_sources in prose)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_core_module_imports_or_names_a_jr2_sources_module() -> None:
    offences = []
    files = sorted(CORE.glob("*.py"))
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docs):
                names = [node.value]
            else:
                continue
            offences += [f"{path.name}:{node.lineno}: {n}" for n in names
                         if SOURCES_NAME.match(n)]
    assert len(files) >= 12
    assert offences == []
