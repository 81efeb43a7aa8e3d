"""The seam is declared, not probed: no `getattr`, `hasattr` or `__dict__` lookup on a tracker,
an adapter or a config object anywhere in jr2_sources, jr2_core or the plugins, except in the
registry (`jr2_sources/registry.py`, the one place that reads a kind's declarations). A
capability is asked with `isinstance` of its mixin (`jr2_sources.capabilities`)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = [ROOT / "jr2_sources", ROOT / "jr2_core", *sorted((ROOT / "plugins").glob("*/jr2_*"))]
EXEMPT = {ROOT / "jr2_sources" / "registry.py"}
SUSPECT = {"tracker", "adapter", "config", "inner", "cfg", "ad"}
"""Names (of a variable or an attribute, with any leading underscore) that hold a tracker, an
adapter or a config."""


def _names(node: ast.expr) -> set[str]:
    """The names a subject expression is made of (`self._tracker.inner` -> tracker, inner)."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id.lstrip("_"))
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr.lstrip("_"))
    return out


def probes(source: str) -> list[int]:
    """The lines of `source` that look an attribute up by name on a tracker, adapter or config:
    `getattr(x, ...)`, `hasattr(x, ...)`, `vars(x)` or `x.__dict__`."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        subject: ast.expr | None = None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr", "vars"} and node.args):
            subject = node.args[0]
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
            subject = node.value
        if subject is not None and _names(subject) & SUSPECT:
            found.append(node.lineno)
    return found


def test_no_tracker_adapter_or_config_is_probed_by_attribute_name() -> None:
    found = []
    for tree in TREES:
        for path in sorted(tree.rglob("*.py")):
            if path in EXEMPT or "fakes" in path.parts:
                continue
            found += [f"{path.relative_to(ROOT)}:{line}"
                      for line in probes(path.read_text(encoding="utf-8"))]
    assert found == [], "ask a capability with isinstance of its mixin: " + ", ".join(found)


def test_the_check_finds_a_probe_when_one_is_added() -> None:
    assert probes("changes = getattr(self.tracker, 'changes', None)\n") == [1]
    assert probes("x = 1\nif hasattr(adapter, 'gates'):\n    pass\n") == [2]
    assert probes("env = config.__dict__.get('token_env')\n") == [1]
    assert probes("found = vars(self._inner)\n") == [1]
    assert probes("reason = getattr(exc, 'reason', None)\n") == []  # not a tracker
    assert probes("ok = isinstance(tracker, ReadsDeltas)\n") == []
