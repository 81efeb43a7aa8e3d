"""jr2_core: the Pool engine (the seed, in Python), runs and their gates, and the Ready-set.

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
    SourceError,
    UnknownEvent,
    UnknownGate,
    UsageError,
)
from .events import Empty, Event, EventDef, define_event
from .failure import Failure
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
    "Run",
    "RunEvent",
    "RunOutput",
    "RunResult",
    "Source",
    "SourceError",
    "UnknownEvent",
    "UnknownGate",
    "UsageError",
    "__version__",
    "as_machine",
    "define_event",
    "pool",
    "run",
    "run_sync",
    "source",
    "start",
]
