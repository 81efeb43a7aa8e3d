"""`Failure`: the expected way for a worker to fail (the seed's Failure).

A worker raises `Failure(reason, detail)`; the Pool catches it, records it under the item id,
deletes the worker's sandbox and goes on. Any other exception is a defect and ends the run `error`.
"""

from __future__ import annotations

from typing import Any

from .jsondata import jsonable


class Failure(Exception):
    """A worker's (or a Pool's) expected failure: a one-line `reason` and optional `detail`."""

    def __init__(self, reason: str, detail: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail

    def to_json(self) -> dict[str, Any]:
        """The Failure as JSON-ready data (`detail` as given; dataclasses and pydantic models
        in it are dumped)."""
        return {"reason": self.reason, "detail": jsonable(self.detail)}

    def __repr__(self) -> str:
        return f"Failure({self.reason!r})"
