"""The WorkSource's rules through `jr2 work` on the local source: scope, and re-offers after a
release (a person's `jr2 local retry`, a stalled claim store, a suspended process), each ending
with every item done exactly once and exit 0."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from clihelp import jr2, jr2_here, popen, wait_for
from jr2_core.paths import safe_name
from jr2_sources.readyset import SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.trackers.local.source import LocalConfig, LocalTracker


def backlog(path: Path, n: int) -> list[str]:
    ids = [f"T-{i}" for i in range(n)]
    path.write_text("".join(f'[[items]]\nid = "{i}"\ntitle = "{i}"\n' for i in ids))
    return ids


JOURNAL = 'echo "$JR2_ITEM_ID" >> "{d}/done.txt"'


def done_ids(tmp: Path) -> Counter[str]:
    f = tmp / "done.txt"
    return Counter(f.read_text().split()) if f.exists() else Counter()


def pools(tmp: Path, k: int, script: str, *extra: str) -> list[subprocess.Popen[str]]:
    return [popen("work", "local:b.toml", "--cap", "2", *extra, "--", "sh", "-c", script,
                  cwd=tmp) for _ in range(k)]


def finish(procs: list[subprocess.Popen[str]], timeout: float = 90) -> list[tuple[int, str]]:
    out = []
    for p in procs:
        _, err = p.communicate(timeout=timeout)
        out.append((p.returncode, err))
    return out


def test_a_label_a_pool_never_runs_a_label_b_item_expired_claim_or_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\nlabels = ["a"]\n'
                                     '[[items]]\nid = "B"\ntitle = "b"\nlabels = ["b"]\n')
    # a dead pool of the label-b scope left a claim on B that has expired
    monkeypatch.chdir(tmp_path)
    ad = LocalTracker(LocalConfig(target="b.toml"), SourceEnv(tmp_path / ".jr2"))
    assert ad.claim(SnapshotItem("B"), "dead@h", 0.01)
    ad.close()
    time.sleep(0.05)
    res = jr2("work", "local:b.toml", "--label", "a", "--", "sh", "-c",
              JOURNAL.format(d=tmp_path), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert done_ids(tmp_path) == Counter({"A": 1})


def test_local_retry_during_a_4_pool_run_reoffers_and_every_item_is_done_once(
        tmp_path: Path) -> None:
    ids = backlog(tmp_path / "b.toml", 16)
    # T-3 fails on its first attempt; T-0 runs until the retry is done, so the pools still run
    script = (f'if [ "$JR2_ITEM_ID" = T-3 ] && [ ! -e {tmp_path}/t3 ]; then touch {tmp_path}/t3;'
              f' exit 1; fi; if [ "$JR2_ITEM_ID" = T-0 ]; then i=0; while [ ! -e '
              f'{tmp_path}/retried ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; fi; '
              f'sleep 0.2; ' + JOURNAL.format(d=tmp_path))
    procs = pools(tmp_path, 4, script)

    def t3_failed() -> bool:
        data = jr2_here("ready", "local:b.toml", "--json", cwd=tmp_path).stdout
        return '"id": "T-3"' in data and '"kind": "failed"' in data

    wait_for(t3_failed, timeout=60, every=0.2)
    assert jr2_here("local", "retry", "b.toml", "T-3", cwd=tmp_path).returncode == 0
    (tmp_path / "retried").touch()
    results = finish(procs)
    assert [code for code, _ in results] == [0, 0, 0, 0], [e[-600:] for _, e in results]
    assert done_ids(tmp_path) == Counter(dict.fromkeys(ids, 1))


def test_a_3_5_s_lock_on_the_claim_store_ends_in_reoffers_not_exit_4(tmp_path: Path) -> None:
    """A 3.5 s stall of the store outlasts the renewal deadline (lease 4.5 s, renewed every 1.5 s,
    stopped 1 s before the end): every running worker meets it, is stopped (it ends
    `cancelled`, not `failed`), its claim released and its item offered again; the commands
    are longer than the stall, so none finishes inside it, and every item is done exactly
    once."""
    ids = backlog(tmp_path / "b.toml", 8)
    started = tmp_path / "started.txt"
    script = (f'echo "$JR2_ITEM_ID $(date +%s.%N)" >> {started}; sleep 6; '
              + JOURNAL.format(d=tmp_path))
    procs = pools(tmp_path, 4, script, "--lease", "4.5s", "--json")
    store = (tmp_path / ".jr2" / "local"
             / f"{safe_name(str((tmp_path / 'b.toml').resolve()))}.sqlite")

    def all_started() -> bool:
        return started.exists() and len(started.read_text().splitlines()) >= len(ids)

    wait_for(all_started, timeout=60, every=0.01)
    conn = sqlite3.connect(store, timeout=30, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")  # the whole store stalls for 3.5 s
    time.sleep(3.5)
    conn.execute("COMMIT")
    conn.close()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e[-600:] for _, e in outs]
    assert done_ids(tmp_path) == Counter(dict.fromkeys(ids, 1))
    runs = [json.loads(o)["output"] for o, _ in outs]
    stopped = sum(len(r["cancelled"]) + sum(n - 1 for n in r["attempts"].values())
                  for r in runs)
    print(f"store stalled 3.5 s: {len(ids)} items done once each, {stopped} workers stopped "
          "and their items offered again")
    assert stopped > 0, "\n".join(e for _, e in outs)  # the stall did meet renewals


def _commands(pid: int) -> list[int]:
    """The children of jr2 process `pid` that lead a process group of their own: its
    commands (each starts in a session of its own), never a helper in jr2's own group."""
    out = []
    for kid in _descendants(pid):
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(kid) == kid:
                out.append(kid)
    return out


