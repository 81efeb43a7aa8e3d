"""Registers the `linear` source kind with jr2 (entry point group `jr2`).

Importing this module stays cheap: the config model and the tracker are named by `module:attr`,
imported when first needed (the tracker, and `requests` with it, when a source is built).
"""

from __future__ import annotations

from collections.abc import Callable

from jr2_core import hookimpl
from jr2_sources import SourceKind

TRACKER = "jr2_linear.tracker:LinearTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("linear", "jr2_linear.config:LinearConfig", TRACKER,
                        help="the open issues of a Linear team (its key, e.g. ENG); blockers "
                             "from relations and sub-issues; claims are marker attachments",
                        token_var="LINEAR_API_KEY", tracker=TRACKER))
