"""Registers the `local` source kind (a built-in plugin, loaded like any other). Its config
model and tracker are named by `module:attr`, so registering imports neither."""

from __future__ import annotations

from collections.abc import Callable

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceKind

TRACKER = "jr2_sources.trackers.local.source:LocalTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("local", "jr2_sources.trackers.local.config:LocalConfig", TRACKER,
                        help="a backlog file (TOML/JSON) with claims in SQLite; no network",
                        target_is_path=True, tracker=TRACKER))
