"""Fencing through `jr2 work` on the local source: a pool stopped or killed past its lease leaves
no command running (each command notes when it started and ended)."""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections import Counter
from pathlib import Path

from clihelp import popen, wait_for

LEASE = 3.0
# the first command ever run waits for a minute (it is the stopped or killed pool's); any other
# is quick. A SIGTERM notes when it came (the shell's own stderr goes to a file: a pool killed
# leaves the pipe with no reader, and the shell's "Terminated" would end it by SIGPIPE).
SCRIPT = ('exec 2>>{d}/stderr.txt; echo "$JR2_ITEM_ID start $(date +%s.%N)" >> {d}/runs.txt; '
          'trap \'echo "$JR2_ITEM_ID term $(date +%s.%N)" >> {d}/runs.txt; exit 143\' TERM; '
          'if mkdir {d}/first 2>/dev/null; then sleep 60 & wait $!; else sleep 0.3; fi; '
          'echo "$JR2_ITEM_ID done $(date +%s.%N)" >> {d}/runs.txt')


def runs(tmp: Path) -> list[tuple[str, str, float]]:
    f = tmp / "runs.txt"
    lines = f.read_text().split("\n") if f.exists() else []
    return [(i, what, float(at)) for i, what, at in (ln.split() for ln in lines if ln)]


def intervals(tmp: Path) -> list[tuple[str, float, float]]:
    """Each command's run: item, start, end (its SIGTERM or its finish)."""
    out, open_ = [], {}
    for item, what, at in runs(tmp):
        if what == "start":
            assert item not in open_, f"{item} started twice at once"
            open_[item] = at
        else:
            out.append((item, open_.pop(item), at))
    assert not open_, open_
    return out


def work(tmp: Path, lease: float = LEASE) -> list[str]:
    return ["work", "local:b.toml", "--cap", "1", "--global-cap", "1", "--lease", f"{lease:g}s",
            "--", "sh", "-c", SCRIPT.format(d=tmp)]


def test_a_pool_stopped_past_its_lease_has_its_command_ended_and_says_why(
        tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n'
                                     '[[items]]\nid = "B"\ntitle = "b"\n')
    first = popen(*work(tmp_path), cwd=tmp_path)
    wait_for(lambda: runs(tmp_path), timeout=30, every=0.02)
    time.sleep(0.3)  # the pool has told its supervisor (a write just after the command started)
    stopped = time.time()
    os.kill(first.pid, signal.SIGSTOP)  # its lease ends at most LEASE s from now
    try:
        second = popen(*work(tmp_path), cwd=tmp_path)
        ended = wait_for(lambda: [at for _, what, at in runs(tmp_path) if what == "term"],
                         timeout=15, every=0.02)
        assert ended[0] - stopped <= LEASE + 5.0  # within 5 s of the lease's end
        # the second pool runs both items meanwhile (one at a time: --global-cap 1)
        wait_for(lambda: sum(what == "done" for _, what, _ in runs(tmp_path)) == 2, timeout=20)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _, err1 = first.communicate(timeout=30)
    _, err2 = second.communicate(timeout=30)
    assert (first.returncode, second.returncode) == (0, 0), (err1[-600:], err2[-600:])
    assert "the lease lapsed while this pool was stopped" in err1, err1[-600:]
    assert "a person took" not in err1
    spans = sorted(intervals(tmp_path), key=lambda s: s[1])
    for (a, _, end), (b, start, _) in itertools.pairwise(spans):
        assert end <= start, f"{a} and {b} ran at once under --global-cap 1: {spans}"
    assert Counter(i for i, what, _ in runs(tmp_path) if what == "done") == {"A": 1, "B": 1}


def test_a_killed_pools_command_ends_within_seconds(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    pool = popen(*work(tmp_path, lease=60), cwd=tmp_path)
    wait_for(lambda: runs(tmp_path), timeout=30, every=0.02)
    time.sleep(0.3)  # the pool has told its supervisor (a write just after the command started)
    killed = time.time()
    pool.kill()
    pool.communicate()
    ended = wait_for(lambda: [at for _, what, at in runs(tmp_path) if what == "term"],
                     timeout=10, every=0.02)
    assert ended[0] - killed < 3.0  # not at the lease's end, a minute away
