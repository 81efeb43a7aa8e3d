"""Bounded retries with failure classes: which failures are offered again, and when.

Design note: a worker's failure is *transient* when its command exited with one of the
transient exit codes (75, `EX_TEMPFAIL` from sysexits.h, unless `--transient-exit` names
others); any other failure, and a transient one whose attempts are spent, is final (the item is
marked failed and waits for a person, as without retries). A transient failure of attempt `n`
(1 = the first run) is offered again no sooner than `min(backoff * 2**(n-1), backoff_max)`
seconds later.

The attempt count and that time are not kept in this process: the WorkSource passes an
`Attempt` to the tracker's `settle` (`Tracker.retries`), which writes it in the tracker (the
settled claim comment's marker on GitHub, Jira and GitLab; the claim store for `local:`), and
the tracker's snapshot reads it back (`SnapshotItem.attempts` and `.retry_after`). A
restarted pool, or one on another machine, therefore continues the count, and the claim itself
refuses an item whose record changed since the snapshot it was chosen from, so a stale snapshot
cannot reset it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from jr2_core import Outcome

EX_TEMPFAIL = 75


@dataclass(frozen=True, slots=True)
class Attempt:
    """One settled attempt, as an adapter records it: its number (1 = the first run) and, for
    a transient failure that will be offered again, the earliest time of the next attempt."""

    number: int
    retry_after: datetime | None = None


@dataclass(frozen=True, slots=True)
class AttemptPolicy:
    """`--max-attempts`, `--transient-exit`, `--retry-backoff` and `--retry-backoff-max`."""

    max_attempts: int = 1
    transient: frozenset[int] = frozenset({EX_TEMPFAIL})
    backoff: float = 30.0
    backoff_max: float = 3600.0

    def is_transient(self, outcome: Outcome) -> bool:
        """True for a failure whose command exited with a transient code."""
        if outcome.status != "failed" or outcome.failure is None:
            return False
        detail = outcome.failure.detail
        code = detail.get("exit_code") if isinstance(detail, dict) else None
        return isinstance(code, int) and code in self.transient

    def delay(self, number: int) -> float:
        """Seconds to wait after transient failure number `number` (1, 2, ...)."""
        return min(self.backoff * 2.0 ** max(0, number - 1), self.backoff_max)
