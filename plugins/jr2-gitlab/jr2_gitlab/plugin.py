"""Registers the `gitlab` source kind with jr2 (entry point group `jr2`).

Importing this module stays cheap: the config model is imported when a model is first needed (not
when the kind registers: no pydantic at start), the adapter (and `requests`) only when a source is
built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core import hookimpl
from jr2_sources import SourceEnv, SourceKind


def _tracker() -> type:
    """The tracker class (its capabilities: `jr2 plugins`, `jr2 work gitlab: --help`), imported
    when first needed."""
    from .adapter import GitLabTracker

    return GitLabTracker


def _factory(config: Any, env: SourceEnv) -> Any:
    return _tracker()(config, env)


def _model() -> Any:
    """The config model, imported (with pydantic) when first needed, not at registration."""
    from .config import GitLabConfig

    return GitLabConfig


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("gitlab", _model, _factory,
                        help="the open issues of a GitLab project (group/project); claims are "
                             "notes, leases renew, webhooks wake",
                        token_var="GITLAB_TOKEN", tracker=_tracker))
