"""Registers the `redmine` source kind with jr2 (entry point group `jr2`).

Importing this module stays cheap: the config model is imported when a model is first needed,
the tracker (and `requests`) only when a source is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core import hookimpl
from jr2_sources import SourceEnv, SourceKind


def _model() -> Any:
    from .config import RedmineConfig

    return RedmineConfig


def _tracker() -> type:
    from .adapter import RedmineTracker

    return RedmineTracker


def _factory(config: Any, env: SourceEnv) -> Any:
    return _tracker()(config, env)


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("redmine", _model, _factory,
                        help="the open issues of a Redmine project (URL --project P); claims "
                             "are journal notes, marks a custom field",
                        token_var="REDMINE_API_KEY", tracker=_tracker))
