"""Renderers of a ReadySet: JSON, plain text, rich, GitHub Markdown, Mermaid, Graphviz, explain.

Every renderer is pure (a ReadySet in, a string out; `render_rich` writes to its console).
Reasons are worded once (`describe_reasons`), each format with its own escaping of ids and text;
plain text blanks control characters, so an item is one line. The graph runs from a blocker to
what it blocks (open children dotted), nodes classed ready / blocked / claimed / missing /
`outside`. Markdown fits a GitHub comment: the graph first (`max_nodes`, then only the blocked
part, then fewer), the cycles, then the three tables share what is left, each cut saying so; ids
are code spans and `@`, `#`, `GH-26` are defused, so the report pings and links nothing. Mermaid
labels use `#NNN;` entities, DOT ids are quoted. `explain` walks open blockers depth-first with
an explicit stack, each item once, the indentation capped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from jr2_core.text import one_line

from .readyset import BlockedEntry, ClaimedEntry, Entry, ReadySet, Reason, iso_utc

if TYPE_CHECKING:  # rich is imported by `render_rich` only: `jr2 work` summaries need none of it
    from rich.console import Console
    from rich.text import Text

__all__ = ["GITHUB_COMMENT_BUDGET", "cycle_path", "describe_reasons", "explain", "render_dot",
           "render_json", "render_markdown", "render_mermaid", "render_rich", "render_text"]

GITHUB_COMMENT_BUDGET = 65_000  # GitHub refuses comments over 65,536 characters
_GRAPH_BUDGET = 32_000  # characters of the markdown graph block, at most
_CYCLES_BUDGET = 4_000  # characters of the markdown cycles section, at most
_MAX_REFS = 10  # ids listed per reason in a markdown cell before "and N more"
_MAX_CYCLE_SHOWN = 8  # members of a cycle spelled out before "…"
_TITLE_CHARS = 100  # title characters in a markdown cell
_LABEL_CHARS = 30  # title characters in a graph label
_MAX_INDENT = 40  # explain: deeper levels keep this indentation and say their depth

_one_line = one_line  # tracker text in a table cell, a label or a line (jr2_core.text)


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_default(value: object) -> Any:
    """Serialize what a source may put in `extra` that json cannot: datetimes as ISO, else str."""
    if isinstance(value, datetime):
        return iso_utc(value)
    return str(value)


def render_json(rs: ReadySet, *, indent: int | None = 2) -> str:
    """The JSON contract (schema_version 1), keys in the documented order; indented by 2 unless
    `indent=None` (compact, and several times faster: the C encoder only runs unindented)."""
    return json.dumps(rs.to_json_obj(), indent=indent, ensure_ascii=False,
                      default=_json_default)


# ---------------------------------------------------------------------------- reasons in words

_MISSING_WORDS = {
    "missing": ("which does not exist", "which do not exist"),
    "inaccessible": ("which cannot be read", "which cannot be read"),
}

_MERGE_WORDS = {  # --done-when merged: the blocker's pull request, named in brackets
    "waits_for_merge": "waits for the merge of",
    "merged_not_green": "waits for green checks on the merge of",
}


def _listing(words: Sequence[str], max_refs: int | None) -> str:
    """`a, b, c`, or `a, b and N more` past `max_refs`."""
    if max_refs is None or len(words) <= max_refs:
        return ", ".join(words)
    return ", ".join(words[:max_refs]) + f" and {len(words) - max_refs:,} more"


def cycle_path(
    members: Sequence[str], fmt_id: Callable[[str], str] = _one_line, max_shown: int | None = None
) -> str:
    """`A → B → C → A`; past `max_shown` members, `A → B → … → A (N items)`."""
    if max_shown is not None and len(members) > max_shown:
        shown = [fmt_id(m) for m in members[: max_shown - 2]]
        return " → ".join([*shown, "…", fmt_id(members[0])]) + f" ({len(members):,} items)"
    return " → ".join([*(fmt_id(m) for m in members), fmt_id(members[0])])


def describe_reasons(reasons: Sequence[Reason], fmt_id: Callable[[str], str] = _one_line,
                     fmt_text: Callable[[str], str] = _one_line, max_refs: int | None = None
                     ) -> str:
    """Why an item is blocked, in words: `waits on T-1 (held by pool-a@host), T-2; needs T-9,
    which does not exist; has open children T-5; last attempt failed: ...; in cycle A → B → A`."""
    parts: list[str] = []
    waits = [
        fmt_id(r.ref or "") + (f" (held by {fmt_text(r.held_by)})" if r.held_by else "")
        for r in reasons
        if r.kind == "open_blocker"
    ]
    if waits:
        parts.append("waits on " + _listing(waits, max_refs))
    for state, (one, several) in _MISSING_WORDS.items():
        refs = [
            fmt_id(r.ref or "")
            for r in reasons
            if r.kind == "missing_blocker" and r.detail == state
        ]
        if refs:
            parts.append(f"needs {_listing(refs, max_refs)}, {one if len(refs) == 1 else several}")
    for kind, words in _MERGE_WORDS.items():
        prs = [
            fmt_id(r.ref or "") + (f" ({fmt_text(r.detail)})" if r.detail else "")
            for r in reasons
            if r.kind == kind
        ]
        if prs:
            parts.append(f"{words} {_listing(prs, max_refs)}")
    odd = [r for r in reasons if r.kind == "missing_blocker" and r.detail not in _MISSING_WORDS]
    for r in odd:
        parts.append(f"needs {fmt_id(r.ref or '')}, which is {fmt_text(r.detail or '?')}")
    for r in reasons:
        if r.kind == "open_children":
            parts.append(
                "has open children " + _listing([fmt_id(c) for c in r.refs or ()], max_refs)
            )
        elif r.kind == "failed":
            parts.append("last attempt failed: " + fmt_text(r.detail or ""))
        elif r.kind == "feedback_stopped":
            parts.append("feedback loop stopped: " + fmt_text(r.detail or ""))
        elif r.kind == "retry_after":
            parts.append(f"retry after {fmt_text(r.detail or '')} "
                         f"({r.attempts} attempt{'' if r.attempts == 1 else 's'} failed)")
        elif r.kind == "awaiting_approval":
            why = f": {fmt_text(r.text)}" if r.text else ""
            who = ", ".join(fmt_text(w) for w in r.refs or ())
            ignored = f" (ignored answers by {who}: no write access)" if who else ""
            parts.append(f"awaits approval of gate {fmt_text(r.ref or '')} since "
                         f"{fmt_text(r.detail or '')}{why}{ignored}")
        elif r.kind == "group_busy":
            parts.append(f"waits for group {fmt_text(r.ref or '')} "
                         f"(held by {fmt_id(r.held_by or '')})")
        elif r.kind == "global_cap":
            parts.append(f"waits for the global cap ({r.count} of {r.cap} held"
                         f"{_counted(r, fmt_id)})")
        elif r.kind == "cycle":
            # capped always: every member of a long cycle would otherwise repeat all of it
            parts.append("in cycle " + cycle_path(r.refs or (), fmt_id, _MAX_CYCLE_SHOWN))
    return "; ".join(parts)


def _counted(r: Reason, fmt_id: Callable[[str], str]) -> str:
    """What a `global_cap` reason counted, where the pools also count lock comments (a comment
    tracker, `readyset.HeldLocks`): the live locks on the coordination issue, or that they were
    not read. Nothing on a tracker whose claims are the locks (`local:`)."""
    if r.locks is None:
        return ""
    if r.locks.control is None:
        return (", counting live claims only: the pools also count the lock comments on their "
                "--control-issue; give it to count them")
    n = r.locks.count
    return f"; {n} lock comment{'' if n == 1 else 's'} on {fmt_id(r.locks.control)}"


def _summary(rs: ReadySet) -> str:
    """`2 ready, 2 blocked, 0 claimed, 0 done` (without `done` when the source cannot say)."""
    c = rs.counts
    done = "" if c["done"] is None else f", {c['done']:,} done"
    return f"{c['ready']:,} ready, {c['blocked']:,} blocked, {c['claimed']:,} claimed{done}"


def _claim_words(entry: ClaimedEntry) -> tuple[str, str, str]:
    """Holder, since and lease expiry of a claimed entry, as text (expiry "none": no lease end)."""
    c = entry.claim
    lease = "none" if c.lease_expires is None else iso_utc(c.lease_expires)
    return _one_line(c.holder), iso_utc(c.since), lease


# ---------------------------------------------------------------------------- plain text


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as lines with left-aligned columns two spaces apart (the last column unpadded)."""
    if not rows:
        return ["  (none)"]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r, widths, strict=False)] + [r[-1]]
        lines.append(("  " + "  ".join(cells)).rstrip())
    return lines


