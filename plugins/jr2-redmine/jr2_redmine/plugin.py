"""Registers the `redmine` source kind with jr2 (entry point group `jr2`).

Importing this module stays cheap: the config model and the tracker are named by `module:attr`,
imported when first needed (the tracker, and `requests` with it, when a source is built).
"""

from __future__ import annotations

from collections.abc import Callable

from jr2_core import hookimpl
from jr2_sources import SourceKind

TRACKER = "jr2_redmine.tracker:RedmineTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("redmine", "jr2_redmine.config:RedmineConfig", TRACKER,
                        help="the open issues of a Redmine project (URL --project P); claims "
                             "are journal notes, marks a custom field",
                        token_var="REDMINE_API_KEY", tracker=TRACKER))
