"""The dashboard issue's section: the Ready-set report as GitHub Markdown, with checkboxes.

Design notes
------------
* What a person acts on comes first: **Failed** (a `retry` box per item: ticking it clears jr2's
  failure mark so the item is offered again) and **Awaiting approval** (an `approve` box per
  gate); then **In progress** (holder, since, lease), **Waiting for retry** (`retry_after`),
  **Ready**, **Blocked** (why) and the **Graph** (a mermaid block). Only items in the source's
  scope are shown: a box must never act outside what the user selected.
* Built to a budget, the room the body leaves (GitHub refuses a body over 65,536 characters):
  the graph takes at most a third (at most `max_nodes` nodes; left out with a line saying so when
  it does not fit), the sections share the rest as the `jr2 ready --format markdown` tables do
  (small ones take what they need, the others split what is left evenly), each cut with an
  "… and N more" line. The result is checked against the budget; if even the headings do not
  fit, the section is one line saying so.
* Escaping is the report's (`jr2_sources.report`): control characters blanked, markdown
  punctuation, `<`, `[`, `|` escaped, `@`, `#` and `GH-26` defused, ids in code spans. So a
  title cannot break a table, start a line, draw a checkbox or close an HTML comment, and
  posting the dashboard pings nobody.
* The section holds no clock: it changes only when the state does, so an unchanged backlog is
  never rewritten (`sync.py`). The "last changed" line is added apart (`stamp`) and ignored when
  comparing (`core`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from jr2_sources.readyset import BlockedEntry, ClaimedEntry, ReadySet, iso_utc
from jr2_sources.report import (
    _claim_words,
    _clip,
    _md_code,
    _md_code_plain,
    _md_graph,
    _md_item,
    _md_text,
    describe_reasons,
    md_block,
    md_more_row,
)

from .body import tick_key

__all__ = ["BODY_LIMIT", "PendingGate", "core", "render_section", "stamp"]

BODY_LIMIT = 65_536
"""GitHub's limit on an issue body, in characters ("body is too long (maximum is 65536
characters)", the 422 of "Update an issue")."""