def render_text(rs: ReadySet) -> str:
    """A plain table for pipes: READY, BLOCKED (reasons in words), CLAIMED, CYCLES, a summary;
    every line ends with a newline, the last one included (POSIX text)."""
    ready = [
        [
            _one_line(e.item.id),
            "-" if e.item.priority is None else f"p{e.item.priority}",
            _one_line(e.item.title),
        ]
        for e in rs.ready
    ]
    blocked = [[_one_line(e.item.id), _one_line(describe_reasons(e.reasons))]
               for e in rs.blocked]
    claimed = [
        [_one_line(e.item.id), f"held by {holder}", f"since {since}", f"lease until {lease}"]
        for e in rs.claimed
        for holder, since, lease in [_claim_words(e)]
    ]
    out = [f"READY ({len(ready):,})", *_columns(ready)]
    out += [f"BLOCKED ({len(blocked):,})", *_columns(blocked)]
    out += [f"CLAIMED ({len(claimed):,})", *_columns(claimed)]
    if rs.cycles:
        out.append(f"CYCLES ({len(rs.cycles):,})")
        out += [f"  {i}: {_one_line(cycle_path(c))}" for i, c in enumerate(rs.cycles)]
    out.append(_summary(rs))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- rich


def _cell(text: str) -> Text:
    """A table cell: tracker text as plain text (not markup), control characters blanked."""
    from rich.text import Text

    return Text(_one_line(text))


