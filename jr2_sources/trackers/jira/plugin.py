"""Registers the `jira` source kind (a built-in plugin, loaded like any other).

Its config model and tracker are named by `module:attr`, imported when first needed, so
importing this module imports neither pydantic's model nor `requests` or the `jira` package.
"""

from __future__ import annotations

from collections.abc import Callable

from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceKind

TRACKER = "jr2_sources.trackers.jira.tracker:JiraTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("jira", "jr2_sources.trackers.jira.config:JiraConfig", TRACKER,
                        help="the open issues a JQL filter selects (Cloud or Data Center); "
                             "Blocks links, claims are comments, webhooks wake",
                        token_var="JIRA_API_TOKEN", tracker=TRACKER))
