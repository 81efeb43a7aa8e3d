"""Registers the `local` source kind (a built-in plugin, loaded like any other)."""

from __future__ import annotations

from collections.abc import Callable

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceKind

from .config import LocalConfig
from .source import LocalTracker


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("local", LocalConfig, LocalTracker,
                        help="a backlog file (TOML/JSON) with claims in SQLite; no network",
                        target_is_path=True, tracker=LocalTracker))
