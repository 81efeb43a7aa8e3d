"""`jr2 work` against what one item, one command or one keystroke can do (issue 14): nothing
about one item ends the run, a command's process group never outlives it, a second Ctrl-C still
releases the claims, and every distinct id gets its own sandbox."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from clihelp import alive, jr2, popen, wait_for


def pids_in(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def claims(tmp_path: Path) -> int:
    db = next((tmp_path / ".jr2" / "local").glob("*.sqlite"), None)
    if db is None:
        return -1
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT count(*) FROM claims").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return -1


def test_four_pools_run_a_1mib_line_a_nul_title_and_a_200kib_title_and_every_other_item_once(
        tmp_path: Path) -> None:
    lines = ['[[items]]\nid = "BIG"\ntitle = "prints one 1 MiB line"',
             '[[items]]\nid = "NUL"\ntitle = "before\\u0000after"',
             f'[[items]]\nid = "LONG"\ntitle = "{"t" * (200 << 10)}"']
    lines += [f'[[items]]\nid = "I-{i}"\ntitle = "item {i}"' for i in range(24)]
    (tmp_path / "b.toml").write_text("\n".join(lines) + "\n")
    ran, pids = tmp_path / "ran", tmp_path / "pids"
    script = (f'echo $$ >> {pids}; echo "$JR2_ITEM_ID" >> {ran}; '
              'if [ "$JR2_ITEM_ID" = BIG ]; then head -c 1048576 /dev/zero | tr "\\0" x; echo; '
              'else python3 -c "import json,os; t=json.load(open(os.environ[\'JR2_ITEM_JSON\']))'
              '[\'title\']; print(json.dumps([len(t), os.environ.get(\'JR2_ITEM_TITLE\')'
              ' is None]))"; fi')
    procs = [popen("work", "local:b.toml", "--cap", "2", "--json", "--", "sh", "-c", script,
                   cwd=tmp_path) for _ in range(4)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in outs]
    done = ran.read_text().split()
    assert sorted(done) == sorted(["BIG", "NUL", "LONG", *(f"I-{i}" for i in range(24))])
    items: dict[str, object] = {}
    for out, _ in outs:
        items.update(json.loads(out)["output"]["items"])
    assert items["BIG"] == "x" * (1 << 20)  # the whole line, read in chunks
    assert items["NUL"] == [len("before\0after"), True]  # left out of the env, in the JSON
    assert items["LONG"] == [200 << 10, True]
    assert items["I-0"] == [len("item 0"), False]
    err = "".join(e for _, e in outs)
    assert err.count("JR2_ITEM_TITLE left out of the environment") == 2
    assert "NUL byte" in err and "over the 65,536-byte limit" in err
    logs = "".join(p.read_text() for p in (tmp_path / ".jr2" / "logs").rglob("*.log"))
    assert logs.count("jr2 JR2_ITEM_TITLE left out of the environment") == 2
    assert [p for p in pids_in(pids) if alive(p)] == []
    assert claims(tmp_path) == 0


def test_a_background_child_ends_with_its_command(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    bg = tmp_path / "bg"
    t0 = time.monotonic()
    res = jr2("work", "local:b.toml", "--timeout", "20s", "--json", "--", "sh", "-c",
              f"sleep 120 & echo $! > {bg}; echo finished", cwd=tmp_path, timeout=60)
    took = time.monotonic() - t0
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["output"]["items"]["A"] == "finished"
    assert took < 10, took  # not held open by the child's copy of stdout
    assert not alive(int(bg.read_text()))


def test_a_second_ctrl_c_kills_the_commands_and_still_releases_the_claims(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        "".join(f'[[items]]\nid = "I-{i}"\ntitle = "i"\n' for i in range(3)))
    pids = tmp_path / "pids"
    # a command that ignores SIGTERM (so the first Ctrl-C waits for the kill grace)
    proc = popen("work", "local:b.toml", "--cap", "2", "--", "sh", "-c",
                 f"trap '' TERM; echo $$ >> {pids}; while :; do sleep 0.1; done", cwd=tmp_path)
    try:
        wait_for(lambda: claims(tmp_path) == 2 and len(pids_in(pids)) == 2)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        for pid in pids_in(pids):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert took < 3, took  # did not wait out the 5 s grace
    assert "interrupted again" in err
    assert claims(tmp_path) == 0
    assert [p for p in pids_in(pids) if alive(p)] == []


def test_ids_differing_by_a_trailing_dot_or_case_get_their_own_sandboxes(tmp_path: Path) -> None:
    ids = ["T-1", "T-1.", "t-1", "T-1.."]
    (tmp_path / "b.toml").write_text(
        "".join(f'[[items]]\nid = "{i}"\ntitle = "i"\n' for i in ids))
    seen = tmp_path / "seen"
    script = (f'cd "$JR2_SANDBOX" && echo "$JR2_ITEM_ID" > mine; echo "$PWD" >> {seen}; sleep 0.5; '
              '[ "$(cat mine)" = "$JR2_ITEM_ID" ]')
    res = jr2("work", "local:b.toml", "--cap", "4", "--", "sh", "-c", script, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    dirs = seen.read_text().split()
    assert len(dirs) == 4 and len({d.lower() for d in dirs}) == 4


# -- a backlog being saved ------------------------------------------------------------------------


def test_a_backlog_saved_non_atomically_never_makes_a_pool_end_early(tmp_path: Path) -> None:
    path, ran = tmp_path / "b.toml", tmp_path / "ran"
    entries = [f'[[items]]\nid = "I-{i}"\ntitle = "item {i}"\n' for i in range(30)]
    path.write_text("".join(entries))
    os.utime(path, (time.time() - 5, time.time() - 5))
    proc = popen("work", "local:b.toml", "--poll-every", "0.05", "--", "sh", "-c",
                 f'echo "$JR2_ITEM_ID" >> {ran}; sleep 0.05', cwd=tmp_path)
    saves = 0
    try:
        while proc.poll() is None:  # an editor that truncates, writes a part, then the rest
            with open(path, "w") as fh:
                fh.write("".join(entries[:3]))  # for a moment: valid TOML, 3 items, all done
                fh.flush()
                time.sleep(0.08)
                fh.write("".join(entries[3:]))
            saves += 1
            time.sleep(0.3)
        _, err = proc.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 0, err
    assert saves >= 3  # the pool really read the file while it was being saved
    done = ran.read_text().split()
    assert sorted(done) == sorted(f"I-{i}" for i in range(30)), err  # all of them, each once
    assert "30 done" in err


def test_an_invalid_backlog_mid_run_ends_the_run_with_exit_4_after_its_grace(
        tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_text('[[items]]\nid = "A"\ntitle = "a"\n[[items]]\nid = "B"\ntitle = "b"\n'
                    'needs = ["A"]\n')
    proc = popen("work", "local:b.toml", "--cap", "2", "--poll-every", "0.05",
                 "--invalid-grace", "2s", "--", "sleep", "60", cwd=tmp_path)
    try:
        wait_for(lambda: claims(tmp_path) == 1)
        path.write_text('[[items]]\nid = "A"\ntitle = ')
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 4, err
    assert 1.9 < took < 15, took
    assert err.count("keeping the last good backlog") == 1  # warned once, not every poll
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: b.toml:3:9: ") and last.endswith("(still invalid after 2s)")
    assert claims(tmp_path) == 0  # the running worker was stopped and its claim released


def test_a_deeply_nested_backlog_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    (tmp_path / "b.json").write_text('{"a": ' + "[" * 50_000 + "]" * 50_000 + "}")
    for name in ("b.toml", "b.json"):
        res = jr2("ready", f"local:{name}", cwd=tmp_path)
        assert res.returncode == 2
        assert res.stderr == f"error: {name}: nested too deeply to be a backlog\n"


def test_bad_ports_and_leases_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    for opts, words in ((["--port", "99999"], "99999 is not in the range 0<=x<=65535"),
                        (["--listen", "127.0.0.1:99999"], "a port from 0 to 65535"),
                        (["--lease", "inf"], "longer than the longest duration"),
                        (["--lease", "nan"], "more than 0 seconds"),
                        (["--timeout", "1e999"], "longer than the longest duration")):
        res = jr2("work", "local:b.toml", *opts, "--", "true", cwd=tmp_path)
        assert res.returncode == 2, (opts, res.stderr)
        assert words in res.stderr and "Traceback" not in res.stderr, (opts, res.stderr)
    res = jr2("run", "x.py:m", "--port", "99999", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