def _descendants(pid: int) -> list[int]:
    kids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            kids.append(int(entry.name))
    return kids


def _terminating(pid: int) -> bool:
    """Whether a SIGTERM waits for process `pid` (or it is gone, or a zombie)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    if fields.get("State", "").startswith("Z"):
        return True
    term = 1 << (signal.SIGTERM - 1)
    return any(int(fields.get(name, "0"), 16) & term for name in ("ShdPnd", "SigPnd"))


def test_sigstop_sigcont_past_the_lease_ends_in_reoffers_not_exit_4(tmp_path: Path) -> None:
    ids = backlog(tmp_path / "b.toml", 12)
    procs = pools(tmp_path, 4, "sleep 1.5; " + JOURNAL.format(d=tmp_path), "--lease", "3s")
    victim = procs[0]
    wait_for(lambda: len(_commands(victim.pid)) == 2, timeout=60, every=0.01)  # --cap 2
    # the whole pool is suspended (a laptop lid closed): jr2, then its commands (listed once
    # jr2 is stopped, so none starts unseen; a command that finished meanwhile is a zombie)
    os.kill(victim.pid, signal.SIGSTOP)
    kids = _commands(victim.pid)
    for kid in kids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(kid, signal.SIGSTOP)
    time.sleep(5.0)  # past the 3 s lease: the other pools take its items over
    os.kill(victim.pid, signal.SIGCONT)
    # jr2 wakes first and stops the commands whose leases it lost: their SIGTERM waits for them
    # to go on (however long a loaded machine makes jr2 take), then they end on it
    wait_for(lambda: all(_terminating(kid) for kid in kids), timeout=60, every=0.01)
    for kid in kids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(kid, signal.SIGCONT)
    results = finish(procs)
    assert [code for code, _ in results] == [0, 0, 0, 0], [e[-600:] for _, e in results]
    assert done_ids(tmp_path) == Counter(dict.fromkeys(ids, 1))
    woke = results[0][1]  # the stopped pool names why it stopped its commands, and who did it
    assert "the lease lapsed while this pool was stopped" in woke, woke[-600:]
    assert "a person took" not in woke


TRAP = ('if [ "$JR2_ITEM_ID" = A ]; then touch {d}/started; '
        'trap "touch {d}/stopped; exit 143" TERM; sleep 30 & wait $!; fi; ' + JOURNAL)


def test_an_item_a_person_marks_done_while_it_runs_stops_its_worker(tmp_path: Path) -> None:
    b = tmp_path / "b.toml"
    b.write_text('[[items]]\nid = "A"\ntitle = "a"\n[[items]]\nid = "B"\ntitle = "b"\n')
    proc = popen("work", "local:b.toml", "--cap", "2", "--", "sh", "-c",
                 TRAP.format(d=tmp_path), cwd=tmp_path)
    try:
        wait_for(lambda: (tmp_path / "started").exists(), timeout=60)
        # a half-saved file (empty for a moment) never stops a worker
        text = b.read_text()
        b.write_text("")
        time.sleep(0.05)
        b.write_text(text)
        time.sleep(1.5)
        assert not (tmp_path / "stopped").exists()
        b.write_text(text.replace('title = "a"\n', 'title = "a"\nstatus = "done"\n', 1))
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert (tmp_path / "stopped").exists()
    assert "stopped A: a person took it back" in err
    assert done_ids(tmp_path) == Counter({"B": 1})
