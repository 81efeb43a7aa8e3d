"""`jr2 work gitlab:... --global-cap --exclusive-by --control-issue` through the plugin: the
lock notes of jr2's comment locks on a coordination issue keep the limits across 4 pools, and
none is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_gitlab import TOKEN, FakeGitLab

WORKER = r'''
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
item = os.environ["JR2_ITEM_ID"]
os.write(fd, f"start {item} {time.time():.6f}\n".encode())
time.sleep(0.3)
os.write(fd, f"end {item} {time.time():.6f}\n".encode())
'''


def _most_at_once(lines: list[str], keep: set[str]) -> int:
    events = sorted((float(t), 1 if kind == "start" else -1)
                    for kind, item, t in (ln.split() for ln in lines) if item in keep)
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_four_pools_keep_a_group_and_the_global_cap_through_the_plugin(tmp_path: Path) -> None:
    f = FakeGitLab().start()
    try:
        project = "group/project"
        control = f.add_issue(project, "jr2 coordination")
        db = [f"{project}#{f.add_issue(project, 'db', labels=['agent', 'area/db'])}"
              for _ in range(3)]
        free = [f"{project}#{f.add_issue(project, 'free', labels=['agent'])}" for _ in range(3)]
        (tmp_path / "w.py").write_text(WORKER)
        env = {**os.environ, "GITLAB_URL": f.url, "GITLAB_TOKEN": TOKEN}
        procs = [subprocess.Popen(
            [sys.executable, "-m", "jr2_core", "work", f"gitlab:{project}", "--label", "agent",
             "--write-spacing", "0.01", "--poll-every", "0.2", "--state",
             str(tmp_path / f"s{i}"), "--cap", "2", "--global-cap", "3", "--exclusive-by",
             "label:area/*", "--control-issue", f"{project}#{control}", "--",
             sys.executable, str(tmp_path / "w.py"), str(tmp_path / "journal")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(4)]
        for p in procs:
            _, err = p.communicate(timeout=180)
            assert p.returncode == 0, err[-2000:]
        lines = (tmp_path / "journal").read_text().splitlines()
        assert sorted(ln.split()[1] for ln in lines if ln.startswith("start")) == sorted(db + free)
        assert _most_at_once(lines, set(db)) == 1
        assert _most_at_once(lines, set(db + free)) <= 3
        notes = f.projects[project]["issues"][control]["notes"]
        assert not [n for n in notes if "jr2:lock" in n["body"]]
    finally:
        f.stop()


def test_dead_lock_notes_of_a_killed_pool_are_deleted_and_nothing_else() -> None:
    """A lock note left by a killed pool is deleted by the next claimer once it has been dead
    for one more lease; a person's note on the coordination issue stays."""
    from gitlab_helpers import make_adapter

    from jr2_sources.capabilities.limits.comment_locks import CommentLocks

    f = FakeGitLab().start()
    try:
        project = "group/project"
        control = f"{project}#{f.add_issue(project, 'jr2 coordination')}"
        f.add_user("alice", 30)
        iid = int(control.split("#")[1])
        note = f.add_note(project, iid, "please keep this thread tidy", "alice")
        ad = make_adapter(f.url, project=project, label=["agent"])
        assert CommentLocks(ad, control, global_cap=None).acquire(
            f"{project}#9", ("db",), "gone", 5) is not None
        f.advance(5 + 5 + 1)
        held = CommentLocks(ad, control, global_cap=None).acquire(f"{project}#2", ("db",), "p2",
                                                                  60)
        assert held is not None
        notes = f.projects[project]["issues"][iid]["notes"]
        assert [n["id"] for n in notes] == [note, held.comment_id]
    finally:
        f.stop()


KILLABLE = r'''
import json, os, sys, time
journal, table = sys.argv[1], json.load(open(sys.argv[2]))
item, parent = os.environ["JR2_ITEM_ID"], os.getppid()

def line(kind):
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{kind} {item} {time.time():.6f}\n".encode())
    os.close(fd)

line("start")
end = time.monotonic() + float(table.get(item, table["*"]))
while time.monotonic() < end:
    if os.getppid() != parent:  # the pool was killed: an agent tied to it goes too
        line("orphan")
        os._exit(1)
    time.sleep(0.02)
line("end")
'''


def _intervals(lines: list[str]) -> list[tuple[str, float, float]]:
    """(item, start, end) of each run in the journal (any line but `start` ends a run)."""
    out, open_ = [], {}
    for kind, item, t in (ln.split() for ln in lines):
        if kind == "start":
            open_[item] = float(t)
        else:
            out.append((item, open_.pop(item), float(t)))
    return out + [(item, s, float("inf")) for item, s in open_.items()]


