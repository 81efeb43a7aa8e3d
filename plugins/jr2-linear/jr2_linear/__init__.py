"""jr2-linear: a jr2 Work Source over the issues of a Linear team (kind `linear`).

It imports only jr2's public API and passes jr2's conformance kit. `LinearConfig` is the
options model of `linear:TEAM`; `LinearTracker` the tracker.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import LinearConfig
    from .tracker import LinearTracker

_HOME = {"LinearConfig": ".config", "LinearTracker": ".tracker"}


def __getattr__(name: str) -> Any:
    """Load the public names on first use: jr2 imports this package's plugin module at start-up
    (`jr2 --help`), which must not pay for pydantic or `requests`."""
    if name in _HOME:
        from importlib import import_module

        value = getattr(import_module(_HOME[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LinearConfig", "LinearTracker"]
