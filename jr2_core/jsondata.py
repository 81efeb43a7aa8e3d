"""`jsonable(value)`: the engine's results as JSON-ready data.

The engine's result types are slotted dataclasses, so a run never imports pydantic unless a
user's own model is involved; such a model (a Pool's `input`, an event's data) is dumped with
its own `model_dump(mode="json")`, so the JSON is the same whichever kind of object carries it.
"""

from __future__ import annotations

import dataclasses
from datetime import date, datetime
from typing import Any


def jsonable(value: Any) -> Any:
    """`value` with dataclasses and pydantic models turned into dicts, recursively (dicts,
    lists and tuples walked; datetimes as ISO text); anything else as it is."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime | date):
        return value.isoformat()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value
