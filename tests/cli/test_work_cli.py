"""`jr2 work` on the local source: one command per item, claims, failures, races, crashes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from clihelp import alive, jr2, popen, wait_for


def write_backlog(path: Path, n: int, *, chain_every: int = 0) -> None:
    lines = []
    for i in range(n):
        lines += ["[[items]]", f'id = "I-{i}"', f'title = "Item {i}"']
        if chain_every and i % chain_every and i > 0:
            lines.append(f'needs = ["I-{i - 1}"]')
    path.write_text("\n".join(lines) + "\n")


def test_work_runs_the_command_once_per_item_with_its_environment(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "A"\ntitle = "first"\nbranch = "jr2/a"\n'
        '[[items]]\nid = "B"\ntitle = "second"\nneeds = ["A"]\n')
    script = ('echo "$JR2_ITEM_ID|$JR2_ITEM_TITLE|$JR2_ITEM_BRANCH|$JR2_RUN_ID|$JR2_SANDBOX" >> '
              f'{tmp_path}/seen; test -f "$JR2_ITEM_JSON" && echo \'{{"ok": 1}}\'')
    res = jr2("work", "local:b.toml", "--json", "--", "sh", "-c", script, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    seen = (tmp_path / "seen").read_text().splitlines()
    assert [s.split("|")[0] for s in seen] == ["A", "B"]  # B waited for A
    a = seen[0].split("|")
    assert a[1:3] == ["first", "jr2/a"] and a[3].startswith("r-")
    assert "/sandboxes/" in a[4]  # the scratch directory (the command runs in the start one)
    out = json.loads(res.stdout)
    assert out["output"]["status"] == "drained" and out["output"]["items"]["A"] == {"ok": 1}


def test_a_failing_command_fails_its_item_and_keeps_the_log(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "A"\ntitle = "a"\n[[items]]\nid = "B"\ntitle = "b"\nneeds = ["A"]\n')
    res = jr2("work", "local:b.toml", "--", "sh", "-c", "echo boom >&2; exit 7", cwd=tmp_path)
    assert res.returncode == 1
    assert "failed A: exit code 7: boom" in res.stderr
    logs = list((tmp_path / ".jr2" / "logs").rglob("*.log"))
    assert len(logs) == 1 and "err boom" in logs[0].read_text()
    data = json.loads(jr2("ready", "local:b.toml", "--json", cwd=tmp_path).stdout)
    reasons = {e["id"]: e["reasons"] for e in data["blocked"]}
    assert reasons["A"] == [{"kind": "failed", "reason": "exit code 7: boom"}]
    assert reasons["B"][0]["kind"] == "open_blocker"  # a failure does not unblock dependents
    # not offered again until a person clears it
    again = jr2("work", "local:b.toml", "--", "true", cwd=tmp_path)
    assert again.returncode == 3
    assert "jr2: blocked:\njr2:   A: last attempt failed: exit code 7: boom\n" in again.stderr
    assert "jr2:   B: waits on A" in again.stderr
    assert jr2("local", "retry", "b.toml", "A", cwd=tmp_path).returncode == 0
    assert jr2("work", "local:b.toml", "--", "true", cwd=tmp_path).returncode == 0


def test_a_command_that_does_not_exist_is_refused_before_anything_is_claimed(
        tmp_path: Path) -> None:
    write_backlog(tmp_path / "b.toml", 2)
    res = jr2("work", "local:b.toml", "--", "no-such-command-xyz", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip() == "error: command not found: no-such-command-xyz (not on PATH)"
    assert not (tmp_path / ".jr2").exists()


def test_timeout_fails_the_item(tmp_path: Path) -> None:
    write_backlog(tmp_path / "b.toml", 1)
    res = jr2("work", "local:b.toml", "--timeout", "0.5s", "--", "sleep", "30", cwd=tmp_path,
              timeout=30)
    assert res.returncode == 1 and "timed out after 0.5s" in res.stderr


def test_secrets_in_command_output_are_redacted_from_logs(tmp_path: Path) -> None:
    write_backlog(tmp_path / "b.toml", 1)
    env = dict(os.environ, GITHUB_TOKEN="ghp_supersecretvalue123")
    res = jr2("work", "local:b.toml", "--json", "--pass-env", "GITHUB_TOKEN", "--", "sh", "-c",
              'echo "token is $GITHUB_TOKEN"; echo "$GITHUB_TOKEN" >&2', cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    text = "".join(p.read_text() for p in (tmp_path / ".jr2" / "logs").rglob("*") if p.is_file())
    assert "ghp_supersecretvalue123" not in text + res.stdout + res.stderr
    assert "token is ***" in text
    assert json.loads(res.stdout)["output"]["items"]["I-0"] == "token is ***"


def test_sigint_stops_claiming_ends_the_children_and_releases_their_claims(
        tmp_path: Path) -> None:
    write_backlog(tmp_path / "b.toml", 3)
    pids = tmp_path / "pids"
    proc = popen("work", "local:b.toml", "--cap", "2", "--", "sh", "-c",
                 f"echo $$ >> {pids}; exec sleep 30", cwd=tmp_path)
    db = wait_for(lambda: next((tmp_path / ".jr2" / "local").glob("*.sqlite"), None))

    def claims() -> int:
        try:
            with sqlite3.connect(db) as conn:
                return int(conn.execute("SELECT count(*) FROM claims").fetchone()[0])
        except sqlite3.OperationalError:  # the schema is not there yet
            return -1

    wait_for(lambda: claims() == 2)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert claims() == 0

    assert [p for p in map(int, pids.read_text().split()) if alive(p)] == []


def test_three_racing_pools_run_each_of_300_items_exactly_once(tmp_path: Path) -> None:
    write_backlog(tmp_path / "b.toml", 300, chain_every=5)
    out = tmp_path / "ran"
    procs = [popen("work", "local:b.toml", "--cap", "4", "--", "sh", "-c",
                   f'echo "$JR2_ITEM_ID $JR2_RUN_ID" >> {out}', cwd=tmp_path)
             for _ in range(3)]
    codes = [p.wait(timeout=240) for p in procs]
    assert codes == [0, 0, 0], [p.stderr.read() for p in procs if p.stderr]
    ran = [line.split()[0] for line in out.read_text().splitlines()]
    assert len(ran) == 300 and len(set(ran)) == 300
    runs = {line.split()[1] for line in out.read_text().splitlines()}
    assert len(runs) >= 2  # the work really was shared


def test_after_kill_9_another_pool_takes_over_once_the_lease_ends(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "SLOW"\ntitle = "slow"\n[[items]]\nid = "NEXT"\ntitle = "next"\n'
        'needs = ["SLOW"]\n[[items]]\nid = "OTHER"\ntitle = "other"\n')
    pids = tmp_path / "pids"
    ran = tmp_path / "ran"
    script = (f'echo "$JR2_ITEM_ID" >> {ran}; if [ "$JR2_ITEM_ID" = SLOW ] && '
              f'[ ! -f {tmp_path}/once ]; then touch {tmp_path}/once; echo $$ >> {pids}; '
              'sleep 60; fi')
    a = popen("work", "local:b.toml", "--lease", "2s", "--", "sh", "-c", script, cwd=tmp_path)
    wait_for(lambda: pids.exists() and pids.read_text().strip())
    a.send_signal(signal.SIGKILL)
    a.wait(timeout=10)
    for pid in pids.read_text().split():  # the orphaned command of the dead pool
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    t0 = time.monotonic()
    b = jr2("work", "local:b.toml", "--lease", "2s", "--", "sh", "-c", script, cwd=tmp_path,
            timeout=60)
    assert b.returncode == 0, b.stderr  # waited for the dead pool's lease, then drained
    done = ran.read_text().split()
    assert sorted(set(done)) == ["NEXT", "OTHER", "SLOW"]
    assert done.count("SLOW") == 2  # once by the dead pool, once more after the lease
    assert time.monotonic() - t0 < 30


def test_a_broken_backlog_is_bad_usage_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\nneeds = ["A"]\n')
    res = jr2("work", "local:b.toml", "--", "true", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip() == 'error: b.toml: item "A" needs itself'


def test_an_interrupted_run_still_counts_what_finished(tmp_path: Path) -> None:
    write_backlog(tmp_path / "b.toml", 2)
    proc = popen("work", "local:b.toml", "--wait", "--", "true", cwd=tmp_path)
    wait_for(lambda: json.loads(jr2("ready", "local:b.toml", "--json", cwd=tmp_path).stdout)[
        "counts"]["done"] == 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "2 done, 0 failed, 0 cancelled" in err


def test_retries_and_parked_items_are_not_counted_as_cancelled(tmp_path: Path) -> None:
    """A transient failure offered again and an item parked awaiting approval are said as such
    in the summary, not as `cancelled`."""
    (tmp_path / "b.toml").write_text('[[items]]\nid = "R"\ntitle = "r"\n'
                                     '[[items]]\nid = "G"\ntitle = "g"\n')
    script = ('if [ "$JR2_ITEM_ID" = G ]; then echo "jr2: await-approval deploy"; exit 79; fi; '
              'if [ ! -e once ]; then touch once; exit 75; fi')
    res = jr2("work", "local:b.toml", "--max-attempts", "2", "--transient-exit", "75",
              "--retry-backoff", "0.1", "--gate", "deploy", "--", "sh", "-c", script, cwd=tmp_path)
    assert res.returncode == 3, res.stderr  # G waits for a person
    assert "deadlocked: 1 done, 0 failed, 0 cancelled, 1 parked, 1 retry" in res.stderr
    assert "parked G: awaits approval of gate deploy" in res.stderr
