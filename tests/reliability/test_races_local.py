"""Races and crashes over the local source: K pools in separate processes, one backlog.

Each worker appends `start <id> <pid> <t>` and `end <id> <pid> <t>` lines to one journal
(O_APPEND, one write per line, so lines never interleave). From it we check what the promise
says: no item is ever held by two pools at once, and every item runs exactly once. The default
run covers K = 2 and 4 on two seeds; `pytest -m soak` adds K = 8 and more seeds.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from clihelp import jr2, popen, wait_for

WORKER = r'''
import os, random, sys, time
journal, item = sys.argv[1], os.environ["JR2_ITEM_ID"]
seed = int(sys.argv[2])
fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
os.write(fd, f"start {item} {os.getppid()} {time.time():.6f}\n".encode())
time.sleep(random.Random(f"{seed}{item}").random() * 0.03)
os.write(fd, f"end {item} {os.getppid()} {time.time():.6f}\n".encode())
'''


def backlog(path: Path, n: int, seed: int) -> None:
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        lines += ["[[items]]", f'id = "R-{i}"', f'title = "Item {i}"']
        needs = sorted({f"R-{rnd.randrange(i)}" for _ in range(rnd.randrange(3))}) if i else []
        if needs:
            lines.append("needs = [" + ", ".join(f'"{n}"' for n in needs) + "]")
        if rnd.random() < 0.3:
            lines.append(f"priority = {rnd.randrange(3)}")
    path.write_text("\n".join(lines) + "\n")


def check_journal(journal: Path, n: int) -> dict[str, int]:
    """No overlap per item, and how many times each item ran."""
    open_at: dict[str, tuple[str, float]] = {}
    runs: dict[str, int] = {}
    for line in journal.read_text().splitlines():
        kind, item, pid, t = line.split()
        if kind == "start":
            assert item not in open_at, f"{item} held by {open_at[item][0]} and {pid} at once"
            open_at[item] = (pid, float(t))
            runs[item] = runs.get(item, 0) + 1
        else:
            assert open_at.pop(item)[0] == pid
    assert not open_at
    return runs


def race(tmp_path: Path, k: int, n: int, seed: int) -> None:
    backlog(tmp_path / "b.toml", n, seed)
    (tmp_path / "w.py").write_text(WORKER)
    journal = tmp_path / "journal"
    procs = [popen("work", "local:b.toml", "--cap", "3", "--", sys.executable,
                   str(tmp_path / "w.py"), str(journal), str(seed), cwd=tmp_path)
             for _ in range(k)]
    codes = [p.wait(timeout=300) for p in procs]
    assert codes == [0] * k, [p.stderr.read() for p in procs if p.stderr]
    runs = check_journal(journal, n)
    assert len(runs) == n and set(runs.values()) == {1}, "an item ran twice or not at all"


@pytest.mark.parametrize(("k", "seed"), [(2, 1), (4, 2)])
def test_k_pools_race_without_double_holds(tmp_path: Path, k: int, seed: int) -> None:
    race(tmp_path, k, 60, seed)


@pytest.mark.soak
@pytest.mark.parametrize(("k", "seed"), [(2, 11), (4, 12), (8, 13), (8, 14), (8, 15)])
def test_soak_k_pools_race_without_double_holds(tmp_path: Path, k: int, seed: int) -> None:
    race(tmp_path, k, 300, seed)


def test_a_crashed_pool_loses_nothing_and_leaves_no_claim(tmp_path: Path) -> None:
    """kill -9 one pool mid-run; the others finish everything; reruns are counted."""
    backlog(tmp_path / "b.toml", 40, 7)
    slow = tmp_path / "slow.py"
    slow.write_text(WORKER.replace("* 0.03", "* 0.3"))
    journal = tmp_path / "journal"
    args = ["work", "local:b.toml", "--cap", "2", "--lease", "2s", "--", sys.executable,
            str(slow), str(journal), "3"]
    victim = popen(*args, cwd=tmp_path)
    wait_for(lambda: journal.exists() and journal.read_text().count("start") >= 2)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    time.sleep(0.5)  # let the orphaned commands of the dead pool finish their lines
    survivors = [popen(*args, cwd=tmp_path) for _ in range(2)]
    assert [p.wait(timeout=300) for p in survivors] == [0, 0]
    text = journal.read_text()
    starts = [line.split()[1] for line in text.splitlines() if line.startswith("start")]
    ends = {line.split()[1] for line in text.splitlines() if line.startswith("end")}
    assert ends == {f"R-{i}" for i in range(40)}, "an item was lost"
    reruns = len(starts) - len(set(starts))
    assert reruns <= 2 * 2  # at most what the dead pool held (cap 2), each once more
    ready = json.loads(jr2("ready", "local:b.toml", "--json", cwd=tmp_path).stdout)
    assert ready["claimed"] == [] and ready["counts"]["done"] == 40
    print(f"crash: 40 items, 0 lost, {reruns} reruns (the dead pool's in-flight items)")


def test_pid_journal_helper_detects_double_holds(tmp_path: Path) -> None:
    journal = tmp_path / "j"
    journal.write_text("start A 1 0.1\nstart A 2 0.2\nend A 1 0.3\nend A 2 0.4\n")
    with pytest.raises(AssertionError, match="held by 1 and 2 at once"):
        check_journal(journal, 1)
    assert os.path.exists(journal)
