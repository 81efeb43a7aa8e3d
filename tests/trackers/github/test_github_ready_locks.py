"""`jr2 ready --global-cap/--exclusive-by --control-issue ID` on a comment tracker counts what the
pools enforce (jr2_sources/capabilities/limits/lockreport.py): the live lock comments on the
coordination issue as well as the live claims, read-only. Against the fake GitHub, with real lock
comments posted by
`kit.comment_locks` (what `jr2 work --control-issue` runs), and checked against what a pool's
claim then does.

The case where the counts differ on GitHub: a lock with no claim beside it. A pool posts its
lock, then claims; one killed in between (or whose claim is not in this reading) leaves a lock
that holds until its lease ends. (GitHub's reading lists every claimed issue, inside the
filter or not, so claims of pools on other labels or without the options are counted either
way.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gh_helpers import make_adapter

from jr2_sources.capabilities.limits.comment_locks import CommentLocks, LockedTracker
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub

JR2 = [sys.executable, "-m", "jr2_core"]


def ready(fake: FakeGitHub, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x",
               JR2_STATE_DIR=str(tmp / ".jr2"))
    return subprocess.run([*JR2, "ready", "github:o/r", "--label", "agent", *args], cwd=tmp,
                          env=env, capture_output=True, text=True, timeout=60)


def report(res: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert res.returncode == 0, res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def reasons(data: dict[str, Any], item: str) -> list[dict[str, Any]]:
    [entry] = [e for e in data["blocked"] if e["id"] == item]
    return list(entry["reasons"])


def pool(fake: FakeGitHub, label: str, control: int, cap: int | None) -> LockedTracker:
    locked = LockedTracker(make_adapter(fake.url, label=[label]), f"o/r#{control}")
    locked.global_cap = cap
    return locked


def killed_after_locking(fake: FakeGitHub, control: int, items: list[tuple[int, tuple[str, ...]]],
                         cap: int | None) -> None:
    """Pool B posts its locks for `items` (id, groups) and is killed before claiming them."""
    locks = CommentLocks(make_adapter(fake.url, label=["other"]), f"o/r#{control}",
                         global_cap=cap)
    for n, groups in items:
        assert locks.acquire(f"o/r#{n}", groups, "pool-b", 60) is not None


def writes(fake: FakeGitHub) -> list[tuple[str, str]]:
    return [(e["method"], e["path"]) for e in fake.log if e["method"] != "GET"]


def test_the_cap_counts_the_live_locks_as_a_pools_claim_does(fake: FakeGitHub,
                                                              tmp_path: Path) -> None:
    """Two pools share one coordination issue and `--global-cap 2`. Pool B posted two locks and
    was killed before claiming: no claim to read, but pool A's claim yields to the two live
    locks, and with `--control-issue` the report says so (without it, it shows them ready)."""
    control = fake.add_issue("o/r", "jr2 coordination")
    mine = [fake.add_issue("o/r", f"agent work {n}", labels=["agent"]) for n in range(2)]
    theirs = [fake.add_issue("o/r", f"other work {n}", labels=["other"]) for n in range(2)]
    killed_after_locking(fake, control, [(n, ()) for n in theirs], 2)

    claims_only = report(ready(fake, tmp_path, "--global-cap", "2", "--json"))
    assert sorted(e["id"] for e in claims_only["ready"]) == [f"o/r#{n}" for n in mine]
    fake.clear_log()
    res = ready(fake, tmp_path, "--global-cap", "2", "--control-issue", f"o/r#{control}",
                "--json")
    assert writes(fake) == []  # read-only: one more listing, nothing written
    data = report(res)
    assert data["ready"] == []
    assert reasons(data, f"o/r#{mine[0]}") == [
        {"kind": "global_cap", "count": 2, "cap": 2, "locks": 2,
         "control_issue": f"o/r#{control}"}]
    text = ready(fake, tmp_path, "--global-cap", "2", "--control-issue", f"o/r#{control}")
    assert f"waits for the global cap (2 of 2 held; 2 lock comments on o/r#{control})" in \
        text.stdout, text.stdout
    # and that is what pool A's claim does: it yields to the two earlier live locks
    a = pool(fake, "agent", control, 2)
    assert not a.claim(SnapshotItem(id=f"o/r#{mine[0]}"), "pool-a", 60)
    # the locks end with their lease (kill -9 leaves them in the thread): both agree again
    fake.advance(61)
    after = report(ready(fake, tmp_path, "--global-cap", "2", "--control-issue",
                         f"o/r#{control}", "--json"))
    assert sorted(e["id"] for e in after["ready"]) == [f"o/r#{n}" for n in mine]
    assert a.claim(SnapshotItem(id=f"o/r#{mine[0]}"), "pool-a", 60)


def test_a_group_named_by_a_live_lock_is_busy_in_the_report(fake: FakeGitHub,
                                                            tmp_path: Path) -> None:
    control = fake.add_issue("o/r", "jr2 coordination")
    migrate = fake.add_issue("o/r", "migrate", labels=["agent", "area/db"])
    docs = fake.add_issue("o/r", "docs", labels=["agent", "area/docs"])
    theirs = fake.add_issue("o/r", "reindex", labels=["other", "area/db"])
    killed_after_locking(fake, control, [(theirs, ("area/db",))], None)
    args = ["--exclusive-by", "label:area/*", "--json"]
    without = report(ready(fake, tmp_path, *args))
    assert f"o/r#{migrate}" in [e["id"] for e in without["ready"]]
    data = report(ready(fake, tmp_path, *args, "--control-issue", f"o/r#{control}"))
    assert [e["id"] for e in data["ready"]] == [f"o/r#{docs}"]
    assert reasons(data, f"o/r#{migrate}") == [
        {"kind": "group_busy", "group": "area/db", "held_by": f"o/r#{theirs}"}]
    a = pool(fake, "agent", control, None)
    assert not a.claim(SnapshotItem(id=f"o/r#{migrate}", groups=("area/db",)), "pool-a", 60)
    assert a.claim(SnapshotItem(id=f"o/r#{docs}", groups=("area/docs",)), "pool-a", 60)


def test_without_the_control_issue_the_line_says_what_it_counts(fake: FakeGitHub,
                                                                tmp_path: Path) -> None:
    fake.add_issue("o/r", "held", labels=["agent"])
    waiting = fake.add_issue("o/r", "waiting", labels=["agent"])
    assert make_adapter(fake.url, label=["agent"]).claim(SnapshotItem(id="o/r#1"), "p", 60)
    res = ready(fake, tmp_path, "--global-cap", "1")
    assert res.returncode == 0, res.stderr
    assert ("waits for the global cap (1 of 1 held, counting live claims only: the pools also "
            "count the lock comments on their --control-issue; give it to count them)"
            ) in res.stdout, res.stdout
    data = report(ready(fake, tmp_path, "--global-cap", "1", "--json"))
    assert reasons(data, f"o/r#{waiting}") == [
        {"kind": "global_cap", "count": 1, "cap": 1, "locks": None}]


def test_control_issue_misuse_is_one_line_and_exit_2(fake: FakeGitHub, tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "T-1"\ntitle = "one"\n')
    for args, says in (
            (["github:o/r", "--control-issue", "o/r#1"], "give one of them too"),
            (["local:b.toml", "--global-cap", "1", "--control-issue", "o/r#1"],
             "keeps the limits in its own claims")):
        env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x",
                   JR2_STATE_DIR=str(tmp_path / ".jr2"))
        res = subprocess.run([*JR2, "ready", *args], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], lines
    assert writes(fake) == []
