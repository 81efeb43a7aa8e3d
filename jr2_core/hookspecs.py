"""The hooks a jr2 plugin can implement (pluggy project name and marker: "jr2").

A plugin is a module (or object) with functions decorated by `hookimpl`, published under the
`jr2` entry-point group. These are the engine's hooks; a layer adds its own through
`jr2_add_hookspecs` (as pytest's `pytest_addhooks`): `jr2_sources` adds `jr2_register_sources`
(see `jr2_sources.hooks`). The built-in trackers are plugins too: they register through exactly
those hooks, so a third-party tracker is no different from GitHub or the local backlog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from .plugins import Host
    from .runs import RunEvent

hookspec = pluggy.HookspecMarker("jr2")
hookimpl = pluggy.HookimplMarker("jr2")


class Jr2Spec:
    """The hook specifications."""

    @hookspec(historic=True)
    def jr2_add_hookspecs(self, pluginmanager: pluggy.PluginManager) -> None:
        """Called when the plugin is registered: add hook specifications for other plugins to
        implement (`pluginmanager.add_hookspecs(MySpec)`), as pytest's `pytest_addhooks`."""

    @hookspec
    def jr2_plugins_loaded(self, host: Host) -> None:
        """Called once after every plugin is loaded (`host.plugins`, `host.pm`): a layer that
        collects something from the plugins does it here, recording a plugin's error on its
        `PluginInfo` (`jr2_sources` builds its source registry this way)."""

    @hookspec(firstresult=True)
    def jr2_kind_capabilities(self, kind: str) -> list[str] | None:
        """Called by `jr2 plugins` for each source kind a plugin registered: the names of the
        kind's capabilities (`jr2_sources` answers from the kind's tracker class), or None
        when not known. The first answer that is not None counts."""

    @hookspec
    def jr2_register_commands(self, cli: click.Group) -> None:
        """Called once when the `jr2` command line is built. Add commands to `cli`
        (`@cli.command()`), as llm and datasette plugins do, or lazily with
        `jr2_core.cli.add_lazy_command` (imported only when the command is used)."""

    @hookspec
    def jr2_observe(self, event: RunEvent) -> None:
        """Called for every event of a run started by the CLI: a worker started, finished,
        failed or was cancelled, a gate opened or closed, the run ended. For notifiers and
        metrics. Must be quick; a raising observer is logged and ignored. Returns nothing."""