def render_rich(rs: ReadySet, console: Console) -> None:
    """The text report as rich tables, for a terminal (cells are Text: titles are not markup)."""
    from rich.table import Table

    tables = (
        ("Ready", ("Item", "Priority", "Title", "Labels"),
         [(e.item.id, "" if e.item.priority is None else str(e.item.priority), e.item.title,
           ", ".join(e.item.labels)) for e in rs.ready]),
        ("Blocked", ("Item", "Title", "Why"),
         [(e.item.id, e.item.title, describe_reasons(e.reasons)) for e in rs.blocked]),
        ("Claimed", ("Item", "Holder", "Since", "Lease expires"),
         [(e.item.id, *_claim_words(e)) for e in rs.claimed]),
    )
    for title, columns, rows in tables:
        table = Table(*columns, title=f"{title} ({len(rows):,})", title_justify="left")
        for row in rows:
            table.add_row(*map(_cell, row))
        console.print(table)
    for i, members in enumerate(rs.cycles):
        console.print(_cell(f"cycle {i}: {cycle_path(members, max_shown=_MAX_CYCLE_SHOWN)}"))
    console.print(_cell(_summary(rs)))


# ---------------------------------------------------------------------------- the graph


@dataclass(slots=True)
class _Graph:
    """Nodes (id -> class) in a stable order, edges (blocker, blocked, dotted for a child), and
    the ref state of nodes outside the snapshot (for their labels)."""

    nodes: dict[str, str] = field(default_factory=dict)
    edges: list[tuple[str, str, bool]] = field(default_factory=list)
    outside: dict[str, str] = field(default_factory=dict)

    def add_node(self, rs: ReadySet, node_id: str, state: str) -> None:
        """Add a node once; its class is its entry's status, or from its ref state when outside."""
        if node_id not in self.nodes:
            if node_id in rs:
                self.nodes[node_id] = rs.entry(node_id).status
            else:
                self.nodes[node_id] = "outside" if state == "open" else "missing"
                self.outside[node_id] = state


