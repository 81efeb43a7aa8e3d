"""Lazy re-exports for a package's `__init__`, so that importing a package costs only what the
caller then uses.

`jr2 --help` and `jr2 --version` must start in well under 100 ms, and a plugin module that says
`from jr2_core import hookimpl` must not pull in pydantic, asyncio and aiohttp for it. A package
lists its public names with the submodule each lives in; a name's submodule is imported on first
access and the value cached in the package's namespace, so later accesses are plain attribute
reads. Type checkers see the real imports (under `TYPE_CHECKING` in the package).

A public name may also be a submodule's name (`jr2_core.pool` is the `pool` function): the
import system sets the package's attribute to the submodule once it has run, which would hide
the function. The package's module class therefore puts the submodule's own export there
instead, as the eager `from .pool import pool` used to.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any


class _LazyPackage(types.ModuleType):
    """A package module whose public names load on first use (see the module notes)."""

    _jr2_where: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        mod = self.__dict__.get("_jr2_where", {}).get(name)
        if mod is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(mod, self.__name__), name)
        setattr(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        where = self.__dict__.get("_jr2_where", {})
        if (name in where and isinstance(value, types.ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            value = getattr(value, name)  # the submodule ran: keep the export, not the module
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__) | set(self.__dict__.get("_jr2_where", {})))


def lazy_exports(package: str, where: Mapping[str, str]) -> None:
    """Make `package`'s public names (`where`: name -> relative submodule, e.g. `.pool`) load on
    first use. Call it at the end of the package's `__init__`."""
    module = sys.modules[package]
    module.__class__ = _LazyPackage
    module._jr2_where = dict(where)  # type: ignore[attr-defined]
