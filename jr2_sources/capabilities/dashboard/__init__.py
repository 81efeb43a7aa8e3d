"""The dashboard issue (`jr2 dashboard`, `jr2 work --dashboard N`): one issue's body kept up to
date with the Ready-set report, with boxes a person ticks to retry a failed item or approve a
gate. `body` cuts and merges the body, `model` builds jr2's section once from the Ready-set,
`render` (Markdown), `adfrender` (ADF) and `wikirender` (wiki markup) format it, `sync` decides
when to write and acts on ticks, `scope` keeps the dashboard issue out of the backlog, `target`
says what each kind of board allows (length, write spacing)."""

from .body import END, START, BrokenMarkers, Tick, merge, split, ticks
from .render import BODY_LIMIT, PendingGate, render_section
from .scope import hide_items
from .sync import (
    DEFAULT_INTERVAL,
    MIN_INTERVAL,
    Board,
    BodyChanged,
    Dashboard,
    GateDesk,
    NoGates,
    Step,
)
from .target import GITHUB, Target, check_interval, target_of

__all__ = ["BODY_LIMIT", "DEFAULT_INTERVAL", "END", "GITHUB", "MIN_INTERVAL", "START", "Board",
           "BodyChanged", "BrokenMarkers", "Dashboard", "GateDesk", "NoGates", "PendingGate",
           "Step", "Target", "Tick", "check_interval", "hide_items", "merge", "render_section",
           "split", "target_of", "ticks"]
