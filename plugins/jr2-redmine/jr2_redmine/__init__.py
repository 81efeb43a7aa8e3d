"""jr2-redmine: a jr2 Work Source over the issues of a Redmine project (kind `redmine`).

It imports only jr2's public API (`jr2_core`, `jr2_sources` and its kit) and passes jr2's
conformance kit against a real Redmine (`jr2_redmine.server` runs a throwaway one).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import RedmineConfig
    from .tracker import RedmineTracker

_WHERE = {"RedmineConfig": ".config", "RedmineTracker": ".tracker"}


def __getattr__(name: str) -> Any:
    """Load the public names on first use: jr2 imports this package's plugin module at start-up
    (`jr2 --help`), which must not pay for pydantic or requests."""
    if name in _WHERE:
        from importlib import import_module

        value = getattr(import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RedmineConfig", "RedmineTracker"]
