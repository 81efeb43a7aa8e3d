"""The shared retry layer: one clear error when retries run out, and retries abandoned when
their result is no longer wanted."""

from __future__ import annotations

import threading

import pytest

from jr2_core.errors import RetriesAborted, SourceError
from jr2_sources.kit.retry import (
    Retryable,
    RetryPolicy,
    WriteSpacer,
    abort_retries_when,
    retry_or_fail,
)


def test_retries_that_run_out_are_one_clear_error() -> None:
    calls: list[int] = []

    def always() -> None:
        calls.append(1)
        raise Retryable("HTTP 503")

    with pytest.raises(SourceError, match=r"^x:o/r: X kept failing \(HTTP 503\) after 3 attempt"):
        retry_or_fail(always, RetryPolicy(budget=100, max_attempts=3), lambda s: None,
                      label="x:o/r", tracker="X")
    assert len(calls) == 3


def test_a_wait_over_the_budget_says_so() -> None:
    def limited() -> None:
        raise Retryable("HTTP 429", hint=600)

    with pytest.raises(SourceError, match="asks to wait 600s, more than the retry budget"):
        retry_or_fail(limited, RetryPolicy(budget=5), lambda s: None, label="x", tracker="X")


def test_retries_are_abandoned_once_the_predicate_holds() -> None:
    attempts: list[int] = []
    done = threading.Event()

    def flaky() -> None:
        attempts.append(1)
        done.set()  # the claim gets settled after the first attempt
        raise Retryable("HTTP 503")

    with abort_retries_when(done.is_set), pytest.raises(RetriesAborted):
        retry_or_fail(flaky, RetryPolicy(budget=300), lambda s: None, label="x", tracker="X")
    assert len(attempts) == 1


def test_without_a_predicate_nothing_is_abandoned() -> None:
    attempts: list[int] = []

    def twice() -> str:
        attempts.append(1)
        if len(attempts) < 2:
            raise Retryable("reset")
        return "ok"

    assert retry_or_fail(twice, RetryPolicy(), lambda s: None, label="x", tracker="X") == "ok"


def test_the_write_spacer_keeps_writes_apart() -> None:
    import time

    spacer = WriteSpacer(0.05)
    t0 = time.monotonic()
    for _ in range(3):
        spacer.wait()
    assert time.monotonic() - t0 >= 0.1
