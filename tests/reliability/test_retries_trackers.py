"""Bounded retries (`jr2 work --max-attempts`) end to end, through real `jr2 work` processes, on
the local source, the fake GitHub and the fake Jira.

The worker's exit codes follow a plan per run of an item (`75,75,0`: the first two runs exit
75, EX_TEMPFAIL, the third 0); the run number is counted from the shared journal, so it goes on
across processes. The journal (`start|end <item> <pid> <t>`, one O_APPEND write per line) is
the independent witness: how many times each item ran, and that no two runs of one item ever
overlapped. The attempt record itself is read from the tracker (markers, claim store) and from
`jr2 ready --json` (the `retry_after` reason).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rel_trackers import JR2, Tracker, tracker, wait_for

from clihelp import jr2_here
from jr2_sources.kit import claims

WORKER = r'''
import os, sys, time
journal, plan = sys.argv[1], [int(c) for c in sys.argv[2].split(",")]
item = os.environ["JR2_ITEM_ID"]

def line(kind):
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{kind} {item} {os.getpid()} {time.time():.6f}\n".encode())
    os.close(fd)

runs = sum(1 for ln in open(journal) if ln.split()[:2] == ["start", item]) \
    if os.path.exists(journal) else 0
line("start")
time.sleep(0.1)
line("end")
sys.exit(plan[min(runs, len(plan) - 1)])
'''

KINDS = ["local", "github", "jira"]


@dataclass
class Setup:
    """One tracker with one or more items, and how to start pools on it."""

    kind: str
    tmp: Path
    tr: Tracker | None
    items: list[str]
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def journal(self) -> Path:
        return self.tmp / "journal"

    def source_args(self) -> list[str]:
        if self.tr is None:
            return ["local:b.toml", "--poll-every", "0.2"]
        return self.tr.source_args()

    def env(self, i: int) -> dict[str, str]:
        if self.tr is None:  # local: every pool shares the claim store of one state dir
            return {**os.environ, "JR2_STATE_DIR": str(self.tmp / "state")}
        return self.tr.env(self.tmp / f"p{i}")

    def start(self, plan: str, *opts: str) -> subprocess.Popen[str]:
        argv = [*JR2, "work", *self.source_args(), "--retry-backoff", "0.3s", *opts, "--",
                sys.executable, "-I", "-S", str(self.tmp / "worker.py"), str(self.journal), plan]
        proc = subprocess.Popen(argv, cwd=self.tmp, env=self.env(len(self.procs)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def ready_json(self) -> dict[str, Any]:
        args = self.source_args()
        out = jr2_here("ready", *args, "--json", cwd=self.tmp, env=self.env(0))
        assert out.returncode == 0, out.stderr
        return dict(json.loads(out.stdout))

    def runs(self) -> dict[str, list[tuple[str, float]]]:
        """Per item: each run's (kind, time) lines, in order; asserts no two runs overlap."""
        out: dict[str, list[tuple[str, float]]] = {}
        running: dict[str, str] = {}
        text = self.journal.read_text() if self.journal.exists() else ""
        for ln in text.splitlines():
            kind, item, pid, t = ln.split()
            if kind == "start":
                assert item not in running, f"{item} run by {running[item]} and {pid} at once"
                running[item] = pid
            else:
                assert running.pop(item) == pid
            out.setdefault(item, []).append((kind, float(t)))
        return out

    def starts(self, item: str) -> int:
        return sum(1 for kind, _ in self.runs().get(item, []) if kind == "start")

    def state(self, item: str) -> str:
        """`done`, `failed` or `open`, as the tracker says."""
        if self.tr is None:
            from jr2_sources.trackers.local.store import ClaimStore

            [db] = (self.tmp / "state" / "local").glob("*.sqlite")
            with ClaimStore(db) as store:
                out = store.state().outcomes.get(item)
            return out.status if out is not None else "open"
        if self.tr.is_done(item):
            return "done"
        return "failed" if "jr2:failed" in self.tr.labels(item) else "open"

    def record(self, item: str) -> tuple[int, Any]:
        """The attempt record the tracker keeps for `item` (attempts spent, retry time)."""
        if self.tr is None:
            from jr2_sources.trackers.local.store import ClaimStore

            dbs = list((self.tmp / "state" / "local").glob("*.sqlite"))
            if not dbs:  # the first pool has not opened its store yet
                return (0, None)
            with ClaimStore(dbs[0]) as store:
                row = store.state().retries.get(item)
            return (row[0], row[1]) if row is not None else (0, None)
        return claims.retry_record(claims.markers(self.tr.comments(item)))

    def settled_attempts(self, item: str) -> int | None:
        """The `attempts` of the newest settled marker (comment trackers)."""
        assert self.tr is not None
        found = [mk for mk in claims.markers(self.tr.comments(item))
                 if mk.kind in ("done", "failed")]
        return found[-1].fields.get("attempts") if found else None


@contextmanager
def setup(kind: str, tmp: Path, n: int = 1) -> Iterator[Setup]:
    (tmp / "worker.py").write_text(WORKER)
    if kind == "local":
        lines = []
        for i in range(n):
            lines += ["[[items]]", f'id = "T-{i}"', f'title = "Item {i}"']
        (tmp / "b.toml").write_text("\n".join(lines) + "\n")
        s = Setup(kind, tmp, None, [f"T-{i}" for i in range(n)])
        try:
            yield s
        finally:
            _kill(s)
        return
    with tracker(kind) as tr:
        s = Setup(kind, tmp, tr, tr.seed(n, 1))
        try:
            yield s
        finally:
            _kill(s)


