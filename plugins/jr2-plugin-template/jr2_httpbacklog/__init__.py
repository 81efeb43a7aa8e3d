"""jr2-plugin-template: a Work Source over a JSON-over-HTTP backlog (kind `httpbacklog`).

Copy this distribution to start a source plugin for your tracker. It imports only jr2's public
API (`jr2_core`, `jr2_sources`) and passes jr2's conformance kit.
"""

from .adapter import HttpBacklogConfig, HttpBacklogTracker

__all__ = ["HttpBacklogConfig", "HttpBacklogTracker"]
