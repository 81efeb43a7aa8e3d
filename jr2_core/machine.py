"""Machines and the context a worker gets.

A Machine is anything the engine can run with an input and that ends with an output: a `Pool`,
or a plain Python function (`async def worker(item, ctx)`; a sync function runs in a thread).
`as_machine` wraps a function so both look alike to the engine.

`Context` is per worker and deliberately cheap: a few slots and nothing created eagerly. Its
`sandbox` directory exists only once a worker asks for it, and its gates are named after the
worker's path in the run (`T-1.review`, or `outer.T-1.review` when Pools nest).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .events import Event, EventDef
from .paths import safe_name

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .runs import Run


class Machine(ABC):
    """Something a run can host: it takes an input and ends with an output (or raises)."""

    id: str
    input_model: type[BaseModel] | None = None

    @property
    def vocabulary(self) -> Mapping[str, EventDef]:
        """The events this machine accepts from outside, by name."""
        return {}

    @abstractmethod
    async def execute(self, input: Any, ctx: Context) -> Any:
        """Run to the end and return the output; raise `Failure` to fail."""


class FunctionMachine(Machine):
    """A plain function as a Machine: `fn(input, ctx)`, awaited, or run in a thread if sync."""

    def __init__(self, fn: Callable[..., Any], *, id: str | None = None) -> None:
        self.fn = fn
        self.id = id or str(getattr(fn, "__name__", "worker"))
        self._is_async = inspect.iscoroutinefunction(fn)

    def execute(self, input: Any, ctx: Context) -> Coroutine[Any, Any, Any]:
        # Not `async def`: the function's own coroutine is handed back to be awaited, one
        # coroutine per item fewer on the Pool's hot path (bench/pool_throughput.py).
        if self._is_async:
            coro: Coroutine[Any, Any, Any] = self.fn(input, ctx)
            return coro
        return asyncio.to_thread(self.fn, input, ctx)


def as_machine(obj: Machine | Callable[..., Any]) -> Machine:
    """Return `obj` if it is a Machine, else wrap the callable as one."""
    if isinstance(obj, Machine):
        return obj
    if callable(obj):
        return FunctionMachine(obj)
    raise TypeError(f"not a Machine or a function: {type(obj).__name__}")


class Context:
    """What a running machine can reach: its run, its item id, its gates and its sandbox."""

    __slots__ = ("_sandbox", "item_id", "path", "run")

    def __init__(self, run: Run, path: str = "", item_id: str | None = None) -> None:
        self.run = run
        self.path = path  # gate prefix: "" at the root, "T-1." for the worker of item T-1
        self.item_id = item_id
        self._sandbox: Path | None = None

    def child(self, item_id: str) -> Context:
        """The context of the worker for `item_id` inside this machine."""
        return Context(self.run, f"{self.path}{item_id}.", item_id)

    async def gate(
        self,
        name: str,
        accepts: Iterable[EventDef],
        meta: Mapping[str, Any] | None = None,
    ) -> Event:
        """Open the gate `<path><name>` and wait until one accepted event is delivered to it."""
        fut: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        gate_id = f"{self.path}{name}"
        self.run._open_gate(gate_id, accepts, meta or {}, fut.set_result, persistent=False)
        try:
            return await fut
        finally:
            self.run._close_gate(gate_id)

    @property
    def sandbox(self) -> Path:
        """A directory of this worker's own, created on first use."""
        if self._sandbox is None:
            # the gate path minus its one trailing dot: `T-1.` and `T-1..` stay distinct
            key = self.path.removesuffix(".") or "root"
            path = self.run.sandbox_root() / safe_name(key)
            try:  # one mkdir per item: the run's directory exists after the first
                os.mkdir(path)
            except FileNotFoundError:
                path.mkdir(parents=True, exist_ok=True)
            except FileExistsError:
                pass
            self._sandbox = path
        return self._sandbox

    def _delete_sandbox(self) -> None:
        if self._sandbox is not None:
            shutil.rmtree(self._sandbox, ignore_errors=True)
            self._sandbox = None
