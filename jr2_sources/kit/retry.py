"""The one retry layer of jr2's tracker sources (tenacity), shared and public.

A failure worth another attempt is a `Retryable`: 5xx, connection resets, timeouts and truncated
bodies retry with exponential backoff; 429 and a rate-limit 403 (`rate_limit_wait`) wait
`retry-after`, else (the primary limit spent) until `x-ratelimit-reset` by the response's
`Date`, else at least `secondary_wait`, doubling; any other 4xx fails. The time slept is bounded
by a budget (a wait past it fails at once, a `SourceError`); each wait is one stderr line. A
client that has had no answer yet treats a name that does not resolve, or a refused connection,
as final (`unreachable`): an offline machine ends the run at once.
"""

from __future__ import annotations

import email.utils
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_exponential

from jr2_core.errors import RetriesAborted, SourceError
from jr2_sources.capabilities.webhooks import header

T = TypeVar("T")

log = logging.getLogger("jr2.retry")


class Retryable(Exception):
    """A failure worth another attempt; `hint` is the least wait GitHub asked for, if any."""

    def __init__(self, reason: str, hint: float | None = None, *, floor: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint
        self.floor = floor


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait between attempts and how much waiting in total is allowed."""

    budget: float = 300.0
    backoff: float = 1.0
    max_backoff: float = 60.0
    secondary_wait: float = 60.0
    max_attempts: int = 8


def parse_http_date(value: str | None) -> datetime | None:
    """An RFC 7231 `Date` header as an aware datetime (None when absent or unparsable)."""
    if not value:
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def rate_limit_wait(status: int, headers: Mapping[str, str], message: str,
                    secondary_wait: float) -> Retryable | None:
    """A `Retryable` for a rate-limited 403/429, else None (a 403 is then a permission error)."""
    retry_after = header(headers, "retry-after")
    remaining = header(headers, "x-ratelimit-remaining")
    limited = ("rate limit" in message.lower() or retry_after is not None or remaining == "0")
    if status not in (403, 429) or (status == 403 and not limited):
        return None
    if retry_after is not None:
        try:
            return Retryable(f"HTTP {status}: rate limited", max(0.0, float(retry_after)))
        except ValueError:
            pass
    reset = header(headers, "x-ratelimit-reset")
    if remaining == "0" and reset is not None:
        date = parse_http_date(header(headers, "date"))  # the server's clock, else ours
        now = time.time() if date is None else date.timestamp()
        try:
            return Retryable(f"HTTP {status}: rate limit spent",
                             max(0.0, float(reset) - now) + 1.0)
        except ValueError:
            pass
    return Retryable(f"HTTP {status}: secondary rate limit", None, floor=secondary_wait)


def unreachable(exc: BaseException) -> str | None:
    """Why a connection failed when waiting will not help soon: the host name does not resolve,
    or the host refused the connection (nothing listens there); None for any other failure.
    Looks through the chain of causes (requests wraps urllib3, which wraps the socket error)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, socket.gaierror):
            return "its name does not resolve (offline, or a wrong host name?)"
        if isinstance(e, ConnectionRefusedError):
            return "it refused the connection (nothing listens there?)"
        reason = getattr(e, "reason", None)
        todo += [e.__cause__, e.__context__, reason if isinstance(reason, BaseException) else None]
        todo += [a for a in e.args if isinstance(a, BaseException)]
    return None


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    """The wait the tracker asked for (`hint`), else exponential backoff (at least a doubling
    `floor`: the secondary rate limit)."""
    backoff = wait_exponential(multiplier=policy.backoff, max=policy.max_backoff)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if not isinstance(exc, Retryable):
            return backoff(state)
        if exc.hint is not None:
            return exc.hint
        return max(backoff(state), exc.floor * 2.0 ** (state.attempt_number - 1))

    return wait


def _announce(label: str, policy: RetryPolicy) -> Callable[[RetryCallState], None]:
    """One stderr line per retry: `jr2: LABEL: retrying in 4 s (3/8): HTTP 503`."""
    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        why = exc.reason if isinstance(exc, Retryable) else type(exc).__name__
        wait = state.upcoming_sleep
        shown = f"{wait:.0f} s" if wait >= 1 else f"{wait:.1f} s"
        log.warning("jr2: %s: retrying in %s (%d/%d): %s", label, shown,
                    state.attempt_number + 1, policy.max_attempts, why)

    return before_sleep


_abort = threading.local()
_interrupts = [0]


def interrupt_retries() -> None:
    """Abandon every retry in flight now (`RetriesAborted` at its next wait or attempt): the
    run is being interrupted. Calls that start afterwards (the clean-up's releases) still
    retry, until the next interrupt."""
    _interrupts[0] += 1


@contextmanager
def abort_retries_when(predicate: Callable[[], bool]) -> Iterator[None]:
    """Within the block, in this thread, stop retrying (`RetriesAborted`) as soon as
    `predicate()` is true: between attempts and during the waits. A lease renewal uses it, so a
    renewal still retrying when its claim is settled gives up instead of writing after it."""
    previous = getattr(_abort, "predicate", None)
    _abort.predicate = predicate
    try:
        yield
    finally:
        _abort.predicate = previous


def retry_or_fail(fn: Callable[[], T], policy: RetryPolicy, sleep: Callable[[float], None], *,
                  label: str, tracker: str, on_retry: Callable[[], None] | None = None) -> T:
    """Run `fn`, retrying on `Retryable` per `policy`; when the retries run out, one clear
    `SourceError`: the wait the tracker asked for was over the budget, or it kept failing after
    N attempts. `on_retry` is called before each attempt after the first (request statistics)."""
    attempts = 0
    stop_now: Callable[[], bool] | None = getattr(_abort, "predicate", None)
    generation = _interrupts[0]

    def check() -> None:
        if _interrupts[0] != generation:
            raise RetriesAborted(f"{label}: {tracker}: retries abandoned (interrupted)")
        if stop_now is not None and stop_now():
            raise RetriesAborted(f"{label}: {tracker}: retries abandoned (no longer needed)")

    def once() -> T:
        nonlocal attempts
        attempts += 1
        if attempts > 1:
            check()
            if on_retry is not None:
                on_retry()
        return fn()

    def nap(seconds: float) -> None:
        if stop_now is None and sleep is not time.sleep:  # a test's clock: no slicing
            sleep(seconds)
            return
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            check()
            sleep(min(left, 0.05))

    def stop(state: RetryCallState) -> bool:  # the attempts, or the time to sleep, run out
        return (state.attempt_number >= policy.max_attempts
                or state.idle_for + state.upcoming_sleep > policy.budget)

    retrying = Retrying(retry=retry_if_exception_type(Retryable), wait=_wait(policy), stop=stop,
                        sleep=nap, reraise=True, before_sleep=_announce(label, policy))
    try:
        return retrying(once)
    except Retryable as exc:
        if exc.hint is not None and exc.hint > policy.budget:
            raise SourceError(
                f"{label}: {exc.reason}: {tracker} asks to wait {exc.hint:.0f}s, more than the "
                f"retry budget ({policy.budget:.0f}s)") from None
        raise SourceError(f"{label}: {tracker} kept failing ({exc.reason}) after {attempts} "
                          "attempt(s)") from None


class WriteSpacer:
    """Keeps mutating requests at least `spacing` seconds apart, across threads (GitHub asks
    for a second between writes; other trackers are kinder)."""

    def __init__(self, spacing: float) -> None:
        self.spacing = spacing
        self._lock = threading.Lock()
        self._last = -1e18

    def wait(self) -> None:
        with self._lock:
            delay = self._last + self.spacing - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._last = time.monotonic()
