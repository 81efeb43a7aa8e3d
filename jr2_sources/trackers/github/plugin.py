"""Registers the `github` source kind (a built-in plugin, loaded like any other).

Its config model and tracker are named by `module:attr`, imported when first needed, so
importing this module imports neither pydantic's model nor `requests` or PyGithub.
"""

from __future__ import annotations

from collections.abc import Callable

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceKind

TRACKER = "jr2_sources.trackers.github.tracker:GitHubTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("github", "jr2_sources.trackers.github.config:GitHubConfig", TRACKER,
                        help="the open issues of a GitHub repository (owner/repo); claims are "
                             "comments, leases renew, webhooks wake",
                        token_var="GH_TOKEN", tracker=TRACKER))
