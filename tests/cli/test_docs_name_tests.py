"""Every test a page names (`tests/x.py::test_name`, `Class::test_name` too) exists, so a page's
evidence (the threat model in docs/reliability.md, the figures in docs/performance.md) cannot
silently point at a test that was renamed or removed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted(ROOT.glob("plugins/*/README.md"))]
_REF = re.compile(r"((?:plugins/[\w.-]+/)?tests/[\w/.-]+\.py)((?:::\w+)+)")


def named_tests(text: str) -> list[tuple[str, list[str]]]:
    """The tests `text` names: (file, [class..., function]) in page order."""
    return [(m.group(1), m.group(2).split("::")[1:]) for m in _REF.finditer(text)]


def defines(source: str, names: list[str]) -> bool:
    """Whether `source` defines the test `names` (a function, or a class's method)."""
    body: list[ast.stmt] = ast.parse(source).body
    for name in names:
        found = [node for node in body
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                 and node.name == name]
        if not found:
            return False
        body = found[0].body if isinstance(found[0], ast.ClassDef) else []
    return True


def test_a_reference_is_found_and_a_missing_test_is_told_from_a_present_one() -> None:
    text = "shown by (`tests/a/test_x.py::test_one`) and `tests/b.py::Kit::test_two`."
    assert named_tests(text) == [("tests/a/test_x.py", ["test_one"]),
                                 ("tests/b.py", ["Kit", "test_two"])]
    src = "def test_one():\n    pass\nclass Kit:\n    def test_two(self):\n        pass\n"
    assert defines(src, ["test_one"]) and defines(src, ["Kit", "test_two"])
    assert not defines(src, ["test_three"]) and not defines(src, ["Kit", "test_one"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_test_a_page_names_exists(page: Path) -> None:
    missing = []
    for path, names in named_tests(page.read_text(encoding="utf-8")):
        file = ROOT / path
        if not file.is_file() or not defines(file.read_text(encoding="utf-8"), names):
            missing.append(f"{path}::{'::'.join(names)}")
    assert missing == [], f"{page.name} names tests that do not exist: {missing}"
