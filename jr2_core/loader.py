"""Load a workflow Machine from `FILE.py:ATTR` or `module:attr` (for `jr2 run`)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .errors import UsageError
from .machine import Machine


def load_machine(target: str) -> Machine:
    """Import `target` and return the Machine it names, or raise a one-line `UsageError`."""
    spec, sep, attr = target.rpartition(":")
    if not sep or not spec or not attr:
        raise UsageError(f"{target!r}: expected FILE.py:ATTR or module:attr")
    module: Any
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        path = Path(spec)
        if not path.is_file():
            raise UsageError(f"{spec}: no such file")
        name = f"_jr2_workflow_{path.stem}"
        mspec = importlib.util.spec_from_file_location(name, path)
        if mspec is None or mspec.loader is None:
            raise UsageError(f"{spec}: cannot be imported as Python")
        module = importlib.util.module_from_spec(mspec)
        sys.path.insert(0, str(path.resolve().parent))
        sys.modules[name] = module
        try:
            mspec.loader.exec_module(module)
        except SyntaxError as exc:
            raise UsageError(f"{spec}:{exc.lineno}: {exc.msg}") from None
        except Exception as exc:
            raise UsageError(f"{spec}: importing it raised {type(exc).__name__}: {exc}") from None
    else:
        try:
            module = importlib.import_module(spec)
        except ModuleNotFoundError as exc:
            raise UsageError(f"{spec}: no module named {exc.name!r}") from None
        except Exception as exc:
            raise UsageError(f"{spec}: importing it raised {type(exc).__name__}: {exc}") from None
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise UsageError(f"{spec} has no attribute {attr!r}") from None
    if not isinstance(value, Machine):
        raise UsageError(f"{target} is a {type(value).__name__}, not a Machine "
                         "(make one with jr2_core.pool())")
    return value
