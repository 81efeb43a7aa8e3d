"""Registers the `gitlab` source kind with jr2 (entry point group `jr2`).

Importing this module stays cheap: the config model and the tracker are named by `module:attr`,
imported when first needed (the tracker, and `requests` with it, when a source is built).
"""

from __future__ import annotations

from collections.abc import Callable

from jr2_core import hookimpl
from jr2_sources import SourceKind

TRACKER = "jr2_gitlab.tracker:GitLabTracker"


@hookimpl
def jr2_register_sources(register: Callable[[SourceKind], None]) -> None:
    register(SourceKind("gitlab", "jr2_gitlab.config:GitLabConfig", TRACKER,
                        help="the open issues of a GitLab project (group/project); claims are "
                             "notes, leases renew, webhooks wake",
                        token_var="GITLAB_TOKEN", tracker=TRACKER))
