"""Global caps and conflict groups (`jr2 work --global-cap`, `--exclusive-by`) on the local
source, through real `jr2 work` processes sharing one claim store.

The independent witness is the worker journal (`start|end <item> <pid> <t>`, one O_APPEND write
per line): from it the test rebuilds every run's interval and checks, at every instant, how many
ran at once in all and per conflict group. A pool claims before its command starts and settles
after it ends, so overlapping claims would always show as overlapping runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from limits_journal import most_at_once
from limits_journal import runs as read_runs

from jr2_sources.trackers.local.store import ClaimStore


def runs(tmp: Path) -> dict[str, list[tuple[float, float]]]:
    return read_runs(tmp / "journal")

JR2 = [sys.executable, "-m", "jr2_core"]

WORKER = r'''
import os, sys, time
journal, sleep = sys.argv[1], float(sys.argv[2])
item = os.environ["JR2_ITEM_ID"]

def line(kind):
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{kind} {item} {os.getpid()} {time.time():.6f}\n".encode())
    os.close(fd)

line("start")
time.sleep(float(os.environ.get("SLEEP_" + item, sleep)))
line("end")
'''

GROUPS = ["--exclusive-by", "label:area/*", "--exclusive-by", "touches"]


def backlog(tmp: Path, items: dict[str, tuple[list[str], str]]) -> None:
    """A backlog of items `id -> (labels, body)`, in that order."""
    (tmp / "b.toml").write_text("".join(
        f'[[items]]\nid = "{i}"\ntitle = "{i}"\nlabels = {json.dumps(labels)}\n'
        + (f"body = {json.dumps(body)}\n" if body else "") + "\n"
        for i, (labels, body) in items.items()))
    (tmp / "worker.py").write_text(WORKER)


def pool(tmp: Path, *opts: str, sleep: float = 0.4,
         env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [*JR2, "work", "local:b.toml", "--poll-every", "0.1", *opts, "--",
            sys.executable, "-I", "-S", str(tmp / "worker.py"), str(tmp / "journal"), str(sleep)]
    return subprocess.Popen(argv, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "JR2_STATE_DIR": str(tmp / "state"),
                                            **(env or {})})


def finish(procs: list[subprocess.Popen[str]], timeout: float = 90) -> list[str]:
    """Wait for every pool; each must drain (exit 0). Their stderr."""
    errs = []
    for p in procs:
        _, err = p.communicate(timeout=timeout)
        errs.append(err)
        assert p.returncode == 0, err
    return errs


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
            p.communicate()


def _race(tmp: Path, procs: list[subprocess.Popen[str]], k: int, per_group: int,
          free: int, global_cap: int) -> None:
    items: dict[str, tuple[list[str], str]] = {}
    for n in range(per_group):
        items[f"db{n}"] = (["area/db"], "")
        items[f"ui{n}"] = (["area/ui"] if n % 2 else [], "" if n % 2 else "Touches: area/UI, x")
    for n in range(free):
        items[f"free{n}"] = ([], "")
    backlog(tmp, items)
    procs += [pool(tmp, "--cap", "3", "--global-cap", str(global_cap), *GROUPS)
              for _ in range(k)]
    finish(procs, timeout=120 + 2 * len(items))
    done = runs(tmp)
    assert sorted(done) == sorted(items)
    assert all(len(r) == 1 for r in done.values()), done  # every item ran once
    every = [iv for r in done.values() for iv in r]
    assert most_at_once(every) == global_cap  # reached, never exceeded
    for group in ("db", "ui", "x"):
        members = [iv for i, r in done.items() for iv in r
                   if i.startswith(group) or (group == "x" and i.startswith("ui")
                                              and not items[i][0])]
        assert most_at_once(members) == 1, group
    assert most_at_once([iv for i, r in done.items() for iv in r if i.startswith("free")]) > 1


def test_four_pools_never_exceed_the_global_cap_nor_run_two_items_of_a_group(
        tmp_path: Path, procs: list[subprocess.Popen[str]]) -> None:
    """4 pools of --cap 3 (12 slots), --global-cap 4: at most 4 run at once in all, the 4 db
    items one at a time, the ui items (by label or a `Touches:` line) one at a time, and items
    outside any group run side by side; every pool drains (none ends deadlocked while its
    ready items wait for a group or the cap)."""
    _race(tmp_path, procs, k=4, per_group=4, free=8, global_cap=4)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(3))
def test_eight_pools_race_over_a_big_backlog_within_every_limit(
        tmp_path: Path, procs: list[subprocess.Popen[str]], seed: int) -> None:
    _race(tmp_path, procs, k=8, per_group=12, free=30, global_cap=5 + seed)


def _ready(tmp: Path, *opts: str) -> dict[str, Any]:
    out = subprocess.run([*JR2, "ready", "local:b.toml", "--json", *opts], cwd=tmp,
                         env={**os.environ, "JR2_STATE_DIR": str(tmp / "state")},
                         capture_output=True, text=True, timeout=60, check=True)
    return {e["id"]: e.get("reasons") for e in json.loads(out.stdout)["blocked"]}


def test_a_group_held_by_a_killed_pool_is_taken_after_its_lease_not_before(
        tmp_path: Path, procs: list[subprocess.Popen[str]]) -> None:
    """Pool 1 holds group area/db (item db1) when it is killed with SIGKILL. A second pool,
    already running, and pool 1 restarted honour the group until the dead claim's lease ends
    and take it right after; the second ran the item outside the group at once. `jr2 ready`
    says who holds the group."""
    backlog(tmp_path, {"db1": (["area/db"], ""), "db2": (["area/db"], ""),
                       "free": ([], "")})
    lease = 4.0
    first = pool(tmp_path, "--lease", f"{lease}s", *GROUPS, env={"SLEEP_db1": "60"})
    procs.append(first)
    deadline = time.monotonic() + 30
    while "db1" not in runs(tmp_path):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    assert _ready(tmp_path, *GROUPS)["db2"] == [
        {"kind": "group_busy", "group": "area/db", "held_by": "db1"}]
    assert _ready(tmp_path, "--global-cap", "1")["free"] == [
        {"kind": "global_cap", "count": 1, "cap": 1}]
    procs.append(pool(tmp_path, "--lease", f"{lease}s", *GROUPS, sleep=0.3))
    while "free" not in runs(tmp_path):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    worker_pid = int(next(ln.split()[2] for ln in (tmp_path / "journal").read_text().splitlines()
                          if ln.startswith("start db1")))
    with contextlib.suppress(ProcessLookupError):  # the pool's fence may have ended it first
        os.kill(worker_pid, signal.SIGKILL)  # the dead pool's command goes too
    [db] = (tmp_path / "state" / "local").glob("*.sqlite")
    with ClaimStore(db) as store:
        lease_end = store.state().claims["db1"].lease_expires
    killed_at = time.time()
    procs.append(pool(tmp_path, "--lease", f"{lease}s", *GROUPS, sleep=0.3))  # the restart
    finish(procs[1:])
    done = runs(tmp_path)
    after = sorted(s for i in ("db1", "db2") for s, _ in done[i] if s > killed_at)
    assert len(after) == 2  # db1 again (taken over) and db2, one after the other
    assert after[0] >= lease_end, f"group taken {lease_end - after[0]:.2f}s before the lease end"
    assert after[0] - lease_end < 3.0  # and soon after it
    assert most_at_once([iv for i in ("db1", "db2") for iv in done[i] if iv[0] > killed_at]) == 1
    [(free_start, _)] = done["free"]
    assert free_start < killed_at  # outside any group: it ran while the group was held
