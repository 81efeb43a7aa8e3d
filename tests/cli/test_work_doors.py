"""`jr2 work` when its own doors are forced: a command that kills its pool, a state disk that
fills up, a command that cleans its working tree."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import time
from pathlib import Path

from clihelp import jr2


def _store(tmp: Path) -> Path:
    return next((tmp / ".jr2" / "local").glob("*.sqlite"))


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(sql))


def test_an_item_that_kills_its_pool_runs_at_most_twice_in_six_restarts(tmp_path: Path
                                                                           ) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "BOOM"\ntitle = "kills its pool"\n')
    runs = tmp_path / "runs"
    killer = ["--", "sh", "-c", f'echo run >> {runs}; kill -9 $PPID']
    ends = []
    t0 = time.monotonic()
    for _ in range(6):  # a service manager's Restart=always
        res = jr2("work", "local:b.toml", "--lease", "1s", "--max-attempts", "2", *killer,
                  cwd=tmp_path, timeout=60)
        ends.append((res.returncode, res.stderr))
    assert runs.read_text().split() == ["run", "run"], ends
    assert [rc for rc, _ in ends[:2]] == [-9, -9]
    rc, err = ends[2]
    assert rc == 1 and "failed BOOM: its pool died 2 times while it ran" in err, err
    assert time.monotonic() - t0 < 60


def test_a_full_state_disk_fails_that_item_releases_the_claims_and_ends_in_one_line(
        tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "LOUD"\ntitle = "loud"\n'
                                     '[[items]]\nid = "QUIET"\ntitle = "quiet"\n'
                                     '[[items]]\nid = "NEXT"\ntitle = "n"\n')
    ran = tmp_path / "ran"
    # a file-size limit stands in for a full disk: the log's write is refused (EFBIG) at 1 MiB
    limit = 1 << 20

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    script = (f'echo "$JR2_ITEM_ID" >> {ran}; if [ "$JR2_ITEM_ID" = LOUD ]; then '
              'yes "a line of output" | head -c 3000000; else sleep 30; fi')
    t0 = time.monotonic()
    res = jr2("work", "local:b.toml", "--cap", "2", "--", "sh", "-c", script, cwd=tmp_path,
              preexec_fn=small_disk, timeout=60)
    assert res.returncode == 4, res.stderr
    assert "Traceback" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: the state directory's disk refused a write (File too "
                           "large)") and "LOUD failed and the run stops" in last, res.stderr
    assert time.monotonic() - t0 < 25  # QUIET's sleep was stopped, not waited for
    db = _store(tmp_path)
    assert _rows(db, "SELECT count(*) FROM claims") == [(0,)]
    assert _rows(db, "SELECT item_id, status FROM outcomes") == [("LOUD", "failed")]
    started = ran.read_text().split()
    assert len(started) == 2 and "LOUD" in started  # the third item was not started


def test_log_limit_caps_one_items_log_and_notes_the_cut(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    res = jr2("work", "local:b.toml", "--log-limit", "64KiB", "--", "sh", "-c",
              'yes "a line of output" | head -c 1000000; echo; echo last', cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (log,) = (tmp_path / ".jr2" / "logs").rglob("*.log")
    text = log.read_text()
    assert 64 << 10 <= log.stat().st_size < (64 << 10) + 400
    assert "jr2 log cut at the log limit (64 KiB, --log-limit)" in text
    assert text.rstrip().splitlines()[-1].startswith("jr2 log cut: ")
    bad = jr2("work", "local:b.toml", "--log-limit", "lots", "--", "true", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == (
        "error: --log-limit: 'lots' is not a size like 512K, 10MiB or 1G")


def test_a_command_that_runs_git_clean_fdx_never_makes_done_work_run_again(tmp_path: Path
                                                                            ) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "b.toml").write_text("".join(f'[[items]]\nid = "I-{i}"\ntitle = "i"\n'
                                         for i in range(3)))
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=n"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "b.toml"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "backlog"], check=True)
    ran = tmp_path / "ran"
    clean = ["--", "sh", "-c", f'echo "$JR2_ITEM_ID" >> {ran}; git clean -fdxq']
    env = {k: v for k, v in os.environ.items() if k != "JR2_STATE_DIR"}  # the default
    first = jr2("work", "local:b.toml", *clean, cwd=repo, env=env)
    assert first.returncode == 0, first.stderr
    again = jr2("work", "local:b.toml", *clean, cwd=repo, env=env)
    assert again.returncode == 0, again.stderr
    assert sorted(ran.read_text().split()) == ["I-0", "I-1", "I-2"]  # each ran once
    assert (repo / ".git" / "jr2" / "logs").is_dir()  # the store sits where git never cleans
