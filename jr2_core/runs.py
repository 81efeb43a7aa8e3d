"""A run hosts one Machine: its gate table, event delivery, observers and result.

`start(machine, input)` begins a run in the running event loop and returns its `Run` handle at
once; `run()` starts and awaits; `run_sync()` serves scripts. The run owns the gate table: a
delivery names a gate id (matched exactly, never parsed), an event the gate accepts, and data that
validates against the event's model; anything else is refused with one line and changes nothing.

Observers (`Callable[[RunEvent], None]`) see workers start and end and gates open and close. The
engine builds a `RunEvent` only when at least one observer is registered, so an unobserved run
pays nothing per item; a raising observer is logged and never fatal.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from secrets import token_hex
from typing import Any, Literal

from .errors import DuplicateGate, Jr2Error, UnknownEvent, UnknownGate
from .events import Event, EventDef
from .failure import Failure
from .jsondata import jsonable
from .machine import Context, Machine, as_machine
from .paths import default_state_dir

log = logging.getLogger("jr2.run")

RunState = Literal["running", "done", "failed", "error", "interrupted"]


@dataclass(slots=True)
class GateInfo:
    """An open gate as `jr2 gates` shows it."""

    id: str
    accepts: list[str]
    opened_at: datetime
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (`opened_at` as ISO text), in the order `jr2 gates` shows."""
        return {"id": self.id, "accepts": list(self.accepts), "meta": jsonable(self.meta),
                "opened_at": self.opened_at.isoformat().replace("+00:00", "Z")}


@dataclass(slots=True)
class RunEvent:
    """Something an observer may want to know: `kind` is one of `worker_started`,
    `worker_finished`, `worker_failed`, `worker_cancelled`, `gate_opened`, `gate_closed`,
    `run_ended`. A `gate_opened` event's detail says whether the gate is `persistent` (a
    Pool's wake gate, open for the whole run) or waits for one answer (a worker's gate)."""

    kind: str
    run_id: str
    item_id: str | None = None
    gate_id: str | None = None
    detail: Any = None


Observer = Callable[[RunEvent], None]


