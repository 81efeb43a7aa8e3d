"""The worker of `jr2 work`: run one COMMAND per item, where its `Workspace` says.

The command gets the item in its environment (`JR2_ITEM_*`, `JR2_SANDBOX`, `JR2_RUN_ID`; answered
gates, blockers handed over, review feedback) on top of `base_env` (`workerenv.py`). Its stdout
and stderr go, scrubbed of secrets, to one log per item under `<state>/logs/<run id>/`, at most
`log_limit` bytes. Exit 0 is success (the output its last stdout line, JSON when it is JSON);
exit 79 with `jr2: await-approval NAME [reason]` asks for approval; any other exit is a `Failure`
with the exit code and the last lines of stderr (docs/reference/worker.md). A blast radius of one
item: a value no environment variable can carry is left out (the item JSON has it); a command
that cannot start fails its item; the command's process group never outlives it (SIGTERM, then
SIGKILL after `KILL_GRACE`; `kill_all()` at once); a write the disk refuses fails the item with
`detail["state_full"]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import shutil
import signal
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import IO, Any

from jr2_core import Context, Failure
from jr2_core.errors import UsageError
from jr2_core.paths import safe_name
from jr2_core.timeouts import wait_for
from jr2_sources.capabilities.approvals.policy import EX_AWAIT_APPROVAL, env_for, parse_ask
from jr2_sources.capabilities.feedback.report import write as feedback_files
from jr2_sources.kit.fence import Fence
from jr2_sources.kit.redact import Redactor
from jr2_sources.kit.sizes import format_size
from jr2_sources.worksource import WorkItem, item_json

from .workspace import Workspace

log = logging.getLogger("jr2.command")

STDERR_TAIL = 20
KILL_GRACE = 5.0
READ_CHUNK = 1 << 16
LINE_MAX = 8 << 20
ENV_VALUE_MAX = 64 << 10
"""The most bytes jr2 puts in one item variable (the item JSON file has the rest)."""
LOG_LIMIT = 10 << 20
"""The most bytes of output one item's log keeps (`--log-limit`)."""
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""A write the disk refused: no space, over a quota, over a file-size limit."""
OUTPUT_DRAIN = 1.0
"""How long output is still read after the command's group ended (a process that left the
group may hold the pipes open)."""

_running: set[_Process] = set()


def resolve_command(argv: list[str]) -> list[str]:
    """Check that COMMAND exists before anything is claimed; return argv with an absolute
    program path (the command may run in another directory, so a relative path would break)."""
    if not argv:
        raise UsageError("no COMMAND given: jr2 work SOURCE [OPTIONS] -- COMMAND [ARGS...]")
    prog = argv[0]
    if os.sep in prog or (os.altsep and os.altsep in prog):
        path = Path(prog).resolve()
        if not path.is_file():
            raise UsageError(f"command not found: {prog}")
        if not os.access(path, os.X_OK):
            raise UsageError(f"command is not executable: {prog}")
        return [str(path), *argv[1:]]
    found = shutil.which(prog)
    if found is None:
        raise UsageError(f"command not found: {prog} (not on PATH)")
    return [found, *argv[1:]]


# -- the environment -------------------------------------------------------------------------


def env_problem(value: str) -> str | None:
    """Why `value` cannot be an environment variable's value, or None when it can."""
    if "\0" in value:
        return "it holds a NUL byte, which no environment variable can carry"
    try:
        size = len(value.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return "it holds characters that cannot be encoded"
    if size > ENV_VALUE_MAX:
        return f"it is {size:,} bytes, over the {ENV_VALUE_MAX:,}-byte limit for one variable"
    return None


def item_env(item: WorkItem, item_file: Path, run_id: str, *, branch: str | None = None,
             sandbox: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The item's variables, and one note for each that had to be left out. `branch` (the
    workspace's) stands in for the item's own; `sandbox` is the item's scratch directory."""
    values = {"JR2_ITEM_ID": item.id, "JR2_ITEM_TITLE": item.title,
              "JR2_ITEM_URL": item.url or "", "JR2_ITEM_JSON": os.path.abspath(item_file),
              "JR2_RUN_ID": run_id}
    if branch or item.branch:
        values["JR2_ITEM_BRANCH"] = branch or item.branch or ""
    if sandbox is not None:
        values["JR2_SANDBOX"] = os.path.abspath(sandbox)
    values.update(hand_off(item, item_file.with_name(item_file.stem + ".blockers.json")))
    values.update(env_for(item.gates))  # --gate: the answers for this attempt
    values.update(feedback_files(item.extra.get("feedback"), item_file))  # --on-feedback rerun
    env: dict[str, str] = {}
    notes: list[str] = []
    for name, value in values.items():
        problem = env_problem(value)
        if problem is None:
            env[name] = value
        else:
            notes.append(f"{name} left out of the environment: {problem}; "
                         "read it from the item JSON file ($JR2_ITEM_JSON)")
    return env, notes


# -- the process group -----------------------------------------------------------------------


def _kill_group(proc: _Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _group_alive(proc: _Process) -> bool:
    try:
        os.killpg(proc.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class _ExitProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol for `create_subprocess_exec`, plus `exited`: a future done the
    moment the process exits, whether or not its pipes are still open."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


class _Process(asyncio.subprocess.Process):
    """asyncio's `Process`, with its protocol's `exited` future."""

    def __init__(self, transport: Any, protocol: _ExitProtocol,
                 loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(transport, protocol, loop)
        self.exited = protocol.exited


async def _spawn(*argv: str, **kw: Any) -> _Process:
    """`asyncio.create_subprocess_exec`, whose exit `_exited` hears without polling."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ExitProtocol(1 << 16, loop), *argv, **kw)  # asyncio's default limit
    return _Process(transport, protocol, loop)


async def _exited(proc: _Process) -> int:
    """The command's exit code, as soon as it exits. Not `proc.wait()`: that also waits for
    the output pipes to close, which a background child holding them delays."""
    await asyncio.shield(proc.exited)  # a timeout cancels this wait, never the shared future
    assert proc.returncode is not None  # set before the protocol hears of the exit
    return proc.returncode


async def _end_group(proc: _Process) -> None:
    """End the command and everything left in its process group: SIGTERM, then SIGKILL after
    `KILL_GRACE`. Returns once the command is reaped and the group is gone."""
    if proc.returncode is not None and not _group_alive(proc):
        return
    _kill_group(proc, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    end = loop.time() + KILL_GRACE
    while loop.time() < end:
        if proc.returncode is not None and not _group_alive(proc):
            return
        await asyncio.sleep(0.02)
    _kill_group(proc, signal.SIGKILL)
    await _exited(proc)


def kill_all() -> None:
    """SIGKILL every running command's process group (a second Ctrl-C)."""
    for proc in list(_running):
        _kill_group(proc, signal.SIGKILL)


# -- output ----------------------------------------------------------------------------------


async def _read_lines(stream: asyncio.StreamReader, on_line: Callable[[bytes], None]) -> None:
    """Call `on_line` with each line of `stream` (without its newline), whatever its length;
    a line over `LINE_MAX` comes in pieces of that size."""
    buf = bytearray()
    while chunk := await stream.read(READ_CHUNK):
        buf += chunk
        if b"\n" in chunk:
            *lines, rest = buf.split(b"\n")
            for line in lines:
                on_line(bytes(line))
            buf = bytearray(rest)
        while len(buf) > LINE_MAX:
            on_line(bytes(buf[:LINE_MAX]))
            del buf[:LINE_MAX]
    if buf:
        on_line(bytes(buf))


def _clip(text: str, limit: int = 300) -> str:
    """A line short enough for a failure reason (already redacted: redaction comes first)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


async def _finish_reading(readers: list[asyncio.Task[None]]) -> None:
    """Let the readers finish the output for at most `OUTPUT_DRAIN` seconds."""
    _, pending = await asyncio.wait(readers, timeout=OUTPUT_DRAIN)
    for task in pending:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


# -- the worker ------------------------------------------------------------------------------


def command_worker(argv: list[str], *, log_dir: Path, run_id: str, redact: Redactor,
                   timeout: float | None = None, workspace: Workspace | None = None,
                   base_env: Mapping[str, str] | None = None, log_limit: int = LOG_LIMIT,
                   fence: Fence | None = None,
                   ) -> Callable[[WorkItem, Context], Coroutine[Any, Any, Any]]:
    """A Pool worker that runs `argv` for each item, in `workspace` (default: the current
    directory) with `base_env` (default: jr2's whole environment) plus the item's variables;
    its log keeps at most `log_limit` bytes of output; `fence` ends a command whose lease
    lapsed while the pool could not (`kit/fence.py`)."""
    place_of = workspace or Workspace(Path.cwd())
    logs = log_dir.resolve()
    # jr2's environment minus what is per item, filtered once, not once per item
    fixed = None if base_env is None else _inheritable(base_env)

    async def worker(item: WorkItem, ctx: Context) -> Any:
        stem = safe_name(item.id)
        item_file = logs / f"{stem}.json"
        try:
            logs.mkdir(mode=0o700, parents=True, exist_ok=True)
            _write_private(item_file, item_json(item))
        except OSError as exc:
            raise _state_full(exc, item_file) if exc.errno in FULL_ERRNOS else exc from None
        log_path = logs / f"{stem}.log"
        ok: list[bool] = []
        stack_on = item.extra.get("stack_on")  # --stack: start from the blocker's head branch
        async with place_of.place(item.id, item.branch, lambda: bool(ok),
                                  stack_on if isinstance(stack_on, str) else None) as place:
            result = await _run(item, ctx, item_file, log_path, place.cwd, place.branch)
            ok.append(True)
            return result

    async def _run(item: WorkItem, ctx: Context, item_file: Path, log_path: Path, cwd: Path,
                   branch: str) -> Any:
        own, notes = item_env(item, item_file, run_id, branch=branch, sandbox=ctx.sandbox)
        # a jr2 run inside a worker must not pass its own item's values on to this one
        env = _inheritable(os.environ) if fixed is None else dict(fixed)
        env.update(own)
        last_out: list[str] = []
        err_tail: deque[str] = deque(maxlen=STDERR_TAIL)

        try:
            raw = open(log_path, "ab", buffering=0, opener=_private)  # noqa: SIM115
        except OSError as exc:
            raise _state_full(exc, log_path) if exc.errno in FULL_ERRNOS else exc from None
        with raw:
            logf = ItemLog(raw, log_limit)
            for note in notes:
                logf.write(f"jr2 {note}\n")
                log.warning("jr2: %s: %s", item.id.replace("\0", "\\0")[:80], note)
            result: Any = None
            if fence is not None:
                fence.start()
            try:
                proc = await _start(argv, cwd, env, logf, log_path)
                _running.add(proc)
                if fence is not None:
                    fence.guard(item.id, proc.pid)
                try:
                    result = await _supervise(proc, logf, log_path, redact, timeout, last_out,
                                              err_tail)
                finally:
                    _running.discard(proc)
                    if fence is not None:
                        fence.release(item.id)
            except Failure:
                if logf.refused is None:
                    raise
            logf.close()
            if logf.refused is not None:  # the disk is full: the item fails saying so
                raise _state_full(logf.refused, log_path)
            return result

    return worker


class ItemLog:
    """One item's log: lines of output up to `limit` bytes, then one line saying the rest is
    cut (jr2's own lines always go in); a write the disk refuses is kept in `refused` (and
    `full` is set) instead of raised, and nothing more is written."""

    def __init__(self, raw: IO[bytes], limit: int) -> None:
        self.raw = raw
        self.limit = limit
        self.size = 0
        self.cut = 0
        self.refused: OSError | None = None
        self.full: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def write(self, text: str) -> None:
        """Log `text` (one or more whole lines)."""
        if self.refused is not None:
            return
        data = text.encode("utf-8", "surrogateescape")
        if self.size + len(data) > self.limit and not text.startswith("jr2 "):
            if not self.cut:
                self._put(f"jr2 log cut at the log limit ({format_size(self.limit)}, "
                          "--log-limit): the rest of the output is not logged\n".encode())
            self.cut += len(data)
            return
        self.size += len(data)
        self._put(data)

    def close(self) -> None:
        """Note how much output was cut, if any."""
        if self.cut:
            self._put(f"jr2 log cut: {self.cut:,} bytes of output not logged\n".encode())

    def _put(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[self.raw.write(view) or 0:]
        except OSError as exc:
            if exc.errno not in FULL_ERRNOS:
                raise
            self.refused = exc
            if not self.full.done():
                self.full.set_result(None)


def _state_full(exc: OSError, path: Path) -> Failure:
    """The item's failure when the state directory's disk refused to write `path`."""
    why = exc.strerror or str(exc)
    return Failure(f"the state directory's disk refused a write ({why}): {path}",
                   detail={"state_full": str(path), "log": str(path)})


async def _exited_or_full(proc: _Process, logf: ItemLog) -> None:
    """Wait until the command exits or its log cannot be written any more (on the two futures
    themselves: no task each, and a timeout cancels neither)."""
    await asyncio.wait([proc.exited, logf.full], return_when=asyncio.FIRST_COMPLETED)


async def _start(argv: list[str], cwd: Path, env: dict[str, str], logf: ItemLog,
                 log_path: Path) -> _Process:
    """Start the command in a session (and process group) of its own; a command that cannot
    be started fails its item."""
    try:
        return await _spawn(
            *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        logf.write(f"jr2 could not start the command: {why}\n")
        raise Failure(f"could not start the command: {why}", detail={"log": str(log_path)}
                      ) from None


async def _supervise(proc: _Process, logf: ItemLog, log_path: Path,
                     redact: Redactor, timeout: float | None, last_out: list[str],
                     err_tail: deque[str]) -> Any:
    """Log the command's output, wait for it, end its group, and turn its exit into a result."""
    assert proc.stdout is not None and proc.stderr is not None

    def sink(tag: str, keep: Callable[[str], None]) -> Callable[[bytes], None]:
        def on_line(raw: bytes) -> None:
            text = redact(raw.decode("utf-8", "replace"))
            logf.write(f"{tag} {text}\n")
            keep(text)
        return on_line

    asked: list[dict[str, str | None]] = []

    def keep_out(text: str) -> None:
        if text.strip():
            last_out[:] = [text]
            request = parse_ask(text) if "await-approval" in text else None
            if request is not None:  # --gate: the last ask names the gate
                asked[:] = [{"gate": request.name, "reason": request.reason}]

    readers = [asyncio.create_task(_read_lines(proc.stdout, sink("out", keep_out))),
               asyncio.create_task(_read_lines(proc.stderr, sink("err", err_tail.append)))]
    try:
        await wait_for(_exited_or_full(proc, logf), timeout)
    except TimeoutError:
        await _end_group(proc)
        await _finish_reading(readers)
        logf.write(f"jr2 timed out after {timeout:g}s\n")
        raise Failure(f"timed out after {timeout:g}s",
                      detail={"log": str(log_path), "stderr": list(err_tail)}) from None
    except BaseException:  # stopped (interrupted, lease lost): end the group before the claim
        await asyncio.shield(_end_group(proc))
        for task in readers:
            task.cancel()
        logf.write("jr2 interrupted\n")
        raise
    if proc.returncode is None or _group_alive(proc):  # usually gone with the command
        await asyncio.shield(_end_group(proc))  # what the command left behind ends with it
    await _finish_reading(readers)
    if logf.refused is not None:  # the disk is full: the caller fails the item saying so
        return None
    rc = proc.returncode
    if rc != 0:
        tail = list(err_tail)
        last = f": {_clip(tail[-1])}" if tail else ""
        detail: dict[str, Any] = {"exit_code": rc, "stderr": tail, "log": str(log_path)}
        if rc == EX_AWAIT_APPROVAL:
            detail["await_approval"] = asked[0] if asked else None
            last = f" (asks for approval{' of ' + str(asked[0]['gate']) if asked else ''})"
        raise Failure(f"exit code {rc}{last}", detail=detail)
    if not last_out:
        return None
    try:
        return json.loads(last_out[0])
    except ValueError:
        return last_out[0]


def _private(path: str, flags: int) -> int:
    """An `open` opener whose new files are 0600: an item's log and files may hold what its
    command printed or the tracker said, for its owner only."""
    return os.open(path, flags, 0o600)


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` (mode 0600, also when it was there before)."""
    with open(path, "w", encoding="utf-8", opener=_private) as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)


HANDED = ("JR2_BLOCKERS_JSON", "JR2_BASE_BRANCH", "JR2_FEEDBACK_JSON",
          "JR2_FEEDBACK_TEXT")  # per item, never inherited


def _inheritable(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the per-item variables: a jr2 run inside a worker must not pass its own
    item's values on to this one."""
    return {k: v for k, v in env.items()
            if not k.startswith(("JR2_ITEM_", "JR2_GATE_")) and k not in HANDED}


def hand_off(item: WorkItem, path: Path) -> dict[str, str]:
    """`JR2_BLOCKERS_JSON` (its blockers, written to `path`) and `JR2_BASE_BRANCH` for an item
    whose source hands them over in `extra`; nothing for one that does not."""
    env: dict[str, str] = {}
    blockers = item.extra.get("blockers")
    if isinstance(blockers, list):
        _write_private(path, json.dumps(blockers, indent=2))
        env["JR2_BLOCKERS_JSON"] = str(path.resolve())
    base = item.extra.get("stack_on")
    if isinstance(base, str) and base:
        env["JR2_BASE_BRANCH"] = base
    return env
