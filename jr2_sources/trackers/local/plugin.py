"""Registers the `local` source kind (a built-in plugin, loaded like any other).

The config model is named by a function (imported, with pydantic, only when a model is needed),
and the common case is checked by hand (`settings.quick_config`): `jr2 work local:FILE` starts
without pydantic."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceEnv, SourceKind

from .settings import OPTIONS, quick_config

if TYPE_CHECKING:
    from pydantic import BaseModel


def _factory(config: Any, env: SourceEnv) -> Any:
    from .source import LocalAdapter

    return LocalAdapter(config, env)


def _model() -> type[BaseModel]:
    from .config import LocalConfig

    return LocalConfig


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("local", _model, _factory,
                        help="a backlog file (TOML/JSON) with claims in SQLite; no network",
                        target_is_path=True, quick=quick_config, options=OPTIONS))
