"""`local:PATH`'s options checked by hand: the common case without pydantic.

`jr2 work local:FILE --cap 8 -- true` needs a config object with five options, all at their
defaults or given plainly. Validating that with the pydantic model (`config.py`) meant importing
pydantic and building the model: about 0.1 s of CPU at every start, most of a 100-item drain's
overhead. `quick_config` builds a `LocalSettings` (the same fields, plain attributes) from raw
values it fully understands, and returns None for anything else (an unknown key, a value of
another type, a bad duration), so the model validates those and words every error exactly as
before. Its answers equal the model's (tests/trackers/local/test_local_quick.py checks that over
generated values), and the defaults below are the model's (the same test checks them).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from jr2_core.records import record
from jr2_sources.kit.durations import parse_duration


@record(frozen=True, slots=True)
class LocalSettings:
    """The options of `local:PATH` (`config.LocalConfig`'s fields and defaults)."""

    target: str
    label: list[str] = field(default_factory=list)
    children_block: bool = True
    poll_every: float = 0.5
    invalid_grace: float = 60.0
    resync_every: float = 300.0


OPTIONS = {"label": "list", "invalid_grace": "value", "children_block": "bool",
           "poll_every": "value", "resync_every": "value"}
"""The options on the command line, in `--help` order, and their shapes
(`registry.option_shapes` of the model: tested)."""

_DURATIONS = ("poll_every", "invalid_grace", "resync_every")
FIELDS = frozenset({"target", "label", "children_block", *_DURATIONS})


def quick_config(values: dict[str, Any]) -> LocalSettings | None:
    """`values` as `LocalSettings` when each is plainly valid, else None (the model decides)."""
    if not FIELDS.issuperset(values):
        return None
    target = values.get("target")
    if not isinstance(target, str) or not target:
        return None
    out: dict[str, Any] = {"target": target}
    label = values.get("label", [])
    if type(label) is not list or not all(type(x) is str for x in label):
        return None
    out["label"] = list(label)
    if "children_block" in values:
        if type(values["children_block"]) is not bool:
            return None
        out["children_block"] = values["children_block"]
    for name in _DURATIONS:
        if name in values:
            try:
                out[name] = parse_duration(values[name])
            except ValueError:
                return None
    return LocalSettings(**out)
