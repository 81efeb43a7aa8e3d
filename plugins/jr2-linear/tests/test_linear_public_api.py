"""The plugin is built from jr2's public API only (docs/guides/write-a-source-plugin.md, "What is
public API"), as the testing kit's `private_imports` judges it."""

from __future__ import annotations

from pathlib import Path

from jr2_sources.testing import private_imports

PACKAGE = Path(__file__).resolve().parents[1] / "jr2_linear"


def test_the_plugin_imports_only_public_names() -> None:
    assert sorted(PACKAGE.glob("*.py"))
    seen, private = private_imports(PACKAGE)
    assert seen > 10  # the scan reads the plugin's imports at all
    assert private == []
