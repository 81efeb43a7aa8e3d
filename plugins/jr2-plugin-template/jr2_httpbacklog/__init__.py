"""jr2-plugin-template: a Work Source over a JSON-over-HTTP backlog (kind `httpbacklog`).

Copy this distribution to start a source plugin for your tracker. It imports only jr2's public
API (`jr2_core`, `jr2_sources`) and passes jr2's conformance kit.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tracker import HttpBacklogConfig, HttpBacklogTracker


def __getattr__(name: str) -> Any:
    """Load the public names on first use: jr2 imports this package's plugin module at start-up
    (`jr2 --help`), which must not pay for the config model's pydantic."""
    if name in __all__:
        from importlib import import_module

        value = getattr(import_module(".tracker", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["HttpBacklogConfig", "HttpBacklogTracker"]
