"""`TrackerOptions`: the options the WorkSource layer reads from every kind's config model
(`Tracker.Options`), as a pydantic model a kind's config subclasses.

Its own module so that `jr2_sources.tracker` imports no pydantic: a kind whose config is checked
without pydantic (`local:`'s common case, `SourceKind.quick`) never loads it, and `Tracker.Options`
imports this module on first use.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from .optionhint import OptionHint


def _duration_text(seconds: float) -> str:
    """`300` -> `5m` (the kit's `format_duration`, imported late like `_seconds`)."""
    from .kit.durations import format_duration

    return format_duration(seconds)


def _seconds(value: Any) -> Any:
    """`10m`-style durations (the kit's `Duration`, imported late: the kit builds on this
    module)."""
    if value is None:
        return None
    from .kit.durations import parse_duration

    return parse_duration(value)


class TrackerOptions(BaseModel):
    """The options the WorkSource layer reads from a kind's config. A kind's config model
    subclasses it (as `Tracker.Options`) and adds its own fields."""

    model_config = ConfigDict(extra="forbid")
    _jr2_layer: ClassVar[bool] = True  # these fields come last in `jr2 ready KIND: --help`

    target: str = Field(min_length=1, description="what to read (a file, a repository, a URL)")
    children_block: bool = Field(default=True,
                                 description="a parent waits until its children are done")
    poll_every: Annotated[float | None, BeforeValidator(_seconds)] = Field(
        default=None, description="how often a waiting pool looks for changes (default 5s), "
                                  "and how often held items are watched")
    resync_every: Annotated[float, BeforeValidator(_seconds),
                            OptionHint("DURATION", lambda v: _duration_text(float(v)))] = Field(
        default=300.0, gt=0,
        description="a pool read by deltas reads everything again this often, so a change the "
                    "tracker's 'changed since' question cannot see is missed at most this long")
