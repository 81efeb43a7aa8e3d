"""`HasDashboard`: the mixin a tracker inherits to keep a dashboard issue (`jr2 dashboard`,
`jr2 work --dashboard`; module notes of `jr2_sources.capabilities.dashboard`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["HasDashboard"]


class HasDashboard(ABC):
    """Declares a dashboard: `dashboard(issue)` opens one issue (a file on `local:`) as the
    `Board` whose body jr2 keeps up to date with the Ready-set."""

    @abstractmethod
    def dashboard(self, issue: str | int) -> Any:
        """The issue `issue` as the dashboard's `Board`; a one-line `UsageError` if it cannot be."""
        raise NotImplementedError
