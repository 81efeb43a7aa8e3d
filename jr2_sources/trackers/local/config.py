"""The options of `local:PATH` as a pydantic model: `jr2 ready local: --help`, the options
given on the command line or in jr2.toml, and the words of every error."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from jr2_sources.kit.durations import Duration
from jr2_sources.tracker import Tracker


class LocalConfig(Tracker.Options):
    """Options of `local:PATH`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=1, description="the backlog file (TOML, or JSON)")
    label: list[str] = Field(default_factory=list,
                             description="only items with this label (repeat: all of them)")
    children_block: bool = Field(default=True,
                                 description="a parent waits until its children are done")
    poll_every: Duration = Field(default=0.5,
                                 description="how often a waiting pool looks for changes")
    invalid_grace: Duration = Field(
        default=60.0, description="how long a backlog that stops parsing mid-run may stay "
        "invalid (the last good one is used meanwhile) before the run ends with exit 4")
