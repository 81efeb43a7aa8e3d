"""jr2_core: the Pool engine (the seed, in Python), runs and their gates, and the Ready-set.

Everything public is re-exported here, lazily (`jr2_core.lazy`: importing the package costs
nothing until a name is used); the modules behind it are private by convention.
"""

from typing import TYPE_CHECKING

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
    from .readyset import (
        BlockerRef,
        Claim,
        ReadySet,
        Reason,
        Snapshot,
        SnapshotItem,
        compute_ready_set,
    )
    from .registry import SourceEnv, SourceKind
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
    "BlockerRef": ".readyset",
    "Claim": ".readyset",
    "ReadySet": ".readyset",
    "Reason": ".readyset",
    "Snapshot": ".readyset",
    "SnapshotItem": ".readyset",
    "compute_ready_set": ".readyset",
    "SourceEnv": ".registry",
    "SourceKind": ".registry",
    "GateInfo": ".runs",
    "Observer": ".runs",
    "Run": ".runs",
    "RunEvent": ".runs",
    "RunResult": ".runs",
    "run": ".runs",
    "run_sync": ".runs",
    "start": ".runs",
}

lazy_exports(__name__, _WHERE)

__version__ = "0.1.0"

__all__ = [
    "BlockerRef",
    "Claim",
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
    "ReadySet",
    "Reason",
    "RetriesAborted",
    "Run",
    "RunEvent",
    "RunOutput",
    "RunResult",
    "Snapshot",
    "SnapshotItem",
    "Source",
    "SourceEnv",
    "SourceError",
    "SourceHTTPError",
    "SourceKind",
    "UnknownEvent",
    "UnknownGate",
    "UsageError",
    "__version__",
    "as_machine",
    "compute_ready_set",
    "define_event",
    "hookimpl",
    "pool",
    "run",
    "run_sync",
    "source",
    "start",
]