def _kill(s: Setup) -> None:
    for p in s.procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        p.communicate(timeout=30)


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err


@pytest.mark.parametrize("kind", KINDS)
def test_transient_twice_then_done_with_three_attempts(tmp_path: Path, kind: str) -> None:
    with setup(kind, tmp_path) as s:
        rc, err = finish(s.start("75,75,0", "--max-attempts", "3"))
        [item] = s.items
        assert rc == 0, err[-2000:]
        assert s.starts(item) == 3
        assert s.state(item) == "done"
        if s.tr is not None:
            assert s.settled_attempts(item) == 3
            assert "jr2:claimed" not in s.tr.labels(item)


@pytest.mark.parametrize("kind", KINDS)
def test_transient_always_fails_after_max_attempts(tmp_path: Path, kind: str) -> None:
    with setup(kind, tmp_path) as s:
        rc, err = finish(s.start("75", "--max-attempts", "3"))
        [item] = s.items
        assert rc == 1, err[-2000:]
        assert s.starts(item) == 3
        assert s.state(item) == "failed"
        assert s.record(item) == (0, None)  # a final failure ends the record


@pytest.mark.parametrize("kind", KINDS)
def test_other_exit_fails_at_once(tmp_path: Path, kind: str) -> None:
    with setup(kind, tmp_path) as s:
        rc, err = finish(s.start("1,0", "--max-attempts", "3"))
        [item] = s.items
        assert rc == 1, err[-2000:]
        assert s.starts(item) == 1
        assert s.state(item) == "failed"


@pytest.mark.parametrize("kind", KINDS)
def test_configured_transient_exit(tmp_path: Path, kind: str) -> None:
    """`--transient-exit 3` makes 3 transient (and 75 no longer is)."""
    with setup(kind, tmp_path) as s:
        rc, err = finish(s.start("3,0", "--max-attempts", "2", "--transient-exit", "3"))
        [item] = s.items
        assert rc == 0, err[-2000:]
        assert s.starts(item) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_restart_does_not_reset_the_count(tmp_path: Path, kind: str) -> None:
    """A first pool runs attempt 1 (exit 75) and is stopped while the item waits for its retry
    time; the report shows `retry_after`; a second `jr2 work` process with --max-attempts 2
    runs ONE more attempt and marks the item failed (a reset count would run it twice)."""
    with setup(kind, tmp_path) as s:
        [item] = s.items
        first = s.start("75", "--max-attempts", "3", "--retry-backoff", "5s")
        wait_for(lambda: s.record(item)[0] == 1, timeout=60)
        first.send_signal(signal.SIGINT)  # at once: a loaded machine must not reach the retry
        finish(first)
        assert s.starts(item) == 1
        blocked = {e["id"]: e for e in s.ready_json()["blocked"]}
        [reason] = blocked[item]["reasons"]
        assert reason["kind"] == "retry_after" and reason["attempts"] == 1
        assert reason["at"].endswith("Z")
        rc, err = finish(s.start("75", "--max-attempts", "2"))
        assert rc == 1, err[-2000:]
        assert s.starts(item) == 2
        assert s.state(item) == "failed"


@pytest.mark.parametrize("kind", KINDS)
def test_two_pools_never_run_an_item_at_once_while_it_is_retried(tmp_path: Path,
                                                                 kind: str) -> None:
    with setup(kind, tmp_path, n=3) as s:
        procs = [s.start("75,75,0", "--max-attempts", "4", "--cap", "2") for _ in range(2)]
        results = [finish(p, timeout=180) for p in procs]
        assert [rc for rc, _ in results] == [0, 0], [err[-2000:] for _, err in results]
        runs = s.runs()  # asserts that no two runs of one item overlapped
        assert {item: s.starts(item) for item in s.items} == {item: 3 for item in s.items}
        assert set(runs) == set(s.items)
        assert all(s.state(item) == "done" for item in s.items)


def test_max_attempts_is_refused_where_the_source_keeps_no_record() -> None:
    """A tracker without `attempts` cannot keep the count: refused at start, in one line;
    --max-attempts 1 (the default) is what it always did."""
    from jr2_core import Outcome
    from jr2_core.errors import UsageError
    from jr2_sources.capabilities.attempts import AttemptPolicy
    from jr2_sources.readyset import Snapshot, SnapshotItem
    from jr2_sources.tracker import Tracker
    from jr2_sources.worksource import WorkSource

    class NoRecord(Tracker):
        name = "norecord:x"

        def snapshot(self) -> Snapshot:
            return Snapshot(self.name, [])

        def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
            return False

        def renew(self, item_id: str, holder: str, lease: float) -> bool:
            return False

        def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
            return None

    from jr2_sources import KeepsAttempts

    assert not issubclass(NoRecord, KeepsAttempts)
    with pytest.raises(UsageError, match="cannot retry"):
        WorkSource(NoRecord(), holder="h", attempts=AttemptPolicy(max_attempts=2))
    WorkSource(NoRecord(), holder="h", attempts=AttemptPolicy(max_attempts=1))
