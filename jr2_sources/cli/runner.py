"""The worker of `jr2 work`: run one COMMAND per item, in the item's sandbox directory.

The command gets the item in its environment (`JR2_ITEM_ID`, `JR2_ITEM_TITLE`, `JR2_ITEM_URL`,
`JR2_ITEM_JSON` — the path of a JSON file with the whole item —, `JR2_ITEM_BRANCH` where the
source names one, `JR2_RUN_ID`). Its stdout and stderr go, with known secret values scrubbed, to
one log file per item under `<state>/logs/<run id>/`, kept after a failure (the sandbox is not).
Exit 0 is success and the output is the last stdout line (parsed as JSON when it is JSON); any
other exit is a `Failure` carrying the exit code and the last lines of stderr. A command that
outlives `timeout`, or whose run is interrupted, is terminated with its whole process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO, Any

from jr2_core import Context, Failure
from jr2_core.errors import UsageError
from jr2_core.paths import safe_name
from jr2_sources.kit.redact import Redactor
from jr2_sources.worksource import WorkItem

STDERR_TAIL = 20
KILL_GRACE = 5.0


def resolve_command(argv: list[str]) -> list[str]:
    """Check that COMMAND exists before anything is claimed; return argv with an absolute
    program path (the command runs in the sandbox, so a relative path would break)."""
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


def _kill_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the command's process group, then SIGKILL after a grace period."""
    _kill_group(proc, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), KILL_GRACE)
    except TimeoutError:
        _kill_group(proc, signal.SIGKILL)
        await proc.wait()


def command_worker(
    argv: list[str],
    *,
    log_dir: Path,
    run_id: str,
    redact: Redactor,
    timeout: float | None = None,
) -> Callable[[WorkItem, Context], Coroutine[Any, Any, Any]]:
    """A Pool worker that runs `argv` for each item."""

    async def worker(item: WorkItem, ctx: Context) -> Any:
        log_dir.mkdir(parents=True, exist_ok=True)
        stem = safe_name(item.id)
        item_file = log_dir / f"{stem}.json"
        item_file.write_text(item.model_dump_json(indent=2), encoding="utf-8")
        log_path = log_dir / f"{stem}.log"
        env = dict(os.environ)
        env.update(JR2_ITEM_ID=item.id, JR2_ITEM_TITLE=item.title, JR2_ITEM_URL=item.url or "",
                   JR2_ITEM_JSON=str(item_file.resolve()), JR2_RUN_ID=run_id)
        if item.branch:
            env["JR2_ITEM_BRANCH"] = item.branch
        last_out: list[str] = []
        err_tail: deque[str] = deque(maxlen=STDERR_TAIL)

        async def pump(stream: asyncio.StreamReader, log: IO[str], tag: str,
                       keep: Callable[[str], None]) -> None:
            while line := await stream.readline():
                text = redact(line.decode("utf-8", "replace").rstrip("\n"))
                log.write(f"{tag} {text}\n")
                log.flush()
                keep(text)

        def keep_out(text: str) -> None:
            if text.strip():
                last_out[:] = [text]

        with open(log_path, "a", encoding="utf-8") as log:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=ctx.sandbox, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            assert proc.stdout is not None and proc.stderr is not None
            done = asyncio.gather(pump(proc.stdout, log, "out", keep_out),
                                  pump(proc.stderr, log, "err", err_tail.append), proc.wait())
            try:
                await asyncio.wait_for(done, timeout)
            except TimeoutError:
                await _stop(proc)
                log.write(f"jr2 timed out after {timeout:g}s\n")
                raise Failure(f"timed out after {timeout:g}s",
                              detail={"log": str(log_path), "stderr": list(err_tail)}) from None
            except asyncio.CancelledError:
                await asyncio.shield(_stop(proc))
                log.write("jr2 interrupted\n")
                raise
        rc = proc.returncode
        if rc != 0:
            tail = list(err_tail)
            last = f": {tail[-1]}" if tail else ""
            raise Failure(f"exit code {rc}{last}",
                          detail={"exit_code": rc, "stderr": tail, "log": str(log_path)})
        if not last_out:
            return None
        try:
            return json.loads(last_out[0])
        except ValueError:
            return last_out[0]

    return worker
