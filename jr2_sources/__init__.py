"""jr2_sources: Work Sources, and the public pieces a third-party source reuses.

- `WorkSource`, `TrackerAdapter`, `WorkItem`, `default_holder`: the tracker-agnostic layer that
  turns an adapter (snapshot, claim, renew, release, record) into a jr2 `Source`.
- `Duration`, `parse_duration`: `10m`-style options.
- `Redactor`, `secret_values`: keep secrets out of logs and output.
- `jr2_sources.testing`: the conformance kit every source runs against itself.
"""

from .durations import Duration, parse_duration
from .redact import Redactor, secret_values
from .worksource import TrackerAdapter, WorkItem, WorkSource, default_holder

__all__ = [
    "Duration",
    "Redactor",
    "TrackerAdapter",
    "WorkItem",
    "WorkSource",
    "default_holder",
    "parse_duration",
    "secret_values",
]
