"""The dashboard section as data: built once from the Ready-set, then formatted by a serializer
(`layout` Markdown, `adf` ADF, `wiki` Jira wiki markup).

A `Section` holds the source, the counts line and six `Part`s in the order shown (failed,
approval, claimed, waiting, ready, blocked; items in the source's scope only). A `Row`'s other
columns are `Cell`s: `Text` (tracker text, escaped by each serializer), `Code` (a name shown in
code), `Why` (the reasons an item is blocked), a plain `str` (a literal). Failed and approval
rows carry a box (`box`, `gate`, `ticked`). `lay_out` fits a serialized section into a budget:
the graph at most a third (`max_nodes` nodes, then a quarter of them, else a line saying it is
left out), the parts `share` the rest, and a section too large even so is one line, or nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from jr2_sources.readyset import ReadySet, Reason, iso_utc
from jr2_sources.report import _claim_words, _clip, graph_of, share

from .body import TickKind, tick_key

__all__ = ["Code", "Part", "PendingApproval", "Row", "Section", "Text", "Why", "build", "lay_out"]

TITLE = 80  # title characters on a line
REASON = 200  # failure-reason characters on a line
MAX_REFS = 10


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A gate an item waits on, as the dashboard shows it (see `sync.GateDesk`)."""

    item_id: str
    gate: str
    since: datetime | None = None
    reason: str | None = None


class Text(str):
    """Tracker text: escaped by each serializer."""


class Code(str):
    """A name shown in code (a gate)."""


@dataclass(frozen=True, slots=True)
class Why:
    reasons: tuple[Reason, ...]


Cell = str | Why


@dataclass(frozen=True, slots=True)
class Row:
    item_id: str
    url: str | None
    title: str
    cells: tuple[Cell, ...]
    box: TickKind | None = None
    gate: str | None = None
    ticked: bool = False


@dataclass(frozen=True, slots=True)
class Part:
    kind: str
    title: str
    head: tuple[str, ...]
    rows: tuple[Row, ...]


@dataclass(frozen=True, slots=True)
class Section:
    source: str
    counts: str
    done: int | None
    parts: tuple[Part, ...]
    graph: Callable[[int], tuple[str, str] | None]  # `report.graph_of` of at most n nodes
    max_nodes: int


def build(rs: ReadySet, gates: Sequence[PendingApproval] = (),
          keep: set[str] | frozenset[str] = frozenset(), max_nodes: int = 100) -> Section:
    """The section of `rs`; `keep`: keys (`body.tick_key`) of boxes drawn ticked again."""
    gated = {g.item_id for g in gates}
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

    def row(item_id: str, *cells: Cell, box: TickKind | None = None,
            gate: str | None = None) -> Row:
        item = rs.entry(item_id).item
        ticked = box is not None and tick_key(box, item_id, gate) in keep
        return Row(item_id, item.url, _clip(item.title, TITLE), cells, box, gate, ticked)

    parts = (
        Part("failed", "Failed", ("Item", "Title", "Reason"), tuple(
            row(e.item.id, Text(_clip(e.item.failed or "", REASON)), box="retry")
            for e in failed)),
        Part("approval", "Awaiting approval", ("Item", "Title", "Gate", "Reason", "Since"), tuple(
            row(g.item_id, Code(g.gate), Text(_clip(g.reason or "", REASON)),
                iso_utc(g.since) if g.since else "", box="approve", gate=g.gate)
            for g in gates if g.item_id in rs)),
        Part("claimed", "In progress", ("Item", "Title", "Holder", "Since", "Lease expires"),
             tuple(row(e.item.id, Text(_clip(h, TITLE)), s, lease)
                   for e in rs.claimed if e.item.in_scope for h, s, lease in [_claim_words(e)])),
        Part("waiting", "Waiting for retry", ("Item", "Title", "Retry after", "Attempts failed"),
             tuple(row(e.item.id, iso_utc(at) if (at := e.item.retry_after) else "?",
                       f"{e.item.attempts:,}") for e in waiting)),
        Part("ready", "Ready", ("Item", "Title", "Priority", "Labels"), tuple(
            row(e.item.id, "" if e.item.priority is None else str(e.item.priority),
                Text(_clip(", ".join(e.item.labels), TITLE)))
            for e in rs.ready if e.item.in_scope)),
        Part("blocked", "Blocked", ("Item", "Title", "Why"), tuple(
            row(e.item.id, Why(tuple(e.reasons))) for e in blocked)),
    )
    n = {p.kind: len(p.rows) for p in parts}
    counts = ", ".join(f"{n[k]:,} {what}" for k, what in [
        ("ready", "ready"), ("claimed", "in progress"), ("failed", "failed"),
        ("approval", "awaiting approval"), ("waiting", "waiting for retry"),
        ("blocked", "blocked")])
    return Section(_clip(rs.source, 200), counts, rs.counts["done"], parts,
                   partial(graph_of, rs), max_nodes)


def join_lines(parts: list[str]) -> str:
    return "\n".join(p for p in parts if p).rstrip("\n")


def lay_out(section: Section, budget: int, *, head: str, parts: Sequence[Callable[[int], str]],
            graph: Callable[[int], str], left_out: str, too_big: str,
            size: Callable[[str], int] = len, join: Callable[[list[str]], str] = join_lines,
            empty: str = "") -> str:
    """The serialized section within `budget` (see the module notes); `empty` when nothing
    fits."""
    drawn = graph(section.max_nodes) if budget > 12_000 else empty
    if size(drawn) > budget // 3:
        drawn = graph(section.max_nodes // 4)
    if size(drawn) > budget // 3:
        drawn = left_out
    rest = budget - size(head) - size(drawn) - 16
    text = join([head, *share(parts, max(rest, 0)), drawn])
    if size(text) > budget:
        text = too_big
    return text if size(text) <= budget else empty