@dataclass(slots=True)
class RunResult:
    """How a run ended: `done` with an output, `failed` with a Failure, `error` (a defect, with
    its traceback kept) or `interrupted`."""

    run_id: str
    state: RunState
    output: Any = None
    failure: dict[str, Any] | None = None
    error: str | None = None
    traceback: str | None = None

    @property
    def exit_code(self) -> int:
        """0 done (drained), 1 failed, 3 deadlocked, 4 error, 130 interrupted."""
        if self.state == "done":
            status = getattr(self.output, "status", None)
            return 3 if status == "deadlocked" else 0
        return {"failed": 1, "error": 4, "interrupted": 130}.get(self.state, 4)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data (the traceback is left out: it goes to logs)."""
        data: dict[str, Any] = {"run_id": self.run_id, "state": self.state,
                                "output": jsonable(self.output)}
        if self.failure is not None:
            data["failure"] = self.failure
        if self.error is not None:
            data["error"] = self.error
        return data


@dataclass(slots=True)
class _Gate:
    id: str
    accepts: dict[str, EventDef]
    meta: Mapping[str, Any]
    deliver: Callable[[Event], Any]
    persistent: bool
    opened_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class Run:
    """The handle of one run: `gates()`, `send()`, `result()`, `interrupt()`."""

    def __init__(self, machine: Machine, *, state_dir: Path | None = None,
                 observers: Iterable[Observer] = (), run_id: str | None = None) -> None:
        self.id = run_id or f"r-{token_hex(4)}"
        self.machine = machine
        self.state_dir = state_dir if state_dir is not None else default_state_dir()
        self.observers: list[Observer] = list(observers)
        self.state: RunState = "running"
        self._gates: dict[str, _Gate] = {}
        self._task: asyncio.Task[RunResult] | None = None
        self._interrupted = False
        self._sandboxes: Path | None = None

    def sandbox_root(self) -> Path:
        """`<state>/sandboxes/<run id>`, resolved, where the workers' sandboxes are made
        (computed once: a worker's sandbox is one `mkdir` in it)."""
        if self._sandboxes is None:
            self._sandboxes = (self.state_dir / "sandboxes" / self.id).resolve()
        return self._sandboxes

    # -- the public handle -------------------------------------------------------------------

    def gates(self) -> list[GateInfo]:
        """The open gates, oldest first."""
        return [
            GateInfo(id=g.id, accepts=list(g.accepts), meta=dict(g.meta), opened_at=g.opened_at)
            for g in self._gates.values()
        ]

    def send(self, gate_id: str, event: str, data: Any = None, *, external: bool = True) -> None:
        """Deliver `event` with `data` to the gate `gate_id`, or refuse with one line.

        `external` deliveries (the CLI, the host) may not send `internal` events.
        """
        gate = self._gates.get(gate_id)
        if gate is None:
            raise UnknownGate(f"no open gate {gate_id!r}")
        ev = gate.accepts.get(event)
        if ev is None or (external and ev.audience == "internal"):
            names = ", ".join(
                n for n, e in gate.accepts.items() if not (external and e.audience == "internal")
            )
            raise UnknownEvent(f"gate {gate_id!r} does not accept {event!r} (it accepts: {names})")
        payload = ev.validate(data)
        if not gate.persistent:
            del self._gates[gate_id]
        gate.deliver(Event(name=event, data=payload))

    async def result(self) -> RunResult:
        """Wait for the run to end and return how it ended."""
        if self._task is None:
            raise RuntimeError("the run was not started")
        return await asyncio.shield(self._task)

    def interrupt(self) -> None:
        """End the run cleanly: cancel its workers (their claims are released). Only the first
        call acts: cancelling again would abandon the clean-up half-way."""
        if self._task is not None and not self._task.done() and not self._interrupted:
            self._interrupted = True
            self._task.cancel()

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    # -- for the engine ----------------------------------------------------------------------

    def _open_gate(self, gate_id: str, accepts: Iterable[EventDef], meta: Mapping[str, Any],
                   deliver: Callable[[Event], Any], *, persistent: bool) -> None:
        if gate_id in self._gates:
            raise DuplicateGate(f"a gate {gate_id!r} is already open in run {self.id}")
        accepted = {e.name: e for e in accepts}
        self._gates[gate_id] = _Gate(gate_id, accepted, meta, deliver, persistent)
        if self.observers:
            self._emit(RunEvent("gate_opened", self.id, gate_id=gate_id,
                                detail={"persistent": persistent}))

    def _close_gate(self, gate_id: str) -> None:
        self._gates.pop(gate_id, None)
        if self.observers:
            self._emit(RunEvent("gate_closed", self.id, gate_id=gate_id))

    def _emit(self, event: RunEvent) -> None:
        for obs in self.observers:
            try:
                obs(event)
            except Exception:
                log.exception("observer %r raised on %s; ignored", obs, event.kind)

    async def _main(self, input: Any, after: Awaitable[Any] | None = None) -> RunResult:
        ctx = Context(self)
        try:
            if after is not None:
                await after
            output = await self.machine.execute(input, ctx)
            result = RunResult(run_id=self.id, state="done", output=output)
        except Failure as f:
            result = RunResult(run_id=self.id, state="failed", failure=f.to_json())
        except asyncio.CancelledError:
            if not self._interrupted:
                raise
            result = RunResult(run_id=self.id, state="interrupted")
        except Exception as exc:  # a defect: keep the cause
            msg = str(exc) if isinstance(exc, Jr2Error) else f"{type(exc).__name__}: {exc}"
            result = RunResult(
                run_id=self.id, state="error", error=msg, traceback=traceback.format_exc()
            )
        self.state = result.state
        if self.observers:
            self._emit(RunEvent("run_ended", self.id, detail=result))
        return result


def start(machine: Machine | Callable[..., Any], input: Any = None, *,
          state_dir: Path | None = None, observers: Iterable[Observer] = (),
          run_id: str | None = None, after: Awaitable[Any] | None = None) -> Run:
    """Start a run of `machine` in the running event loop and return its handle at once; with
    `after`, the machine begins once it is done (the run host listening, say).

    The run input is validated against the machine's `input_model` first (a `ValidationError`
    names the field)."""
    m = as_machine(machine)
    if m.input_model is not None and not isinstance(input, m.input_model):
        input = m.input_model.model_validate({} if input is None else input)
    handle = Run(m, state_dir=state_dir, observers=observers, run_id=run_id)
    handle._task = asyncio.get_running_loop().create_task(handle._main(input, after),
                                                            name=handle.id)
    return handle


async def run(machine: Machine | Callable[..., Any], input: Any = None, **kwargs: Any) -> RunResult:
    """Start a run and wait for it to end."""
    return await start(machine, input, **kwargs).result()


def run_sync(machine: Machine | Callable[..., Any], input: Any = None, **kwargs: Any) -> RunResult:
    """`run()` for scripts without an event loop."""
    return asyncio.run(run(machine, input, **kwargs))
