"""Find live runs from their run files and talk to their hosts (for `jr2 gates` / `jr2 send`).

Run files of processes that are gone are ignored and deleted. With several live runs the caller
must name one (`--run ID`). Uses only the standard library: the CLI stays quick to start.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import GateError, Jr2Error, NoLiveRun, UnknownGate


@dataclass(frozen=True, slots=True)
class RunFile:
    """What a live run publishes about itself."""

    run_id: str
    address: str
    token: str
    pid: int
    machine: str
    path: Path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_runs(state_dir: Path) -> list[RunFile]:
    """The live runs under `state_dir`, cleaning the files of dead ones."""
    runs: list[RunFile] = []
    for f in sorted((state_dir / "runs").glob("*.json")):
        try:
            d = json.loads(f.read_text())
            rf = RunFile(d["run_id"], d["address"], d["token"], int(d["pid"]),
                         d.get("machine", "?"), f)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(rf.pid):
            runs.append(rf)
        else:
            f.unlink(missing_ok=True)
    return runs


def pick_run(state_dir: Path, run_id: str | None) -> RunFile:
    """The run named `run_id`, or the only live run; else a `NoLiveRun` with what to do."""
    runs = live_runs(state_dir)
    if run_id is not None:
        for r in runs:
            if r.run_id == run_id:
                return r
        raise NoLiveRun(f"no live run {run_id!r} in {state_dir} (live: "
                        f"{', '.join(r.run_id for r in runs) or 'none'})")
    if not runs:
        raise NoLiveRun(f"no live run in {state_dir} (start one with `jr2 run` or `jr2 work`)")
    if len(runs) > 1:
        raise NoLiveRun("several live runs; pick one with --run: "
                        + ", ".join(f"{r.run_id} ({r.machine})" for r in runs))
    return runs[0]


# the run host is on loopback: never through a proxy from http_proxy/HTTPS_PROXY (no_proxy is
# often unset, and a proxy would see the bearer token)
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def call(rf: RunFile, method: str, path: str, body: Any = None, timeout: float = 10) -> Any:
    """One request to a run host; errors become `Jr2Error`s with the host's message."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        rf.address + path, data=data, method=method,
        headers={"Authorization": f"Bearer {rf.token}", "Content-Type": "application/json"},
    )
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            msg = json.loads(exc.read()).get("error", exc.reason)
        except (ValueError, AttributeError):
            msg = str(exc.reason)
        if exc.code == 404:
            raise UnknownGate(msg) from None
        if exc.code == 422:
            raise GateError(msg) from None
        raise Jr2Error(f"run {rf.run_id}: HTTP {exc.code}: {msg}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise Jr2Error(f"run {rf.run_id} at {rf.address} did not answer: {exc}") from None
