"""Loading plugins: the built-in sources always, third-party ones from the `jr2` entry points.

`JR2_DISABLE_PLUGIN_AUTOLOAD=1` skips third-party entry points and `JR2_LOAD_PLUGINS=a,b` loads
only those (by entry-point name or distribution name), as in pytest and llm; neither affects the
built-in sources. A plugin that fails to import or to register is recorded with its error (see
`jr2 plugins`) and never breaks the others.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import metadata
from types import ModuleType
from typing import Any

import pluggy

from .errors import ConfigError
from .hookspecs import Jr2Spec
from .registry import Registry, SourceKind
from .runs import RunEvent

log = logging.getLogger("jr2.plugins")

GROUP = "jr2"
BUILTIN = (
    "jr2_sources.local.plugin",
    "jr2_sources.github.plugin",
    "jr2_sources.jira.plugin",
    "jr2_sources.commands",
)


@dataclass
class PluginInfo:
    """What `jr2 plugins` shows for one plugin."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    hooks: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class Host:
    """The loaded plugin manager, the source registry, and what was loaded."""

    pm: pluggy.PluginManager
    registry: Registry
    plugins: list[PluginInfo]


_host: Host | None = None


def _allowed(ep: metadata.EntryPoint) -> bool:
    if os.environ.get("JR2_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    allow = os.environ.get("JR2_LOAD_PLUGINS")
    if allow is None:
        return True
    names = {a.strip() for a in allow.split(",") if a.strip()}
    dist = ep.dist.name if ep.dist is not None else None
    return ep.name in names or (dist is not None and dist in names)


def _register(host: Host, info: PluginInfo, module: ModuleType | Any) -> None:
    """Register one plugin object and its source kinds; record any error on `info`.

    Kinds come through `pm.hook.jr2_register_sources` (so an implementation named with pluggy's
    `specname=` counts), calling only this plugin's implementations, so each kind is credited to
    its plugin and one failing plugin never stops the others."""
    try:
        host.pm.register(module, name=info.name)
    except Exception as exc:
        info.error = f"{type(exc).__name__}: {exc}"
        return
    info.hooks = sorted(h.name for h in host.pm.get_hookcallers(module) or [])
    impls = [i for i in host.pm.hook.jr2_register_sources.get_hookimpls() if i.plugin is module]
    if not impls:
        return
    found: list[SourceKind] = []
    try:
        for impl in impls:
            impl.function(register=found.append)
        for kind in found:
            kind = replace(kind, plugin=info.distribution or info.module)
            host.registry.register(kind)
            info.kinds.append(kind.name)
    except ConfigError as exc:
        info.error = str(exc)
    except Exception as exc:
        info.error = f"registering sources failed: {type(exc).__name__}: {exc}"


def load(*, refresh: bool = False) -> Host:
    """Load the plugins once per process (or again with `refresh`)."""
    global _host
    if _host is not None and not refresh:
        return _host
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(Jr2Spec)
    host = Host(pm, Registry(), [])
    for modname in BUILTIN:
        info = PluginInfo(name=modname, module=modname, distribution="jr2", builtin=True)
        try:
            version: str | None = metadata.version("jr2")
        except metadata.PackageNotFoundError:
            version = None
        info.version = version
        host.plugins.append(info)
        try:
            module = importlib.import_module(modname)
        except Exception as exc:
            info.error = f"{type(exc).__name__}: {exc}"
            continue
        _register(host, info, module)
    builtin_modules = set(BUILTIN)
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        if ep.value in builtin_modules or not _allowed(ep):
            continue
        dist = ep.dist.name if ep.dist is not None else None
        info = PluginInfo(name=ep.name, module=ep.value, distribution=dist,
                          version=ep.dist.version if ep.dist is not None else None)
        host.plugins.append(info)
        try:
            obj = ep.load()
        except Exception as exc:
            info.error = f"failed to import: {type(exc).__name__}: {exc}"
            log.warning("jr2 plugin %s failed to import: %s", ep.name, exc)
            continue
        _register(host, info, obj)
    _host = host
    return host


def plugin_observer() -> Callable[[RunEvent], None] | None:
    """An observer that passes run events to every `jr2_observe` hook, or None when no plugin
    implements it (then a run pays nothing). Each hook is called on its own: one that raises is
    logged and the others still hear the event."""
    impls = load().pm.hook.jr2_observe.get_hookimpls()
    if not impls:
        return None

    def observe(event: RunEvent) -> None:
        for impl in impls:
            try:
                impl.function(event=event)
            except Exception:
                log.exception("the jr2_observe hook of %s raised; ignored", impl.plugin_name)

    return observe
