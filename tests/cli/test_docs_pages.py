"""The docs are pages a person reads: short enough to read, about jr2 as it is, and linked so that
every link leads somewhere.

- Length: no page under docs/ over 400 lines, except the CLI and API references (800 each) and
  docs/performance.md (200: one table, each row with the command that reproduces it).
- No history: no "issue N" / "issue #N" (the `--issue N` option is not history), no "ISSUE-NOTES
  N" (the decision file is outside the repository; a page states the decision itself), no "review
  N", no change told as one ("before this round", "used to", "previously", "earlier versions";
  "no longer" is allowed: pages use it of an item's state, "no longer in the file"). A bare
  `#N` is allowed: it is how GitHub, GitLab and Redmine name an issue, and the pages' examples
  use it (`Blocked by #12`, `octo/lib#3`).
- docs/performance.md is one table, each row naming the command that reproduces its figure
  (`python3 bench/...` or `python3 tools/dev.py ...`, in backticks, in the last column).
- Links: every relative link to a `.md` page in docs/ and README.md names a page that exists and,
  with a `#fragment`, a heading of that page (GitHub's slugs); so does a link to a `#fragment` of
  the page itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
LIMITS = {"reference/cli.md": 800, "reference/api.md": 800, "performance.md": 200}
DEFAULT_LIMIT = 400
_HISTORY = re.compile(r"(?<!--)\bissue\s+#?\d+(?!\.\d)|\bISSUE-NOTES\s*#?\d+|\breview\s*\d+\b"
                      r"|\bbefore this\b|\bused to\b|\bpreviously\b|\bearlier versions?\b", re.I)
_LINK = re.compile(r"\]\(([^)\s#]+?\.md)?(#[^)\s]*)?\)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def _name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def history_in(text: str) -> list[str]:
    """The history references of `text`, as found."""
    return [m.group(0) for m in _HISTORY.finditer(text)]


def slugs(text: str) -> set[str]:
    """The fragments GitHub gives the headings of a Markdown page (duplicates get -1, -2...)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    """The relative .md links of `page` that lead to no page, or to no heading of it."""
    bad = []
    text = page.read_text(encoding="utf-8")
    for m in _LINK.finditer(text):
        target, fragment = m.group(1) or "", m.group(2)
        if (not target and not fragment) or re.match(r"\w+://", target):
            continue
        file = (page.parent / target).resolve() if target else page
        if not file.is_file():
            bad.append(target)
        elif fragment and fragment[1:] not in slugs(file.read_text(encoding="utf-8")):
            bad.append(target + fragment)
    return bad


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_a_page_is_short_enough_to_read(page: Path) -> None:
    lines = len(page.read_text(encoding="utf-8").splitlines())
    limit = LIMITS.get(_name(page), DEFAULT_LIMIT)
    assert lines <= limit, f"docs/{_name(page)} has {lines} lines (at most {limit})"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_a_page_tells_no_history(page: Path) -> None:
    assert history_in(page.read_text(encoding="utf-8")) == []


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the Markdown tables in `text`, as lists of cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[\s:|-]+\|$", line):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows[1:] if rows else []


def test_every_row_of_the_performance_table_names_the_command_that_reproduces_it() -> None:
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    assert sum(1 for line in text.splitlines() if re.match(r"^\|[\s:|-]+\|$", line)) == 1
    rows = table_rows(text)
    assert len(rows) >= 20
    command = re.compile(r"`[^`]*python3? [^`]*(bench/|tools/dev\.py)")
    for row in rows:
        assert len(row) == 3 and command.search(row[2]), row


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_page_and_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_the_checks_tell_history_and_broken_links_from_what_is_fine(tmp_path: Path) -> None:
    assert history_in("fixed in issue 27; see ISSUE-NOTES 14, review 18, issue #3") == [
        "issue 27", "ISSUE-NOTES 14", "review 18", "issue #3"]
    assert history_in("It used to read twice; previously 3 s (before this round).") == [
        "used to", "previously", "before this"]
    assert history_in("jr2 dashboard github:o/r --issue 7; Blocked by #12; 100 issues") == []
    assert history_in("GET issue 3.0 per worked issue; fixed in issue 27.") == ["issue 27"]
    (tmp_path / "a.md").write_text("# A page\n\n## Two `words`\n\n```sh\n# not a heading\n```\n")
    (tmp_path / "b.md").write_text("[ok](a.md) [ok](a.md#two-words) [web](https://x.org/y.md)\n"
                                   "[gone](c.md) [no heading](a.md#not-a-heading)\n"
                                   "[here](#b) [not here](#c)\n\n# B\n")
    assert broken_links(tmp_path / "b.md") == ["c.md", "a.md#not-a-heading", "#c"]
    assert slugs("# Same\n# Same\n") == {"same", "same-1"}
