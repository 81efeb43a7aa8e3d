"""The plugin: registers the `httpbacklog` source kind with jr2 (entry point group `jr2`)."""

from __future__ import annotations

from collections.abc import Callable

from jr2_core import hookimpl
from jr2_sources import SourceKind


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    from .adapter import HttpBacklogConfig, HttpBacklogTracker

    register(SourceKind("httpbacklog", HttpBacklogConfig, HttpBacklogTracker,
                        help="a JSON-over-HTTP backlog (the plugin template)",
                        tracker=HttpBacklogTracker))
