"""No import cycle in jr2_sources: the graph of every `import`/`from` statement of the package,
top-level and function-local alike (an import inside a function only hides a cycle until the
function runs), has no cycle. Imports under `if TYPE_CHECKING:` never run and are left out.
Importing `a.b.c` runs the package `a.b`'s `__init__` first, so it counts as an import of `a.b`
too (from outside `a.b`: a module inside it runs after its package has begun)."""

from __future__ import annotations

import ast
from pathlib import Path

import jr2_sources

PACKAGE = Path(jr2_sources.__file__).resolve().parent


def _modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package's `__init__`), for every `.py` file under `root`."""
    found = {}
    for path in root.rglob("*.py"):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under an `if TYPE_CHECKING:` (never run)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of `package` (its files under `root`) -> the modules of `package` it imports
    anywhere in its file: `from a import b` counts `a.b` when that is a module, else `a`; and
    the packages each of those is in, but the ones the importing module is in itself."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here[:len(here) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
                    graph[name].update(p for p in _packages_of(target) if p in modules
                                       and p != name and p not in _packages_of(name))
    return graph


def _packages_of(module: str) -> set[str]:
    """The packages `module` is in: `a.b.c` -> {`a`, `a.b`}."""
    parts = module.split(".")
    return {".".join(parts[:n]) for n in range(1, len(parts))}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_jr2_sources_has_no_import_cycle() -> None:
    graph = import_graph(PACKAGE, "jr2_sources")
    assert len(graph) > 100  # the scan found the package
    assert {"jr2_sources.cli.compose", "jr2_sources.cli.source"} <= graph["jr2_sources.cli.work"]
    compose = graph["jr2_sources.cli.compose"]
    assert {"jr2_sources.capabilities.dashboard.command",
            "jr2_sources.cli.doors"} <= compose  # doors: a function-local one counts
    assert cycles(graph) == []


def test_a_cycle_hidden_in_a_function_is_found_and_type_checking_imports_are_not(
        tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import thing\n")
    (pkg / "a.py").write_text("def f():\n    from .sub.b import thing\n    return thing\n")
    (pkg / "sub" / "b.py").write_text("import pkg.c\nthing = 1\n")
    (pkg / "c.py").write_text("def g():\n    from pkg import a\n    return a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from pkg import e\n")
    (pkg / "e.py").write_text("from . import d\n")
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.sub"] == {"pkg.sub.b"} and graph["pkg.d"] == set()
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub", "pkg.sub.b"]]


def test_a_cycle_through_a_packages_init_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "hub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "hub" / "__init__.py").write_text("from .x import X\n")  # re-exports its module
    (pkg / "hub" / "x.py").write_text("from pkg.user import f\nX = 1\n")
    (pkg / "hub" / "y.py").write_text("Y = 2\n")
    (pkg / "user.py").write_text("from pkg.hub.y import Y\nf = Y\n")  # runs the hub first
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.user"] == {"pkg.hub.y", "pkg.hub"} and graph["pkg.hub.x"] == {"pkg.user"}
    assert cycles(graph) == [["pkg.hub", "pkg.hub.x", "pkg.user"]]
