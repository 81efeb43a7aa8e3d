"""Registers the `local` source kind (a built-in plugin, loaded like any other)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceEnv, SourceKind


def _factory(config: Any, env: SourceEnv) -> Any:
    from .source import LocalAdapter

    return LocalAdapter(config, env)


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    from .source import LocalConfig

    register(SourceKind("local", LocalConfig, _factory,
                        help="a backlog file (TOML/JSON) with claims in SQLite; no network",
                        target_is_path=True))
