"""Registers the `github` source kind (a built-in plugin, loaded like any other).

Design note: importing this module must stay cheap and must not import `requests` or PyGithub;
the config model is imported when a model is first needed (not when the kind registers), the
adapter only when a source is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceEnv, SourceKind


def _tracker() -> type:
    """The tracker class (its capabilities: `jr2 plugins`, `jr2 work github: --help`), imported
    when first needed."""
    from .adapter import GitHubTracker

    return GitHubTracker


def _factory(config: Any, env: SourceEnv) -> Any:
    try:
        tracker = _tracker()
    except ImportError as exc:  # requests comes with the `github` extra
        from jr2_core.errors import ConfigError

        raise ConfigError(f"github: {exc.name or 'a dependency'} is not installed; "
                          "install jr2[github]") from None
    return tracker(config, env)


def _model() -> Any:
    """The config model, imported (with pydantic) when first needed, not at registration."""
    from .config import GitHubConfig

    return GitHubConfig


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("github", _model, _factory,
                        help="the open issues of a GitHub repository (owner/repo); claims are "
                             "comments, leases renew, webhooks wake",
                        token_var="GH_TOKEN", tracker=_tracker))
