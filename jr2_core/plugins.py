"""Loading plugins: jr2's own always, third-party ones from the `jr2` entry points.

jr2's own plugins (the built-in trackers, the `ready`/`work` commands, the Work Source layer's
hooks) are the `jr2` entry points of the `jr2` distribution itself: the engine names no module
of `jr2_sources`. `JR2_DISABLE_PLUGIN_AUTOLOAD=1` skips third-party entry points and
`JR2_LOAD_PLUGINS=a,b` loads only those (by entry-point name or distribution name), as in pytest
and llm; neither affects jr2's own. A plugin that fails to import or to register is recorded
with its error (see `jr2 plugins`) and never breaks the others. When all are loaded,
`jr2_plugins_loaded` lets a layer collect from them (`jr2_sources` builds its source registry).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from .hookspecs import Jr2Spec

if TYPE_CHECKING:
    from .runs import RunEvent

log = logging.getLogger("jr2.plugins")

GROUP = "jr2"
OWN_DISTRIBUTION = "jr2"


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
    capabilities: dict[str, list[str] | None] = field(default_factory=dict)
    """Each kind's capabilities (`jr2_kind_capabilities`; None: not known), filled by
    `jr2 plugins`: finding them imports the kinds' tracker classes."""
    error: str | None = None


@dataclass
class Host:
    """The loaded plugin manager and what was loaded."""

    pm: pluggy.PluginManager
    plugins: list[PluginInfo]


_host: Host | None = None


def _dist(ep: EntryPoint) -> str | None:
    """The name of the distribution that declares `ep`, as its metadata spells it."""
    return ep.dist.name if ep.dist is not None else None


def _allowed(ep: EntryPoint) -> bool:
    if os.environ.get("JR2_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    allow = os.environ.get("JR2_LOAD_PLUGINS")
    if allow is None:
        return True
    names = {a.strip() for a in allow.split(",") if a.strip()}
    return ep.name in names or _dist(ep) in names


def _builtin(ep: EntryPoint) -> bool:
    """Declared by jr2's own distribution (its name normalised as PEP 503 says)."""
    return re.sub(r"[-_.]+", "-", (_dist(ep) or "")).lower() == OWN_DISTRIBUTION


def _register(host: Host, info: PluginInfo, module: ModuleType | Any) -> None:
    """Register one plugin object; record any error on `info`."""
    try:
        host.pm.register(module, name=info.name)
    except Exception as exc:
        info.error = f"{type(exc).__name__}: {exc}"
        return
    info.hooks = sorted(h.name for h in host.pm.get_hookcallers(module) or [])


_complete = False  # `jr2_plugins_loaded` has run for `_host`


def load(*, refresh: bool = False, complete: bool = True) -> Host:
    """Load the plugins once per process (or again with `refresh`): jr2's own first.

    `complete=False` only imports and registers them, without `jr2_plugins_loaded` (where
    `jr2_sources` builds its registry, importing every kind's config model): what listing the
    plugins' commands needs, so `jr2 --help` stays quick. A later `load()` completes it."""
    global _host, _complete
    if _host is not None and not refresh:
        if complete and not _complete:
            _complete = True
            _plugins_loaded(_host)
        return _host
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(Jr2Spec)
    pm.hook.jr2_add_hookspecs.call_historic(kwargs={"pluginmanager": pm})
    host = Host(pm, [])
    eps = sorted(entry_points(group=GROUP), key=lambda e: (not _builtin(e), e.name))
    for ep in eps:
        builtin = _builtin(ep)
        if not builtin and not _allowed(ep):
            continue
        info = PluginInfo(name=ep.value if builtin else ep.name, module=ep.value,
                          distribution=_dist(ep), builtin=builtin,
                          version=ep.dist.version if ep.dist is not None else None)
        host.plugins.append(info)
        try:
            obj = ep.load()
        except Exception as exc:
            info.error = f"failed to import: {type(exc).__name__}: {exc}"
            log.warning("jr2 plugin %s failed to import: %s", ep.name, exc)
            continue
        _register(host, info, obj)
    _host, _complete = host, complete
    if complete:
        _plugins_loaded(host)
    return host


def _plugins_loaded(host: Host) -> None:
    """Call each `jr2_plugins_loaded` on its own: one that raises marks its plugin broken."""
    for impl in host.pm.hook.jr2_plugins_loaded.get_hookimpls():
        try:
            impl.function(host=host)
        except Exception as exc:
            for info in host.plugins:
                if info.name == impl.plugin_name:
                    info.error = f"jr2_plugins_loaded failed: {type(exc).__name__}: {exc}"
            log.warning("the jr2_plugins_loaded hook of %s raised: %s", impl.plugin_name, exc)


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
