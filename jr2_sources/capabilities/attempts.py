"""Bounded retries with failure classes: which failures are offered again, and when.

A failure is *transient* when its command exited with a transient code (75, `EX_TEMPFAIL`,
unless `--transient-exit` names others); any other, and a transient one whose attempts are
spent, is final. Transient failure `n` (1 = the first run) is offered again no sooner than
`min(backoff * 2**(n-1), backoff_max)` seconds later. The record lives in the tracker, not in
this process (`KeepsAttempts`), so a restarted pool, or one elsewhere, continues the count.
"""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass
from datetime import datetime

import click

from jr2_core import Outcome

from . import options

EX_TEMPFAIL = 75


class KeepsAttempts(ABC):  # noqa: B024 (a declaration: `settle` takes the attempt)
    """Declares bounded retries (`jr2 work --max-attempts`): `settle` takes the `Attempt | None`
    to record, the snapshot reads it back (`SnapshotItem.attempts` / `.retry_after`), and a
    claim refuses an item whose record changed since the snapshot it was chosen from."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One settled attempt: its number (1 = the first run) and, for a transient failure offered
    again, the earliest time of the next one."""

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


WORK_OPTIONS = options(
    click.option("--max-attempts", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Runs per item: a transient failure (see --transient-exit) is offered "
                      "again after a backoff until they are spent; 1: every failure is final."),
    click.option("--transient-exit", "transient_exit", type=click.IntRange(1, 255),
                 multiple=True, metavar="CODE",
                 help="An exit code that is a transient failure (repeatable; default 75, "
                      "EX_TEMPFAIL). Only with --max-attempts above 1."),
    click.option("--retry-backoff", metavar="DURATION", default=None, show_default="30s",
                 help="Wait after the first transient failure; doubled after each next one. "
                      "Only with --max-attempts above 1."),
    click.option("--retry-backoff-max", metavar="DURATION", default=None, show_default="1h",
                 help="The longest wait between attempts. Only with --max-attempts above 1."),
)
"""`jr2 work`'s options of bounded retries (`AttemptPolicy`)."""
