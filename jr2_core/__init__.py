"""jr2_core: the Pool engine (the seed, in Python), runs and their gates, the run host and
client, the plugin host and the `run`/`gates`/`send` CLI. It knows nothing about trackers: the
Ready-set, the source registry and the Work Source layer are `jr2_sources`.

Everything public is re-exported here; the modules behind it are private by convention.
"""

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

__version__ = "0.1.0"

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
