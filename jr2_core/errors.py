"""Every exception jr2 raises on purpose, in one place (as httpx does).

`Jr2Error` is the root; its message is one line a user can act on, with no secret in it. The CLI
prints `error: <message>` and exits with the error's `exit_code` instead of a traceback.
"""

from __future__ import annotations

from typing import Any


class Jr2Error(Exception):
    """An error with a one-line message meant for the user."""

    exit_code = 2


class UsageError(Jr2Error):
    """Bad input from the user: a missing file, an unknown source kind, a bad option."""


class ConfigError(UsageError):
    """A source or workflow configuration that does not validate."""


class GateError(Jr2Error):
    """A delivery to a gate was refused; nothing changed."""


class UnknownGate(GateError):
    """No open gate has this id."""


class UnknownEvent(GateError):
    """The gate is open but does not accept this event."""


class InvalidPayload(GateError):
    """The event's data does not validate against the event's model."""


class DuplicateGate(GateError):
    """Two live gates with one id: a defect in the machine that opened the second."""


class PoolDefect(Jr2Error):
    """The Pool or its Source broke a rule of the seed (a defect: the run ends `error`)."""

    exit_code = 4


class StateFull(Jr2Error):
    """The disk of the state directory refused a write (full, over a quota, or a file-size
    limit): the item being written failed, and the run ends (its claims released)."""

    exit_code = 4


class SourceError(Jr2Error):
    """A Work Source could not read or write its tracker (after its retries)."""

    exit_code = 4


class SourceHTTPError(SourceError):
    """A tracker answered with an error status that retrying cannot fix; `status` is the code."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ItemError(SourceError):
    """A failure that concerns one item only: the tracker refused to claim, renew or settle
    that item (locked, deleted, transferred, no permission on that one issue). The Work Source
    skips or fails that item with this reason and the run goes on (a blast radius of one)."""


class RetriesAborted(SourceError):
    """Retries were abandoned because their result was no longer wanted (a lease renewal whose
    claim was settled meanwhile)."""


class NoLiveRun(UsageError):
    """`jr2 gates` / `jr2 send` found no run to talk to, or several without `--run`."""


def error_words(error: Any) -> str:
    """One pydantic error in jr2's words: a model's own check as it wrote it (without
    pydantic's `Value error, `), pydantic's `Input should be X` as `expected X, not <input>`."""
    msg = str(error["msg"])
    if error["type"] == "value_error":
        return msg.removeprefix("Value error, ")
    if msg.startswith("Input should be "):
        got = f", not {error['input']!r}" if "input" in error else ""
        return f"expected {msg.removeprefix('Input should be ')}{got}"
    if error["type"] == "missing":
        return "required, and not given"
    return msg
