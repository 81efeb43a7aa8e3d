"""The plugin: registers the `httpbacklog` source kind with jr2 (entry point group `jr2`).

Nothing is imported at registration: the config model, the tracker class and the client are
named by functions jr2 calls when the kind is used, so every other command starts without them
(and without pydantic)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core import hookimpl
from jr2_sources import SourceEnv, SourceKind


def _model() -> Any:
    from .adapter import HttpBacklogConfig

    return HttpBacklogConfig


def _tracker() -> type:
    from .adapter import HttpBacklogTracker

    return HttpBacklogTracker


def _factory(config: Any, env: SourceEnv) -> Any:
    return _tracker()(config, env)


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("httpbacklog", _model, _factory,
                        help="a JSON-over-HTTP backlog (the plugin template)",
                        tracker=_tracker))