_TITLE = 80  # title characters on a line
_REASON = 200  # failure-reason characters on a line
_MAX_REFS = 10
_STAMP = re.compile(r"^<sub>jr2: last changed [^<]*</sub>\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class PendingGate:
    """A gate an item waits on, as the dashboard shows it (see `sync.GateDesk`)."""

    item_id: str
    gate: str
    since: datetime | None = None
    reason: str | None = None


def stamp(now: datetime) -> str:
    """The "last changed" line written above the section's content."""
    return f"<sub>jr2: last changed {iso_utc(now.replace(microsecond=0))}</sub>"


def core(section: str) -> str:
    """A section without its "last changed" line and surrounding blank lines, with `\r\n` read
    as `\n` (GitHub's web editor saves CRLF): what is compared to decide whether to write."""
    return _STAMP.sub("", section.replace("\r\n", "\n")).strip("\n")


def _title(rs: ReadySet, item_id: str) -> str:
    title = rs.entry(item_id).item.title
    return f" {_md_text(_clip(title, _TITLE))}" if title else ""


def _box(ticked: bool) -> str:
    return "- [x]" if ticked else "- [ ]"


def _more_line(n: int) -> str:
    return f"- … and {n:,} more"


@dataclass(slots=True)
class _Parts:
    failed: list[BlockedEntry]
    waiting: list[BlockedEntry]
    blocked: list[BlockedEntry]
    claimed: list[ClaimedEntry]


def _parts(rs: ReadySet, gated: set[str]) -> _Parts:
    failed, waiting, blocked = [], [], []
    for e in rs.blocked:
        if not e.item.in_scope:
            continue
        if e.item.failed is not None:
            failed.append(e)
        elif any(r.kind == "retry_after" for r in e.reasons):
            waiting.append(e)
        elif e.item.id not in gated:
            blocked.append(e)
    claimed = [e for e in rs.claimed if e.item.in_scope]
    return _Parts(failed, waiting, blocked, claimed)


def _sections(rs: ReadySet, parts: _Parts, gates: Sequence[PendingGate],
              keep: set[str]) -> list[Callable[[int], str]]:
    """Each section as a function of its budget, in the order they are shown."""

    def failed(budget: int) -> str:
        rows = (
            f"{_box(tick_key('retry', e.item.id) in keep)} **retry** {_md_item(rs, e.item.id)}"
            f"{_title(rs, e.item.id)}: {_md_text(_clip(e.item.failed or '', _REASON))} "
            f"{tick_key('retry', e.item.id)}"
            for e in parts.failed
        )
        return md_block("Failed", ["Tick **retry** to clear the failure: the item is offered "
                                   "again.", ""], len(parts.failed), rows, budget, _more_line)

    def approval(budget: int) -> str:
        shown = [g for g in gates if g.item_id in rs]
        rows = (
            f"{_box(tick_key('approve', g.item_id, g.gate) in keep)} **approve** "
            f"{_md_code_plain(g.gate)} for {_md_item(rs, g.item_id)}{_title(rs, g.item_id)}"
            + (f": {_md_text(_clip(g.reason, _REASON))}" if g.reason else "")
            + (f" (since {iso_utc(g.since)})" if g.since else "")
            + f" {tick_key('approve', g.item_id, g.gate)}"
            for g in shown
        )
        return md_block("Awaiting approval", ["Tick **approve** to answer the gate.", ""],
                        len(shown), rows, budget, _more_line)

    def table(title: str, head: list[str], entries: Sequence[BlockedEntry | ClaimedEntry],
              cells: Callable[[BlockedEntry | ClaimedEntry], str]) -> Callable[[int], str]:
        def build(budget: int) -> str:
            rows: Iterator[str] = (
                f"| {_md_item(rs, e.item.id)} | {_md_text(_clip(e.item.title, _TITLE))} | "
                f"{cells(e)} |" for e in entries)
            return md_block(title, head, len(entries), rows, budget, md_more_row(head))
        return build

    def claim_cells(e: BlockedEntry | ClaimedEntry) -> str:
        assert isinstance(e, ClaimedEntry)
        holder, since, lease = _claim_words(e)
        return f"{_md_text(_clip(holder, _TITLE))} | {since} | {lease}"

    def retry_cells(e: BlockedEntry | ClaimedEntry) -> str:
        at = e.item.retry_after
        return f"{iso_utc(at) if at else '?'} | {e.item.attempts:,}"

    def why(e: BlockedEntry | ClaimedEntry) -> str:
        assert isinstance(e, BlockedEntry)
        return describe_reasons(e.reasons, _md_code, _md_text, _MAX_REFS)

    ready = [e for e in rs.ready if e.item.in_scope]

    def ready_table(budget: int) -> str:
        head = ["| Item | Title | Priority | Labels |", "| --- | --- | --- | --- |"]
        rows = (
            f"| {_md_item(rs, e.item.id)} | {_md_text(_clip(e.item.title, _TITLE))} | "
            f"{'' if e.item.priority is None else e.item.priority} | "
            f"{_md_text(_clip(', '.join(e.item.labels), _TITLE))} |" for e in ready)
        return md_block("Ready", head, len(ready), rows, budget, md_more_row(head))

    return [
        failed,
        approval,
        table("In progress", ["| Item | Title | Holder | Since | Lease expires |",
                              "| --- | --- | --- | --- | --- |"], parts.claimed, claim_cells),
        table("Waiting for retry", ["| Item | Title | Retry after | Attempts failed |",
                                    "| --- | --- | --- | --- |"], parts.waiting, retry_cells),
        ready_table,
        table("Blocked", ["| Item | Title | Why |", "| --- | --- | --- |"], parts.blocked, why),
    ]


def _share(builders: list[Callable[[int], str]], budget: int) -> list[str]:
    """Sections sharing `budget`: small ones take what they need, the others split the rest."""
    need = [len(b(budget)) for b in builders]
    share = [0] * len(builders)
    left = budget
    order = sorted(range(len(builders)), key=lambda i: need[i])
    for n, i in enumerate(order):
        share[i] = min(need[i], left // (len(builders) - n))
        left -= share[i]
    return [b(share[i]) for i, b in enumerate(builders)]


def render_section(rs: ReadySet, *, budget: int, gates: Sequence[PendingGate] = (),
                   keep_ticked: set[str] | frozenset[str] = frozenset(),
                   max_nodes: int = 100) -> str:
    """The dashboard section of `rs` in at most `budget` characters (without the "last
    changed" line: see `stamp`), or "" when not even a line saying so fits. `gates`: the
    gates waiting for an answer; `keep_ticked`: keys of boxes a person ticked that could not
    be acted on yet, drawn ticked again."""
    gated = {g.item_id for g in gates}
    parts = _parts(rs, gated)
    shown = {"ready": sum(1 for e in rs.ready if e.item.in_scope),
             "in progress": len(parts.claimed), "failed": len(parts.failed),
             "awaiting approval": sum(1 for g in gates if g.item_id in rs),
             "waiting for retry": len(parts.waiting), "blocked": len(parts.blocked)}
    head = (f"## jr2 dashboard of {_md_code_plain(_clip(rs.source, 200))}\n\n"
            f"**{', '.join(f'{n:,} {what}' for what, n in shown.items())}**"
            + ("" if rs.counts["done"] is None else f" ({rs.counts['done']:,} done)") + "\n")
    graph = _md_graph(rs, max_nodes) if budget > 12_000 else ""
    if len(graph) > budget // 3:
        graph = _md_graph(rs, max_nodes // 4)
    if len(graph) > budget // 3:
        graph = ("### Graph\n\n_left out: too large for the issue body; see "
                 "`jr2 ready --format mermaid`_\n")
    rest = budget - len(head) - len(graph) - 16
    text = "\n".join(p for p in [head, *_share(_sections(rs, parts, gates, set(keep_ticked)),
                                                      max(rest, 0)), graph] if p).rstrip("\n")
    if len(text) > budget:
        text = ("_jr2: the dashboard does not fit in the room the issue body leaves "
                f"({max(budget, 0):,} characters); shorten the text outside jr2's section_")
    return text if len(text) <= budget else ""
