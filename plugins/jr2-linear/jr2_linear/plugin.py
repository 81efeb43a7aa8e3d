"""Registers the `linear` source kind with jr2 (entry point group `jr2`).

Importing this module stays cheap: the config model (pydantic) is imported when a model is first
needed, the adapter (and `requests`) only when a source is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core import hookimpl
from jr2_sources import SourceEnv, SourceKind


def _factory(config: Any, env: SourceEnv) -> Any:
    from .adapter import LinearTracker

    return LinearTracker(config, env)


def _model() -> Any:
    from .config import LinearConfig

    return LinearConfig


def _tracker() -> type:
    from .adapter import LinearTracker

    return LinearTracker


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("linear", _model, _factory,
                        help="the open issues of a Linear team (its key, e.g. ENG); blockers "
                             "from relations and sub-issues; claims are marker attachments",
                        token_var="LINEAR_API_KEY", tracker=_tracker))