def _blockers_of(rs: ReadySet, item_id: str) -> Iterator[tuple[str, str, bool]]:
    """What blocks one entry: (id, its ref state, is a child), deduped.

    Open and missing blockers come from the item's refs; open children from its `open_children`
    reason, so they only count when the Ready-set counted them.
    """
    entry = rs.entry(item_id)
    seen: set[str] = set()
    for b in entry.item.blockers:
        if b.state != "done" and b.id not in seen:
            seen.add(b.id)
            yield b.id, b.state, False
    if isinstance(entry, BlockedEntry):
        for r in entry.reasons:
            if r.kind == "open_children":
                for child in r.refs or ():
                    if child not in seen:
                        seen.add(child)
                        yield child, "open", True


def _full_graph(rs: ReadySet) -> _Graph:
    g = _Graph()
    for e in rs.entries():
        g.nodes[e.item.id] = e.status
    for e in rs.entries():
        for blocker, state, child in _blockers_of(rs, e.item.id):
            g.add_node(rs, blocker, state)
            g.edges.append((blocker, e.item.id, child))
    return g


def _blocked_part(rs: ReadySet, limit: int | None) -> _Graph:
    """Blocked items and their blockers, in blocked order, at most `limit` nodes."""
    g = _Graph()

    def add(node_id: str, state: str) -> bool:
        if node_id not in g.nodes and limit is not None and len(g.nodes) >= limit:
            return False
        g.add_node(rs, node_id, state)
        return True

    for e in rs.blocked:
        if not add(e.item.id, "open"):
            break
        for blocker, state, child in _blockers_of(rs, e.item.id):
            if add(blocker, state):
                g.edges.append((blocker, e.item.id, child))
    return g


_OUTSIDE_WORDS = {"open": "open, not in this snapshot"}
_MERMAID_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:/@")
_CLASS_DEFS = (
    "classDef ready fill:#dcfce7,stroke:#16a34a",
    "classDef blocked fill:#fee2e2,stroke:#dc2626",
    "classDef claimed fill:#dbeafe,stroke:#2563eb",
    "classDef missing fill:#f3f4f6,stroke:#6b7280,stroke-dasharray:4 3",
    "classDef outside fill:#fef9c3,stroke:#ca8a04",
)
_DOT_FILL = {
    "ready": "#dcfce7",
    "blocked": "#fee2e2",
    "claimed": "#dbeafe",
    "missing": "#f3f4f6",
    "outside": "#fef9c3",
}


def _mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label: anything but letters, digits and plain
    punctuation becomes a `#NNN;` entity code (quotes, brackets, `#`, `<`, backticks...)."""
    return "".join(
        ch if ch in _MERMAID_SAFE or (ch.isalnum() and ord(ch) > 127) else f"#{ord(ch)};"
        for ch in _one_line(text)
    )


def _label(rs: ReadySet, g: _Graph, node_id: str) -> str:
    """A node's label: its id, then a short title or the state of a node outside the snapshot."""
    if node_id in rs:
        title = rs.entry(node_id).item.title
        return f"{node_id}: {_clip(title, _LABEL_CHARS)}" if title else node_id
    return f"{node_id} ({_OUTSIDE_WORDS.get(g.outside[node_id], g.outside[node_id])})"


def _mermaid(rs: ReadySet, g: _Graph) -> str:
    names = {node_id: f"n{i}" for i, node_id in enumerate(g.nodes)}
    lines = ["flowchart LR"]
    for node_id, cls in g.nodes.items():
        lines.append(f'  {names[node_id]}["{_mermaid_text(_label(rs, g, node_id))}"]:::{cls}')
    for a, b, child in g.edges:
        lines.append(f"  {names[a]} {'-.->' if child else '-->'} {names[b]}")
    lines += [f"  {d}" for d in _CLASS_DEFS]
    return "\n".join(lines)


def render_mermaid(rs: ReadySet) -> str:
    """The whole graph of what blocks what, as a Mermaid flowchart (no code fence)."""
    return _mermaid(rs, _full_graph(rs))


