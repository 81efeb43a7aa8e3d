"""A module's docstring states its contract: at most 25 lines, and no history.

Checked over every module of `jr2_core`, `jr2_sources` and the plugins' packages
(`plugins/*/<package>/`, their tests left out). The reasons behind a contract, the tracker
documentation it rests on and the numbers live in docs/design/ and docs/performance.md; history
lives in commit messages.

History is:
- an issue or review number: "issue 12", "issue #12", "review 18" (the `--issues 200` option of
  a fake is not one); a bare `#12` is allowed, since it is how GitHub, GitLab and Redmine name an
  issue and the modules that parse such references say so;
- "ISSUE-NOTES 7": the numbered decisions live outside the repository, under the issue they were
  taken in, so a number there is an issue number too; a docstring states the decision instead;
- a change told as one: "before this ...", "used to", "previously", "no longer", "earlier
  versions", "before ...; now ...".
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 25
_HISTORY = re.compile(
    r"(?<!--)\bissues?\s+#?\d+|\breview\s*\d+\b|\bISSUE-NOTES\s*#?\d+"
    r"|\bbefore this\b|\bused to\b|\bpreviously\b|\bno longer\b|\bearlier versions?\b"
    r"|\bbefore\b[^.;]*;\s*now\b", re.I)


def _packages() -> list[Path]:
    found = [ROOT / "jr2_core", ROOT / "jr2_sources"]
    for plugin in sorted((ROOT / "plugins").iterdir()):
        found += [p for p in sorted(plugin.iterdir())
                  if (p / "__init__.py").is_file() and p.name != "tests"]
    return found


MODULES = sorted(f for pkg in _packages() for f in pkg.rglob("*.py"))


def history_in(text: str) -> list[str]:
    """The history a docstring tells, as found."""
    return [m.group(0) for m in _HISTORY.finditer(text)]


def module_note(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("module", MODULES, ids=_id)
def test_a_module_note_is_a_contract_of_at_most_25_lines_without_history(module: Path) -> None:
    note = module_note(module)
    assert len(note.splitlines()) <= MAX_LINES, f"{_id(module)}: {len(note.splitlines())} lines"
    assert history_in(note) == [], _id(module)


def test_the_packages_are_found() -> None:
    names = {_id(p) for p in _packages()}
    assert {"jr2_core", "jr2_sources", "plugins/jr2-gitlab/jr2_gitlab"} <= names
    assert not any(n.endswith("/tests") for n in names)


def test_history_is_told_from_a_contract() -> None:
    told = ("Fixed in issue 27.", "See ISSUE-NOTES 14.", "named after review 18",
            "It used to read twice.", "This previously failed.", "It no longer reads twice.",
            "Before this change it read twice.", "before the fix it read twice; now it reads once")
    assert all(history_in(t) for t in told)
    contract = ("Ids are `owner/repo#12`; `Depends on #3` names a blocker.",
                "Standalone: `python -m fake --issues 200`.", "Live while `now < end`; then gone.",
                "Before a claim the item is read again; after it, never.")
    assert not any(history_in(t) for t in contract)
