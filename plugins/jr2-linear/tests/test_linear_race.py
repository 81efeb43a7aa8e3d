"""`jr2 work` processes race over one fake Linear (some issues blocked, some sub-issues): every
issue runs exactly once and ends completed. Four pools over 40 issues is a soak (about 20 s on
two cores); the default run races four pools over 8."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fake_linear import KEY, FakeLinear


@pytest.mark.soak
def test_four_pools_over_forty_issues_run_each_exactly_once(tmp_path: Path) -> None:
    race(tmp_path, issues=40)


def test_four_pools_over_eight_issues_run_each_exactly_once(tmp_path: Path) -> None:
    race(tmp_path, issues=8)


def race(tmp_path: Path, *, issues: int, pools: int = 4) -> None:
    fake = FakeLinear().start()
    try:
        ids = [fake.add_issue(f"Task {n}") for n in range(issues)]
        for n in range(0, issues, 8):  # a blocker chain and a parent in every eight
            fake.relate(ids[n], ids[n + 1])
            fake.set_parent(ids[n + 3], ids[n + 2])
        fake.clock_offset = 60.0  # the backlog was there before the pools started
        log = tmp_path / "ran"
        env = {**os.environ, "LINEAR_API_URL": fake.url, "LINEAR_API_KEY": KEY}
        procs = [subprocess.Popen(
            [sys.executable, "-m", "jr2_core", "work", "linear:ENG", "--cap", "2",
             "--poll-every", "0.3", "--state", str(tmp_path / f"state{p}"), "--", "sh", "-c",
             f'echo "$JR2_ITEM_ID" >> {log}'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for p in range(pools)]
        results = [p.communicate(timeout=240) for p in procs]
        for proc, (_out, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err[-2000:]
        runs = Counter(log.read_text().split())
        assert runs == Counter(ids), {k: v for k, v in runs.items() if v != 1}
        assert {fake.state_type(i) for i in ids} == {"completed"}
    finally:
        fake.stop()
