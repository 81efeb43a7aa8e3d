"""The Work Source layer as a jr2 plugin: it adds the `jr2_register_sources` hookspec and, once
every plugin is loaded (`jr2_plugins_loaded`), asks each for its kinds, one by one, so an error is
recorded on the plugin that raised it (`jr2 plugins`). `load_registry()` gives the commands the
kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pluggy

from jr2_core.errors import ConfigError
from jr2_core.hookspecs import hookimpl
from jr2_core.plugins import Host, load

from .registry import Registry, SourceKind, kind_capabilities

hookspec = pluggy.HookspecMarker("jr2")


class SourcesSpec:
    """The hook the Work Source layer adds."""

    @hookspec
    def jr2_register_sources(self, register: Callable[[SourceKind], None]) -> None:
        """Called once when the plugins load. Call `register(SourceKind(...))` for each source
        kind the plugin provides (its name, pydantic config model and factory). Two plugins
        registering one kind is an error naming both."""


_current: tuple[Host, Registry] | None = None


@hookimpl
def jr2_add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    pluginmanager.add_hookspecs(SourcesSpec)


@hookimpl
def jr2_plugins_loaded(host: Host) -> None:
    """Build the registry from every loaded plugin's `jr2_register_sources`."""
    registry = Registry()
    impls = host.pm.hook.jr2_register_sources.get_hookimpls()
    for info in host.plugins:
        plugin = host.pm.get_plugin(info.name)
        # through pm.hook, so an implementation named with pluggy's `specname=` counts; only
        # this plugin's, so each kind is credited to it and one failure stays its own
        mine = [i for i in impls if plugin is not None and i.plugin is plugin]
        if not mine:
            continue
        found: list[SourceKind] = []
        try:
            for impl in mine:
                impl.function(register=found.append)
            for kind in found:
                kind = replace(kind, plugin=info.distribution or info.module)
                registry.register(kind)
                info.kinds.append(kind.name)
        except ConfigError as exc:
            info.error = str(exc)
        except Exception as exc:
            info.error = f"registering sources failed: {type(exc).__name__}: {exc}"
    global _current
    _current = (host, registry)


@hookimpl
def jr2_kind_capabilities(kind: str) -> list[str] | None:
    """A registered kind's capabilities, from its tracker class's mixins (None: its class is
    not declared or cannot be imported here)."""
    found = _current[1].kinds.get(kind) if _current is not None else None
    caps = kind_capabilities(found) if found is not None else None
    return None if caps is None else list(caps)


def load_registry() -> Registry:
    """The source kinds of the loaded plugins (loading them once per process)."""
    host = load()
    if _current is None or _current[0] is not host:
        jr2_plugins_loaded(host)  # only if this module itself failed to load as a plugin
    assert _current is not None
    return _current[1]