def _overlap(runs: list[tuple[str, float, float]]) -> int:
    """The most runs open at one instant (an end at t comes before a start at t)."""
    most = now = 0
    for _, step in sorted([(s, 1) for _, s, _ in runs] + [(e, -1) for _, _, e in runs]):
        now += step
        most = max(most, now)
    return most


@pytest.mark.soak  # the same clean-up runs by default for GitHub and Jira (tests/reliability)
def test_lock_notes_of_a_killed_pool_are_cleaned_up_through_jr2_work(tmp_path: Path) -> None:
    """A pool holding the lock of an area/db issue under --global-cap 2 is killed with SIGKILL
    and leaves its lock note on the coordination issue. Two pools of --cap 2 started at once
    run past the dead lock's lease and grace: at most 2 issues run at any instant (the killed
    pool's run included) and only 1 while the dead lock's lease lasts; both drain, the dead
    note is deleted, and the thread ends with no jr2 lock note and every person's note as it
    was, one that pastes a lock marker included."""
    lease = 3.0
    f = FakeGitLab().start()
    procs: list[subprocess.Popen[str]] = []
    try:
        project = "group/project"
        control = f.add_issue(project, "jr2 coordination")
        thread = f.projects[project]["issues"][control]["notes"]
        # a pasted marker that holds nothing (lease 0: the first pool takes the db issue at once)
        marker = ('<!-- jr2:lock {"groups": ["area/db"], "holder": "alice", "item": "x#9", '
                  '"lease": 0, "nonce": "0"} -->')
        people = [f.add_note(project, control, "please keep this thread tidy", "alice"),
                  f.add_note(project, control, f"{marker}\nwhat does this lock mean?", "bob")]
        before = {n["id"]: n["body"] for n in thread}
        ids = [f"{project}#{f.add_issue(project, 'db', labels=['agent', 'area/db'])}"]
        (tmp_path / "w.py").write_text(KILLABLE)
        journal = tmp_path / "journal"
        env = {**os.environ, "GITLAB_URL": f.url, "GITLAB_TOKEN": TOKEN}

        def start(i: int, cap: int, table: dict[str, float]) -> subprocess.Popen[str]:
            (tmp_path / f"d{i}.json").write_text(json.dumps(table))
            proc = subprocess.Popen(
                [sys.executable, "-m", "jr2_core", "work", f"gitlab:{project}", "--label",
                 "agent", "--write-spacing", "0.01", "--poll-every", "0.2", "--state",
                 str(tmp_path / f"s{i}"), "--cap", str(cap), "--global-cap", "2",
                 "--exclusive-by", "label:area/*", "--control-issue", f"{project}#{control}",
                 "--lease", f"{lease:.0f}s", "--", sys.executable, str(tmp_path / "w.py"),
                 str(journal), str(tmp_path / f"d{i}.json")],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            procs.append(proc)
            return proc

        first = start(0, 1, {ids[0]: 60, "*": 0.2})
        end = time.monotonic() + 60
        while not (journal.exists() and f"start {ids[0]} " in journal.read_text()):
            assert time.monotonic() < end and first.poll() is None
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        killed = time.time()
        # the other issues come now: the later pools run all of them, past the dead lock's
        # grace (the killed pool, which picks any ready issue first, ran the db one only)
        ids += [f"{project}#{f.add_issue(project, f'free {i}', labels=['agent'])}"
                for i in range(8)]
        with f.lock:
            [(dead, updated)] = [(n["id"], n["updated"]) for n in thread
                                 if n["id"] not in people and "jr2:lock" in n["body"]]
        later = [start(i, 2, {"*": 2.0}) for i in (1, 2)]
        for proc in later:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-2000:]
        done = _intervals(journal.read_text().splitlines())
        assert sorted({item for item, _, _ in done}) == sorted(ids)
        assert _overlap(done) <= 2
        # the dead lock keeps its slot until its lease ends (server time, milliseconds)
        assert _overlap([(item, s, min(e, updated + lease)) for item, s, e in done
                         if killed < s < updated + lease]) <= 1
        assert all(f.issue(project, int(i.split("#")[1]))["state"] == "closed" for i in ids)
        assert {n["id"]: n["body"] for n in thread} == {i: before[i] for i in people}
        deletes = [path for method, path, _ in f.requests if method == "DELETE"]
        assert [p for p in deletes if p.endswith(f"/notes/{dead}")]
        assert not [p for p in deletes if int(p.rsplit("/", 1)[1]) in people]
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate(timeout=30)
        f.stop()
