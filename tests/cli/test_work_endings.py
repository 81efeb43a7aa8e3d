"""`jr2 work` run as the console script runs it, and nothing is lost at its end: for every
ending (drained, failed, deadlocked, error, Ctrl-C) the exit code is the documented one, the
JSON on stdout is whole, the claim store is complete and closed (SQLite removed its WAL file:
the last connection closed), and every item has its log."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from clihelp import wait_for

# stdout buffered, as it is by default when it is not a terminal
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "jr2_core", *args]


def _jr2(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_argv(*args), cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=ENV, check=False)


def _backlog(path: Path, n: int, needs: dict[int, int] | None = None) -> None:
    lines = []
    for i in range(n):
        lines += ["[[items]]", f'id = "I-{i}"', f'title = "Item {i}"']
        if needs and i in needs:
            lines.append(f'needs = ["I-{needs[i]}"]')
    path.write_text("\n".join(lines) + "\n")


def _store(tmp_path: Path) -> Path:
    found = list((tmp_path / ".jr2" / "local").glob("*.sqlite"))
    assert len(found) == 1
    return found[0]


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return list(conn.execute(sql))


def test_a_drained_run_exits_0_with_its_whole_output_store_and_logs(tmp_path: Path) -> None:
    n = 150  # the JSON result is far more than stdout's buffer
    _backlog(tmp_path / "b.toml", n)
    res = _jr2(tmp_path, "work", "local:b.toml", "--cap", "4", "--json", "--", "sh", "-c",
               'echo "{\\"id\\": \\"$JR2_ITEM_ID\\"}"')
    assert res.returncode == 0, res.stderr
    assert f"drained: {n} done, 0 failed" in res.stderr
    out = json.loads(res.stdout)
    assert out["state"] == "done"
    assert out["output"]["items"] == {f"I-{i}": {"id": f"I-{i}"} for i in range(n)}
    db = _store(tmp_path)
    assert not Path(f"{db}-wal").exists()  # closed: the last connection removes its WAL
    assert _rows(db, "SELECT count(*), min(status), max(status) FROM outcomes") == [
        (n, "done", "done")]
    assert _rows(db, "SELECT count(*) FROM claims") == [(0,)]
    logs = [p for p in (tmp_path / ".jr2" / "logs").rglob("*.log")]
    assert len(logs) == n
    assert all(p.read_text() == f'out {{"id": "{p.stem.rsplit("-", 1)[0]}"}}\n' for p in logs)


def test_failed_then_deadlocked_exit_1_then_3_with_the_store_complete(tmp_path: Path) -> None:
    _backlog(tmp_path / "b.toml", 3, needs={1: 0})
    res = _jr2(tmp_path, "work", "local:b.toml", "--json", "--", "sh", "-c",
               'test "$JR2_ITEM_ID" != I-0 || { echo boom >&2; exit 7; }')
    assert res.returncode == 1, res.stderr
    assert "failed I-0: exit code 7: boom" in res.stderr
    assert json.loads(res.stdout)["state"] == "failed"
    db = _store(tmp_path)
    assert not Path(f"{db}-wal").exists()
    assert sorted(_rows(db, "SELECT item_id, status FROM outcomes")) == [
        ("I-0", "failed"), ("I-2", "done")]
    again = _jr2(tmp_path, "work", "local:b.toml", "--", "true")
    assert again.returncode == 3, again.stderr
    assert "jr2:   I-1: waits on I-0" in again.stderr


def test_an_error_ending_exits_4_with_the_claims_released(tmp_path: Path) -> None:
    _backlog(tmp_path / "b.toml", 2)
    # I-0's command breaks the backlog; once the grace is over, the next look at it (in I-0's
    # freed slot) ends the run in an error, and I-1, still running, is stopped and released
    res = _jr2(tmp_path, "work", "local:b.toml", "--cap", "2", "--poll-every", "0.05",
               "--invalid-grace", "0.2s", "--", "sh", "-c",
               'if [ "$JR2_ITEM_ID" = I-0 ]; then printf "[[items]]\\nid = " > b.toml; '
               "else sleep 30; fi")
    assert res.returncode == 4, res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("error: b.toml:")
    db = _store(tmp_path)
    assert not Path(f"{db}-wal").exists()
    assert _rows(db, "SELECT count(*) FROM claims") == [(0,)]


def test_ctrl_c_exits_130_with_the_claims_released(tmp_path: Path) -> None:
    _backlog(tmp_path / "b.toml", 3)
    proc = subprocess.Popen(_argv("work", "local:b.toml", "--cap", "2", "--json", "--",
                                  "sleep", "30"),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)
    try:
        db = wait_for(lambda: next((tmp_path / ".jr2" / "local").glob("*.sqlite"), None))

        def claims() -> int:
            try:
                return int(_rows(db, "SELECT count(*) FROM claims")[0][0])
            except sqlite3.OperationalError:  # the schema is not there yet
                return -1

        wait_for(lambda: claims() == 2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 130, err
    assert json.loads(out)["state"] == "interrupted"
    assert claims() == 0 and not Path(f"{db}-wal").exists()
