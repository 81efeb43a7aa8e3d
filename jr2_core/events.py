"""Events: what a gate accepts, who may send it, and the shape of its data.

An `EventDef` is declared once with `define_event()`; its `input` is a pydantic model, so a
delivery is validated before it changes anything. `Event` is one delivered instance.
An event declared without `input` carries no data (`Empty`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import InvalidPayload, UsageError

Audience = Literal["external", "internal", "any"]


class Empty(BaseModel):
    """The payload of an event that carries no data."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class EventDef:
    """A named event: `audience` says who may send it (`external`/`any` through the CLI and the
    host, `internal` only from code); `input` validates its data (None: no data, `Empty`)."""

    name: str
    description: str = ""
    audience: Audience = "external"
    input: type[BaseModel] | None = None

    @property
    def model(self) -> type[BaseModel]:
        """The model a delivery's data is validated against: `input`, or `Empty`."""
        return self.input if self.input is not None else Empty

    def validate(self, data: Any) -> BaseModel:
        """Validate `data` against the event's model, or raise `InvalidPayload` (one line)."""
        try:
            return self.model.model_validate({} if data is None else data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(payload)"
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            raise InvalidPayload(
                f"event {self.name!r}: {loc}: {first['msg']}{more}"
            ) from None


@dataclass(frozen=True, slots=True)
class Event:
    """One delivered event: its name and validated data."""

    name: str
    data: BaseModel = field(default_factory=Empty)


def define_event(*, name: str, description: str = "", audience: Audience = "external",
                 input: type[BaseModel] | None = None) -> EventDef:
    """Declare an event (the seed's `defineEvent`)."""
    if not name or not isinstance(name, str):
        raise UsageError("an event needs a non-empty name")
    if audience not in ("external", "internal", "any"):
        raise UsageError(f"audience must be 'external', 'internal' or 'any', not {audience!r}")
    return EventDef(name=name, description=description, audience=audience, input=input)
