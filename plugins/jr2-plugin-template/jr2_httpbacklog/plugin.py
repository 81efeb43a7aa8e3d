"""The plugin: registers the `httpbacklog` source kind with jr2 (entry point group `jr2`).

Nothing is imported at registration: the config model and the tracker class are named by
`module:attr`, imported when the kind is used, so every other command starts without them."""

from __future__ import annotations

from collections.abc import Callable

from jr2_core import hookimpl
from jr2_sources import SourceKind

TRACKER = "jr2_httpbacklog.tracker:HttpBacklogTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("httpbacklog", "jr2_httpbacklog.tracker:HttpBacklogConfig", TRACKER,
                        help="a JSON-over-HTTP backlog (the plugin template)",
                        tracker=TRACKER))
