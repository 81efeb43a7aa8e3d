"""The plugin: registers the `httpbacklog` source kind with jr2 (entry point group `jr2`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core import hookimpl
from jr2_sources import SourceEnv, SourceKind


def _factory(config: Any, env: SourceEnv) -> Any:
    from .adapter import HttpBacklogAdapter

    return HttpBacklogAdapter(config, env)


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    from .adapter import HttpBacklogConfig

    register(SourceKind("httpbacklog", HttpBacklogConfig, _factory,
                        help="a JSON-over-HTTP backlog (the plugin template)"))