def _dot_id(text: str) -> str:
    return '"' + _one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(rs: ReadySet) -> str:
    """The whole graph of what blocks what, as a Graphviz digraph with quoted ids."""
    g = _full_graph(rs)
    lines = [
        "digraph readyset {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled"];',
    ]
    for node_id, cls in g.nodes.items():
        label = _dot_id(_label(rs, g, node_id))
        lines.append(f'  {_dot_id(node_id)} [label={label}, fillcolor="{_DOT_FILL[cls]}"];')
    for a, b, child in g.edges:
        style = " [style=dashed]" if child else ""
        lines.append(f"  {_dot_id(a)} -> {_dot_id(b)}{style};")
    lines.append("}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- markdown

_MD_SPECIAL = {ord(c): "\\" + c for c in "\\`*_[]<>|~"}
_MD_SPECIAL[ord("@")] = "@\u200b"
_MD_SPECIAL[ord("#")] = "#\u200b"
_URL_UNSAFE = {ord(c): f"%{ord(c):02X}" for c in " <>()|`\"'\\"}
_GH_REF = re.compile(r"\b(gh)-(?=\d)", re.IGNORECASE)  # GitHub autolinks `GH-26` as #26


def _md_text(text: str) -> str:
    """Free text safe in a GitHub table cell: markdown punctuation and pipes escaped, and no
    accidental @mention, #reference or GH-reference."""
    return _GH_REF.sub("\\1\u200b-", _one_line(text).translate(_MD_SPECIAL))


def _md_code(text: str, *, in_table: bool = True) -> str:
    """A code span that holds any text (fence longer than its longest backtick run); in a table,
    pipes escaped (GitHub splits table cells before it reads code spans)."""
    text = _one_line(text)
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


_md_code_plain = partial(_md_code, in_table=False)  # a code span outside a table


def md_item(item_id: str, url: str | None) -> str:
    """An item's id as a code span, linked when it has a url."""
    code = _md_code(item_id)
    return f"[{code}](<{_one_line(url).translate(_URL_UNSAFE)}>)" if url else code


_MD_COLUMNS = {"ready": ("Item", "Title", "Priority", "Labels"),
               "blocked": ("Item", "Title", "Why"),
               "claimed": ("Item", "Title", "Holder", "Since", "Lease expires")}


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _md_cells(e: Entry) -> tuple[str, ...]:
    """One entry's cells in its table's columns (`_MD_COLUMNS`)."""
    it = e.item
    first = (md_item(it.id, it.url), _md_text(_clip(it.title, _TITLE_CHARS)))
    if isinstance(e, BlockedEntry):
        return (*first, describe_reasons(e.reasons, _md_code, _md_text, _MAX_REFS))
    if isinstance(e, ClaimedEntry):
        holder, since, lease = _claim_words(e)
        return (*first, _md_text(_clip(holder, _TITLE_CHARS)), since, lease)
    return (*first, "" if it.priority is None else str(it.priority),
            _md_text(_clip(", ".join(it.labels), _TITLE_CHARS)))


def _md_rows(rs: ReadySet, kind: str) -> tuple[list[str], int, Iterator[str]]:
    """Header lines, row count and lazily formatted rows of one markdown table."""
    names = _MD_COLUMNS[kind]
    entries: list[Entry] = getattr(rs, kind)
    return ([_md_row(names), _md_row(["---"] * len(names))], len(entries),
            (_md_row(_md_cells(e)) for e in entries))


def md_block(title: str, head: Sequence[str], total: int, rows: Iterator[str], budget: int,
             more: Callable[[int], str]) -> str:
    """A markdown section (`### title (total)`, the `head` lines, then rows) cut to stay within
    `budget` characters (see `cut_lines`). Also used by the dashboard issue."""
    heading = f"### {title} ({total:,})"
    if total == 0:
        return f"{heading}\n\n_none_\n"
    return cut_lines([heading, "", *head], total, rows, budget, more)


def cut_lines(out: list[str], total: int, rows: Iterator[str], budget: int,
              more: Callable[[int], str], size: Callable[[str], int] = len) -> str:
    """The lines `out`, then `rows` (`total` of them), within `budget` as `size` counts each
    line with its newline: rows are formatted only until the budget is overrun, and the cut is
    said by `more(n)` (n: the rows left out)."""
    used = sum(size(line) + 1 for line in out)
    kept: list[str] = []
    for row in rows:  # format rows only until the budget is overrun
        kept.append(row)
        used += size(row) + 1
        if used > budget:
            break
    if len(kept) == total and used <= budget:
        return "\n".join([*out, *kept]) + "\n"
    while kept and used + size(more(total - len(kept))) + 1 > budget:
        used -= size(kept.pop()) + 1
    return "\n".join([*out, *kept, more(total - len(kept))]) + "\n"


def md_more_row(head: Sequence[str]) -> Callable[[int], str]:
    """The "… and N more" row of a table with the header `head`."""
    blanks = " |" * (head[1].count("|") - 2)
    return lambda n: f"| … and {n:,} more |{blanks}"


def _md_table(rs: ReadySet, kind: str, budget: int) -> str:
    """One section: heading and table, cut with an "… and N more" row to stay within `budget`."""
    head, total, rows = _md_rows(rs, kind)
    return md_block(kind.capitalize(), head, total, rows, budget, md_more_row(head))


def share(builders: Sequence[Callable[[int], str]], budget: int) -> list[str]:
    """Parts sharing `budget`: small ones take what they need, the others split the rest."""
    need = [len(b(budget)) for b in builders]
    shares = [0] * len(builders)
    left = budget
    for n, i in enumerate(sorted(range(len(builders)), key=lambda i: need[i])):
        shares[i] = min(need[i], left // (len(builders) - n))
        left -= shares[i]
    return [b(shares[i]) for i, b in enumerate(builders)]


def _md_cycles(rs: ReadySet) -> str:
    if not rs.cycles:
        return ""
    out = [f"### Cycles ({len(rs.cycles):,})", ""]
    used = sum(len(line) + 1 for line in out)
    for i, members in enumerate(rs.cycles):
        line = f"- cycle {i}: {cycle_path(members, _md_code_plain, _MAX_CYCLE_SHOWN)}"
        if used + len(line) + 1 + 40 > _CYCLES_BUDGET:
            out.append(f"- … and {len(rs.cycles) - i:,} more")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out) + "\n"


def _left_out(full: _Graph, shown: _Graph) -> str:
    """`900 ready, 30 blocked` : what the shown graph lacks, by class."""
    counts: dict[str, int] = {}
    for node_id, cls in full.nodes.items():
        if node_id not in shown.nodes:
            counts[cls] = counts.get(cls, 0) + 1
    return ", ".join(f"{n:,} {cls}" for cls, n in counts.items())


def _cut_graph(rs: ReadySet, full: _Graph, limit: int) -> tuple[_Graph, str]:
    """The blocked part cut to `limit` nodes, and the line that says so."""
    g = _blocked_part(rs, limit)
    note = (
        f"graph shows {len(g.nodes):,} of {len(full.nodes):,} nodes; left out: {_left_out(full, g)}"
    )
    return g, note


def graph_of(rs: ReadySet, max_nodes: int) -> tuple[str, str] | None:
    """The line saying what the graph leaves out ("" when nothing) and its mermaid text, of at
    most `max_nodes` nodes and, as a block, within `_GRAPH_BUDGET`; None when it is empty."""
    full = _full_graph(rs)
    total = len(full.nodes)
    if total == 0:
        return None
    g, note = full, ""
    if total > max_nodes:
        g = _blocked_part(rs, None)
        note = (
            "graph shows only blocked items and their blockers: "
            f"{len(g.nodes):,} of {total:,} nodes; left out: {_left_out(full, g)}"
        )
        if len(g.nodes) > max_nodes:
            g, note = _cut_graph(rs, full, max_nodes)
    code = _mermaid(rs, g)
    while len(code) + 15 + len(note) > _GRAPH_BUDGET:  # long labels or many edges: fewer nodes
        g, note = _cut_graph(rs, full, len(g.nodes) * 3 // 4)
        code = _mermaid(rs, g)
    return note, code


def md_graph(graph: tuple[str, str] | None) -> str:
    """The `### Graph` section of `graph_of`'s answer ("" for None)."""
    if graph is None:
        return ""
    note, code = graph
    return "### Graph\n\n" + (f"_{note}_\n\n" if note else "") + f"```mermaid\n{code}\n```\n"


def render_markdown(rs: ReadySet, *, max_nodes: int = 300) -> str:
    """GitHub-flavoured report: counts, tables (linked ids), cycles and a mermaid graph of what
    blocks what; always shorter than `GITHUB_COMMENT_BUDGET` characters, saying what it cut."""
    head = (
        f"## Ready-set of {_md_code_plain(_clip(rs.source, 200))}\n\n"
        f"**{_summary(rs)}** (generated {iso_utc(rs.generated_at)})\n"
    )
    graph = md_graph(graph_of(rs, max_nodes))
    cycles = _md_cycles(rs)
    budget = GITHUB_COMMENT_BUDGET - len(head) - len(graph) - len(cycles) - 16
    tables = share([partial(_md_table, rs, k) for k in ("ready", "blocked", "claimed")], budget)
    return "\n".join(part for part in [head, *tables, cycles, graph] if part)


# ---------------------------------------------------------------------------- explain


def _state_words(rs: ReadySet, node_id: str, ref_state: str) -> str:
    """A node's state for `explain`: ready / claimed by X / blocked (why) / missing / ..."""
    if node_id not in rs:
        return _OUTSIDE_WORDS.get(ref_state, ref_state)
    entry = rs.entry(node_id)
    if isinstance(entry, ClaimedEntry):
        holder, _, lease = _claim_words(entry)
        return f"claimed by {holder}" + ("" if lease == "none" else f" (lease until {lease})")
    if not isinstance(entry, BlockedEntry):
        return "ready"
    words = "blocked"
    cycle = rs.cycle_index(node_id)
    if cycle is not None:
        words += f", in cycle {cycle} ({cycle_path(rs.cycles[cycle], max_shown=_MAX_CYCLE_SHOWN)})"
    if entry.item.failed is not None:
        words += f", last attempt failed: {_one_line(entry.item.failed)}"
    waits = [r for r in entry.reasons if r.kind in _WAIT_KINDS]
    if waits:  # what it waits for that is no blocker: a retry time, a group, the global cap
        words += ", " + describe_reasons(waits)
    return words


_WAIT_KINDS = ("retry_after", "group_busy", "global_cap")

_PR_WORDS = {"unmerged": "not merged yet:", "not_green": "merged, checks not green:"}


def _ref_state(rs: ReadySet, item_id: str) -> str | None:
    """The state an open item's blocker or child reference gives `item_id`, or None."""
    for entry in rs.entries():
        for ref in (*entry.item.blockers, *entry.item.children):
            if ref.id == item_id:
                return ref.state
    return None


def explain(rs: ReadySet, item_id: str) -> str:
    """The chain that blocks one item, down to its roots, as an indented list.

    Follows open blockers (and open children) depth-first; each item is expanded once and a
    repeat says "(see above)". An id that is not an open item but that an item refers to gets
    one line with that reference's state (`T-8: done`). Raises KeyError for any other id.
    """
    if item_id not in rs:
        ref = _ref_state(rs, item_id)
        if ref is None:
            raise KeyError(item_id)
        return f"{_one_line(item_id)}: {_OUTSIDE_WORDS.get(ref, ref)}"
    lines: list[str] = []
    expanded: set[str] = set()
    # (id, depth, its ref state, reached as a child, the pull request its state was judged by)
    stack: list[tuple[str, int, str, bool, str | None]] = [(item_id, 0, "open", False, None)]
    while stack:
        node_id, depth, ref_state, child, pr = stack.pop()
        indent = "  " * min(depth - 1, _MAX_INDENT) + "- " if depth else ""
        marker = f"[depth {depth:,}] " if depth > _MAX_INDENT + 1 else ""
        kind = " (open child)" if child else ""
        words = _state_words(rs, node_id, ref_state)
        if ref_state in _PR_WORDS:
            words += f"; {_PR_WORDS[ref_state]} {_one_line(pr or 'its pull request')}"
        if node_id in expanded:
            lines.append(f"{indent}{marker}{_one_line(node_id)}{kind}: {words} (see above)")
            continue
        expanded.add(node_id)
        lines.append(f"{indent}{marker}{_one_line(node_id)}{kind}: {words}")
        if node_id in rs:
            below = list(_blockers_of(rs, node_id))
            prs = {b.id: b.pr for b in rs.entry(node_id).item.blockers if b.pr}
            stack.extend((b, depth + 1, state, c, prs.get(b)) for b, state, c in reversed(below))
    return "\n".join(lines)
