"""The plugin is built from jr2's public API only (docs/guides/write-a-source-plugin.md, "What is
public API"): a name it imports from jr2 is in `jr2_core.__all__` or `jr2_sources.__all__`, or
comes from a module of `jr2_sources.kit` or one of the other public modules."""

from __future__ import annotations

import ast
from pathlib import Path

import jr2_core
import jr2_sources

PACKAGE = Path(__file__).resolve().parents[1] / "jr2_linear"
PUBLIC_MODULES = {"jr2_sources.testing", "jr2_sources.capabilities.approvals.policy",
                  "jr2_sources.capabilities.approvals.comments",
                  "jr2_sources.capabilities.webhooks", "jr2_sources.capabilities.deltas.since",
                  "jr2_sources.capabilities.deltas.sincewindow",
                  "jr2_sources.capabilities.dashboard.target"}
KIT = "jr2_sources.kit"
EXPORTS = {"jr2_core": set(jr2_core.__all__), "jr2_sources": set(jr2_sources.__all__)}
ROOTS = {"jr2_core", "jr2_sources"}


def _jr2_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) for every import of jr2_core / jr2_sources in one file."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
    return [(m, n) for m, n in found if m.split(".")[0] in ROOTS]


def test_the_plugin_imports_only_public_names() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert files
    private = []
    seen = 0
    for path in files:
        for module, name in _jr2_imports(path):
            seen += 1
            public = (module in PUBLIC_MODULES
                      or module == KIT or module.startswith(KIT + ".")  # every kit module
                      or (module in EXPORTS and name in EXPORTS[module]))
            if not public:
                private.append(f"{path.name}: from {module} import {name}")
    assert seen > 10  # the scan reads the plugin's imports at all
    assert private == []
