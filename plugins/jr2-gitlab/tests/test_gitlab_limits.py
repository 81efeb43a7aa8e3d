"""`jr2 work gitlab:... --global-cap --exclusive-by --control-issue` through the plugin: the
lock notes of jr2's comment locks on a coordination issue keep the limits across 4 pools, and
none is left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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

    from jr2_sources.kit.comment_locks import CommentLocks

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
