"""Events: what a gate accepts, who may send it, and the shape of its data.

An `EventDef` is declared once with `define_event()`; its `input` is a pydantic model, so a
delivery is validated before it changes anything. `Event` is one delivered instance.

pydantic is imported only when an event is delivered (or `Empty` is asked for), never to
declare one: a run that receives no event (every `jr2 work local:` drain that nobody pokes)
does not pay for it. An event declared without `input` carries no data (`Empty`).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from .errors import InvalidPayload, UsageError
from .records import record

if TYPE_CHECKING:
    from pydantic import BaseModel

Audience = Literal["external", "internal", "any"]


def _empty_model() -> type[BaseModel]:
    """`Empty`, the payload model of an event that carries no data (built on first use)."""
    made: type[BaseModel] | None = globals().get("_Empty")
    if made is None:
        from pydantic import BaseModel, ConfigDict

        class Empty(BaseModel):
            """The payload of an event that carries no data."""

            model_config = ConfigDict(extra="forbid")

        Empty.__module__ = __name__
        globals()["_Empty"] = made = Empty
    return made


def __getattr__(name: str) -> Any:
    if name == "Empty":
        return _empty_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@record(frozen=True, slots=True)
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
        return self.input if self.input is not None else _empty_model()

    def validate(self, data: Any) -> BaseModel:
        """Validate `data` against the event's model, or raise `InvalidPayload` (one line)."""
        from pydantic import ValidationError

        try:
            return self.model.model_validate({} if data is None else data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(payload)"
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            raise InvalidPayload(
                f"event {self.name!r}: {loc}: {first['msg']}{more}"
            ) from None


@record(frozen=True, slots=True)
class Event:
    """One delivered event: its name and validated data."""

    name: str
    data: BaseModel = field(default_factory=lambda: _empty_model()())


def define_event(
    *,
    name: str,
    description: str = "",
    audience: Audience = "external",
    input: type[BaseModel] | None = None,
) -> EventDef:
    """Declare an event (the seed's `defineEvent`)."""
    if not name or not isinstance(name, str):
        raise UsageError("an event needs a non-empty name")
    if audience not in ("external", "internal", "any"):
        raise UsageError(f"audience must be 'external', 'internal' or 'any', not {audience!r}")
    return EventDef(name=name, description=description, audience=audience, input=input)
