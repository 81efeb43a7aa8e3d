"""`record`: `dataclasses.dataclass` that costs less to define, with the same behaviour.

Design notes. `dataclass` writes each method it adds as Python source and compiles it when the
class is defined: `__init__`, `__repr__`, `__eq__`, and for a frozen class `__setattr__`,
`__delattr__` and `__hash__`. The parser and compiler take about 0.15 ms a method, and the 49
dataclasses `jr2 work local:` defines before its first command made 225 of them: about a
quarter of the CPU it spent starting (docs/performance.md §6; counted with `valgrind
--tool=callgrind`). `record` lets `dataclass` generate only what must be specific to the class
(`__init__`, and a frozen class's guards, on which `__init__` relies), and gives every record
the same `__repr__`, `__eq__` and `__hash__`, written once here and compiled with this module:
they read the fields named in `__dataclass_fields__` and answer exactly what the generated ones
answer (Python 3.11's: `__eq__` compares the tuples of the compared fields of two instances of
the same class, `__hash__` hashes that tuple for a frozen class and is None for a mutable one,
`__repr__` is `Name(field=value, ...)` and `...` on recursion). A method the class defines
itself is kept, as `dataclass` keeps it. `fields()`, `replace()`, `asdict()` work as ever.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")
_MISSING = object()


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields `names` of an instance, as a tuple (whatever their number)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _methods(cls: type, frozen: bool) -> dict[str, Any]:
    """`__repr__`, `__eq__` and `__hash__` for the record class `cls`."""
    shown = tuple(f.name for f in fields(cls) if f.repr)
    compared = _getter(tuple(f.name for f in fields(cls) if f.compare))
    hashed = _getter(tuple(f.name for f in fields(cls)
                           if (f.compare if f.hash is None else f.hash)))

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    made: dict[str, Any] = {"__repr__": __repr__, "__eq__": __eq__}
    made["__hash__"] = __hash__ if frozen else None
    for name, fn in made.items():
        if fn is not None:
            fn.__qualname__ = f"{cls.__qualname__}.{name}"
    return made


def _finish(cls: type, frozen: bool) -> None:
    """Add the methods `dataclass(repr=True, eq=True)` would have added, by its rules: never
    over a method the class body defines; `__hash__` unless the body set one explicitly."""
    own = cls.__dict__
    made = _methods(cls, frozen)
    for name in ("__repr__", "__eq__"):
        if name not in own:
            setattr(cls, name, made[name])
    body_hash = own.get("__hash__", _MISSING)
    if body_hash is _MISSING or (body_hash is None and "__eq__" in own):
        cls.__hash__ = made["__hash__"]  # type: ignore[method-assign]


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(field, Field))
def record(cls: type[T] | None = None, /, *, frozen: bool = False,
           slots: bool = False) -> type[T] | Callable[[type[T]], type[T]]:
    """`@dataclass`, `@dataclass(frozen=..., slots=...)`: the same class, defined faster."""

    def wrap(c: type[T]) -> type[T]:
        made = dataclass(c, repr=False, eq=False, frozen=frozen, slots=slots)
        _finish(made, frozen)
        return made

    return wrap if cls is None else wrap(cls)
