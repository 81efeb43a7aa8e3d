"""jr2_core: the Pool engine (the seed, in Python), runs and their gates, the run host and
client, the plugin host and the `run`/`gates`/`send` CLI. It knows nothing about trackers: the
Ready-set, the source registry and the Work Source layer are `jr2_sources`.

Everything public is re-exported here, lazily (`jr2_core.lazy`: a name's module is imported on
first use, so `jr2 --help` pays for none of them); the modules behind it are private by
convention. The Ready-set and registry names once exported here still resolve, with a
`DeprecationWarning` (`__getattr__` below, and `jr2_core._moved` for the old module paths).
"""

from typing import TYPE_CHECKING, Any

from . import _moved
from .lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import (
        ConfigError,
        DuplicateGate,
        GateError,
        InvalidPayload,
        Jr2Error,
        NoLiveRun,
        PoolDefect,
        RetriesAborted,
        SourceError,
        SourceHTTPError,
        UnknownEvent,
        UnknownGate,
        UsageError,
    )
    from .events import Empty, Event, EventDef, define_event
    from .failure import Failure
    from .hookspecs import hookimpl
    from .machine import Context, FunctionMachine, Machine, as_machine
    from .pool import FailureInfo, Next, Outcome, Pool, RunOutput, Source, pool, source
    from .runs import GateInfo, Observer, Run, RunEvent, RunResult, run, run_sync, start

_WHERE = {
    "ConfigError": ".errors",
    "DuplicateGate": ".errors",
    "GateError": ".errors",
    "InvalidPayload": ".errors",
    "Jr2Error": ".errors",
    "NoLiveRun": ".errors",
    "PoolDefect": ".errors",
    "RetriesAborted": ".errors",
    "SourceError": ".errors",
    "SourceHTTPError": ".errors",
    "UnknownEvent": ".errors",
    "UnknownGate": ".errors",
    "UsageError": ".errors",
    "Empty": ".events",
    "Event": ".events",
    "EventDef": ".events",
    "define_event": ".events",
    "Failure": ".failure",
    "hookimpl": ".hookspecs",
    "Context": ".machine",
    "FunctionMachine": ".machine",
    "Machine": ".machine",
    "as_machine": ".machine",
    "FailureInfo": ".pool",
    "Next": ".pool",
    "Outcome": ".pool",
    "Pool": ".pool",
    "RunOutput": ".pool",
    "Source": ".pool",
    "pool": ".pool",
    "source": ".pool",
    "GateInfo": ".runs",
    "Observer": ".runs",
    "Run": ".runs",
    "RunEvent": ".runs",
    "RunResult": ".runs",
    "run": ".runs",
    "run_sync": ".runs",
    "start": ".runs",
}

__version__ = "0.1.0"

_moved.install()
lazy_exports(__name__, _WHERE)


def __getattr__(name: str) -> Any:
    """The names that moved to `jr2_sources`, imported on first use, with a warning."""
    where = _moved.MOVED_NAMES.get(name)
    if where is None:
        raise AttributeError(f"module 'jr2_core' has no attribute {name!r}")
    import importlib

    _moved.warn_moved(f"jr2_core.{name}", f"{where}.{name}")
    return getattr(importlib.import_module(where), name)


__all__ = [
    "ConfigError",
    "Context",
    "DuplicateGate",
    "Empty",
    "Event",
    "EventDef",
    "Failure",
    "FailureInfo",
    "FunctionMachine",
    "GateError",
    "GateInfo",
    "InvalidPayload",
    "Jr2Error",
    "Machine",
    "Next",
    "NoLiveRun",
    "Observer",
    "Outcome",
    "Pool",
    "PoolDefect",
    "RetriesAborted",
    "Run",
    "RunEvent",
    "RunOutput",
    "RunResult",
    "Source",
    "SourceError",
    "SourceHTTPError",
    "UnknownEvent",
    "UnknownGate",
    "UsageError",
    "__version__",
    "as_machine",
    "define_event",
    "hookimpl",
    "pool",
    "run",
    "run_sync",
    "source",
    "start",
]
