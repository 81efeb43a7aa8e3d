"""Registers the `jira` source kind (a built-in plugin, loaded like any other).

Design note: importing this module must stay cheap and must not import `requests` or the
`jira` package; the config model is imported when a model is first needed (not when the kind
registers: no pydantic at start), the adapter (and with it the `jira` package) only when a source
is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceEnv, SourceKind


def _tracker() -> type:
    """The tracker class (its capabilities: `jr2 plugins`, `jr2 work jira: --help`), imported
    when first needed."""
    from .adapter import JiraTracker

    return JiraTracker


def _factory(config: Any, env: SourceEnv) -> Any:
    try:
        tracker = _tracker()
    except ImportError as exc:  # the `jira` package comes with the `jira` extra
        from jr2_core.errors import ConfigError

        raise ConfigError(f"jira: {exc.name or 'a dependency'} is not installed; "
                          "install jr2[jira]") from None
    return tracker(config, env)


def _model() -> Any:
    """The config model, imported (with pydantic) when first needed, not at registration."""
    from .config import JiraConfig

    return JiraConfig


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("jira", _model, _factory,
                        help="the open issues a JQL filter selects (Cloud or Data Center); "
                             "Blocks links, claims are comments, webhooks wake",
                        token_var="JIRA_API_TOKEN", tracker=_tracker))
