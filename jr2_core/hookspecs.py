"""The hooks a jr2 plugin can implement (pluggy project name and marker: "jr2").

A plugin is a module (or object) with functions decorated by `hookimpl`, published under the
`jr2` entry-point group. The built-in sources are plugins too: they register through exactly
these hooks, so a third-party tracker is no different from GitHub or the local backlog.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from .registry import SourceKind
    from .runs import RunEvent

hookspec = pluggy.HookspecMarker("jr2")
hookimpl = pluggy.HookimplMarker("jr2")


class Jr2Spec:
    """The hook specifications."""

    @hookspec
    def jr2_register_sources(self, register: Callable[[SourceKind], None]) -> None:
        """Called once when the plugins load. Call `register(SourceKind(...))` for each source
        kind the plugin provides (its name, pydantic config model and factory). Two plugins
        registering one kind is an error naming both."""

    @hookspec
    def jr2_register_commands(self, cli: click.Group) -> None:
        """Called once when the `jr2` command line is built. Add commands to `cli`
        (`@cli.command()`), as llm and datasette plugins do."""

    @hookspec
    def jr2_observe(self, event: RunEvent) -> None:
        """Called for every event of a run started by the CLI: a worker started, finished,
        failed or was cancelled, a gate opened or closed, the run ended. For notifiers and
        metrics. Must be quick; a raising observer is logged and ignored. Returns nothing."""
