"""The read-only dashboard section in Jira wiki markup (Data Center; see `wiki.py`).

Design note: the same sections as the other dashboards, in the same order and cut the same way
(`render._share`, "… and N more" rows), as wiki tables: **Failed** (with the reason and how to
retry: remove the failed label), **Awaiting approval** (the gate, the reason, how to answer: a
`/jr2 approve NAME` comment on the issue), **In progress**, **Waiting for retry**, **Ready**,
**Blocked** and the **Graph** (mermaid text in a `{noformat}` block). Every tracker text goes
through `wiki_text` (see the escaping note in `wiki.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from jr2_sources.readyset import BlockedEntry, ClaimedEntry, ReadyEntry, ReadySet, iso_utc
from jr2_sources.report import _claim_words, _clip, _md_graph, _one_line, describe_reasons

from .adf import size
from .render import PendingGate, _parts, _share

__all__ = ["render_wiki", "wiki_text"]

Entry = BlockedEntry | ClaimedEntry | ReadyEntry

_TITLE = 80
_REASON = 200
_MAX_REFS = 10
_SPECIAL = re.compile(r"([\\*_+\-^~?{}\[\]|!#])")
_URL = re.compile(r"https?://[^\s|\]\[{}]+\Z")
_JIRA_KEY = re.compile(r"[A-Z][A-Z0-9_]*-[0-9]+")


def wiki_text(text: str) -> str:
    """`text` on one line with every markup character escaped."""
    return _SPECIAL.sub(r"\\\1", _one_line(text))


def _item(rs: ReadySet, item_id: str) -> str:
    """An item's id in monospace, linked when it has a url (a Jira key is shown as it is: no
    markup starts inside one)."""
    url = rs.entry(item_id).item.url or ""
    shown = item_id if _JIRA_KEY.fullmatch(item_id) else wiki_text(item_id)
    return f"[{shown}|{url}]" if _URL.match(url) else f"{{{{{shown}}}}}"


def _block(title: str, intro: str, head: Sequence[str], total: int, rows: Iterator[str],
           budget: int) -> str:
    """`h3. title (total)`, `intro`, then a table cut to `budget` with an "… and N more" row."""
    heading = f"h3. {title} ({total:,})"
    if total == 0:
        return f"{heading}\n_none_\n"
    out = [heading, *([intro] if intro else []), "||" + "||".join(head) + "||"]
    blanks = " |" * (len(head) - 1)

    def more(n: int) -> str:
        return f"|_… and {n:,} more_|{blanks}"
    used = sum(size(line) + 1 for line in out)
    kept: list[str] = []
    for row in rows:
        kept.append(row)
        used += size(row) + 1
        if used > budget:
            break
    if len(kept) == total and used <= budget:
        return "\n".join([*out, *kept]) + "\n"
    while kept and used + size(more(total - len(kept))) + 1 > budget:
        used -= size(kept.pop()) + 1
    return "\n".join([*out, *kept, more(total - len(kept))]) + "\n"


def _row(*cells: str) -> str:
    return "|" + "|".join(c or " " for c in cells) + "|"


def _sections(rs: ReadySet, gates: Sequence[PendingGate]) -> list[Callable[[int], str]]:
    parts = _parts(rs, {g.item_id for g in gates})
    shown = [g for g in gates if g.item_id in rs]
    ready = [e for e in rs.ready if e.item.in_scope]

    def title(item_id: str) -> str:
        return wiki_text(_clip(rs.entry(item_id).item.title, _TITLE))

    def table(name: str, intro: str, head: list[str], entries: Sequence[Entry],
              cells: Callable[[Entry], list[str]]) -> Callable[[int], str]:
        def build(budget: int) -> str:
            rows = (_row(_item(rs, e.item.id), title(e.item.id), *cells(e)) for e in entries)
            return _block(name, intro, head, len(entries), rows, budget)
        return build

    def failed_cells(e: Entry) -> list[str]:
        return [wiki_text(_clip(e.item.failed or "", _REASON))]

    def claim_cells(e: Entry) -> list[str]:
        assert isinstance(e, ClaimedEntry)
        holder, since, lease = _claim_words(e)
        return [wiki_text(_clip(holder, _TITLE)), since, lease]

    def retry_cells(e: Entry) -> list[str]:
        at = e.item.retry_after
        return [iso_utc(at) if at else "?", f"{e.item.attempts:,}"]

    def ready_cells(e: Entry) -> list[str]:
        prio = "" if e.item.priority is None else str(e.item.priority)
        return [prio, wiki_text(_clip(", ".join(e.item.labels), _TITLE))]

    def why(e: Entry) -> list[str]:
        assert isinstance(e, BlockedEntry)
        return [describe_reasons(e.reasons, wiki_text, wiki_text, _MAX_REFS)]

    def approval(budget: int) -> str:
        rows = (_row(_item(rs, g.item_id), title(g.item_id), f"{{{{{wiki_text(g.gate)}}}}}",
                     wiki_text(_clip(g.reason or "", _REASON)),
                     iso_utc(g.since) if g.since else "") for g in shown)
        intro = ("To answer, someone who may edit the issue comments {{/jr2 approve NAME}} or "
                 "{{/jr2 reject NAME REASON}} on it.")
        return _block("Awaiting approval", intro, ["Item", "Title", "Gate", "Reason", "Since"],
                      len(shown), rows, budget)

    return [
        table("Failed", "To retry one, remove its failed label (ticking needs Jira Cloud).",
              ["Item", "Title", "Reason"], parts.failed, failed_cells),
        approval,
        table("In progress", "", ["Item", "Title", "Holder", "Since", "Lease expires"],
              parts.claimed, claim_cells),
        table("Waiting for retry", "", ["Item", "Title", "Retry after", "Attempts failed"],
              parts.waiting, retry_cells),
        table("Ready", "", ["Item", "Title", "Priority", "Labels"], ready, ready_cells),
        table("Blocked", "", ["Item", "Title", "Why"], parts.blocked, why),
    ]


_FENCE = re.compile(r"```mermaid\n(.*?)\n```", re.DOTALL)


def _graph(rs: ReadySet, max_nodes: int) -> str:
    md = _md_graph(rs, max_nodes)
    code = _FENCE.search(md)
    if code is None or "{noformat}" in code.group(1):
        return ""
    note = re.search(r"^_(.+)_$", md[:code.start()], re.MULTILINE)
    said = f"_{wiki_text(note.group(1))}_\n" if note else ""
    return f"h3. Graph\n{said}{{noformat}}\n{code.group(1)}\n{{noformat}}\n"


def render_wiki(rs: ReadySet, *, budget: int, gates: Sequence[PendingGate] = (),
                max_nodes: int = 100) -> str:
    """The section of `rs` in at most `budget` characters (UTF-16 units), or "" when not even a
    line saying so fits."""
    parts = _parts(rs, {g.item_id for g in gates})
    counts = {"ready": sum(1 for e in rs.ready if e.item.in_scope),
              "in progress": len(parts.claimed), "failed": len(parts.failed),
              "awaiting approval": sum(1 for g in gates if g.item_id in rs),
              "waiting for retry": len(parts.waiting), "blocked": len(parts.blocked)}
    done = "" if rs.counts["done"] is None else f" ({rs.counts['done']:,} done)"
    head = (f"h2. jr2 dashboard of {{{{{wiki_text(_clip(rs.source, 200))}}}}}\n"
            f"*{', '.join(f'{n:,} {what}' for what, n in counts.items())}*{done}\n"
            "_Read-only: boxes to tick need Jira Cloud._\n")
    graph = _graph(rs, max_nodes) if budget > 12_000 else ""
    if len(graph) > budget // 3:
        graph = _graph(rs, max_nodes // 4)
    if len(graph) > budget // 3:
        graph = "h3. Graph\n_left out: too large for the description; see {{jr2 ready " \
                "\\-\\-format mermaid}}_\n"
    rest = budget - size(head) - size(graph) - 16
    text = "\n".join(p for p in [head, *_share(_sections(rs, gates), max(rest, 0)), graph]
                     if p).rstrip("\n")
    if size(text) > budget:
        text = ("_jr2: the dashboard does not fit in the room the description leaves "
                f"({max(budget, 0):,} characters); shorten the text outside jr2's section_")
    return text if size(text) <= budget else ""
