"""What a plugin may import from jr2 (docs/guides/write-a-source-plugin.md, "What is public
API"), and the check a plugin's tests run on its own package: a name it imports from jr2 is in
`jr2_core.__all__` or `jr2_sources.__all__`, or comes from a module of `jr2_sources.kit` or
one of `PUBLIC_MODULES`."""

from __future__ import annotations

import ast
from pathlib import Path

import jr2_core
import jr2_sources

__all__ = ["PUBLIC_MODULES", "jr2_imports", "private_imports"]

PUBLIC_MODULES = frozenset({
    "jr2_sources.testing", "jr2_sources.capabilities.approvals.policy",
    "jr2_sources.capabilities.approvals.comments", "jr2_sources.capabilities.webhooks",
    "jr2_sources.capabilities.deltas.since", "jr2_sources.capabilities.deltas.sincewindow",
    "jr2_sources.capabilities.dashboard.target"})
"""The modules public as a whole, besides every module of `jr2_sources.kit`."""

_KIT = "jr2_sources.kit"
_EXPORTS = {"jr2_core": set(jr2_core.__all__), "jr2_sources": set(jr2_sources.__all__)}


def jr2_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) for every import of jr2_core / jr2_sources in one file."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
    return [(m, n) for m, n in found if m.split(".")[0] in _EXPORTS]


def private_imports(package: Path) -> tuple[int, list[str]]:
    """How many jr2 imports the modules of `package` (a directory) make, and those of them
    that are not public API (`file: from module import name`)."""
    seen, private = 0, []
    for path in sorted(package.glob("*.py")):
        for module, name in jr2_imports(path):
            seen += 1
            public = (module in PUBLIC_MODULES
                      or module == _KIT or module.startswith(_KIT + ".")
                      or (module in _EXPORTS and name in _EXPORTS[module]))
            if not public:
                private.append(f"{path.name}: from {module} import {name}")
    return seen, private
