"""`OptionHint`: how `--help` names a config field's value and shows its default.

Its own module so that the registry (with `TrackerOptions`) and the kit's durations
import it without importing each other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OptionHint:
    """Metadata for a config field type (`Annotated[float, ..., OptionHint("DURATION", fmt)]`):
    how `--help` names its value and shows its default. pydantic ignores it."""

    metavar: str
    show: Callable[[Any], str] | None = None
