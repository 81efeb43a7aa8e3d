"""The dashboard of a `local:` backlog: a markdown file (jr2_sources/trackers/local/board.py),
through the command line as a person uses it: `jr2 dashboard local:b.toml --issue board.md` and
`jr2 work local:b.toml --dashboard board.md`. Rendered and merged as the GitHub dashboard is,
written atomically and only when it changed, a person's text and concurrent edits kept, a
retry tick and an approve tick answered as `jr2 local retry` / `jr2 local approve` would."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clihelp import JR2, env, wait_for
from jr2_core.errors import UsageError
from jr2_sources.capabilities.dashboard.body import END, START, split, ticks
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.readyset import compute_ready_set
from jr2_sources.registry import SourceEnv
from jr2_sources.trackers.local.board import LocalBoard
from jr2_sources.trackers.local.source import LocalConfig, LocalTracker

BACKLOG = '''
[[items]]
id = "T-1"
title = "First"

[[items]]
id = "T-2"
title = "Second"
needs = ["T-1"]
'''

WORKER = r'''
import os, sys
with open(sys.argv[1], "a") as f:
    f.write(f"{os.environ['JR2_ITEM_ID']} {os.environ.get('JR2_GATE_DEPLOY', '-')}\n")
if os.environ["JR2_ITEM_ID"] in os.environ.get("FAIL", "").split(","):
    sys.exit(1)
if os.environ["JR2_ITEM_ID"] in os.environ.get("ASK", "").split(",") and \
        "JR2_GATE_DEPLOY" not in os.environ:
    print("jr2: await-approval deploy ship it?")
    sys.exit(79)
'''


def run(tmp: Path, *args: str, timeout: float = 60, **extra: str
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*JR2, *args], cwd=tmp, capture_output=True, text=True,
                          timeout=timeout, env=env(JR2_STATE_DIR=str(tmp / ".jr2"), **extra))


def dashboard(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run(tmp, "dashboard", "local:b.toml", "--issue", "board.md", *extra)


def work(tmp: Path, *extra: str, **environ: str) -> subprocess.CompletedProcess[str]:
    return run(tmp, "work", "local:b.toml", "--poll-every", "0.1", *extra, "--",
               sys.executable, str(tmp / "worker.py"), str(tmp / "journal"), timeout=60,
               **environ)


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "b.toml").write_text(BACKLOG)
    (tmp_path / "worker.py").write_text(WORKER)
    old = time.time() - 5  # a stable backlog (local reads a file once it is still)
    os.utime(tmp_path / "b.toml", (old, old))
    return tmp_path


def board_text(tmp: Path) -> str:
    return (tmp / "board.md").read_text(encoding="utf-8")


def tick(tmp: Path, kind: str) -> None:
    """A person ticks the first `kind` box of the file (as an editor saves: a new file)."""
    text = board_text(tmp)
    lines = text.splitlines(keepends=True)
    hit = [i for i, line in enumerate(lines) if f"<!-- jr2:{kind} " in line]
    assert hit, text
    lines[hit[0]] = lines[hit[0]].replace("- [ ]", "- [x]", 1)
    (tmp / "board.md").write_text("".join(lines), encoding="utf-8")


def test_renders_the_report_and_keeps_a_persons_text_byte_for_byte(tmp: Path) -> None:
    before, after = "# Our board\r\n\nnotes 🙂\n\n", "\n\nSigned, a person\n"
    (tmp / "board.md").write_bytes((before + START + "\nold\n" + END + after).encode())
    res = dashboard(tmp)
    assert res.returncode == 0 and "jr2: dashboard board.md: written" in res.stderr, res.stderr
    data = (tmp / "board.md").read_bytes().decode()
    assert data.startswith(before + START) and data.endswith(END + after)
    section = split(data).section or ""
    assert "## jr2 dashboard of `local:b.toml`" in section
    assert "### Ready (1)" in section and "| `T-1` | First |" in section
    assert "### Blocked (1)" in section and "waits on `T-1`" in section
    assert "```mermaid" in section and "old" not in section
    assert not (tmp / ".jr2").exists()  # read-only on the backlog: no claim store made
    assert [p.name for p in tmp.iterdir() if p.name.endswith(".jr2-tmp")] == []


def test_a_missing_file_is_created_and_an_unchanged_backlog_is_never_rewritten(
        tmp: Path) -> None:
    assert dashboard(tmp).returncode == 0
    first = (tmp / "board.md").stat()
    for _ in range(2):
        res = dashboard(tmp, "--write-interval", "1s")
        assert res.returncode == 0 and "unchanged" in res.stderr, res.stderr
    again = (tmp / "board.md").stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    assert oct(first.st_mode & 0o777) == oct(0o644)


def test_a_written_file_keeps_its_mode_and_a_symbolic_link_stays_one(tmp: Path) -> None:
    (tmp / "real.md").write_text("mine\n")
    os.chmod(tmp / "real.md", 0o600)
    (tmp / "board.md").symlink_to("real.md")
    assert dashboard(tmp).returncode == 0
    assert (tmp / "board.md").is_symlink()
    assert (tmp / "real.md").read_text().startswith("mine\n\n" + START)
    assert (tmp / "real.md").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("issue", "says"), [
    ("b.toml", "is the backlog file itself"),
    (".", "is a directory"),
    ("nowhere/board.md", "does not exist"),
    ("latin1.md", "not UTF-8 text"),
])
def test_a_path_that_cannot_be_the_dashboard_is_one_line_and_exit_2(
        tmp: Path, issue: str, says: str) -> None:
    (tmp / "latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    for res in (run(tmp, "dashboard", "local:b.toml", "--issue", issue),
                work(tmp, "--dashboard", issue)):
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and "Traceback" not in res.stderr, lines
    assert not (tmp / "journal").exists()  # nothing ran


def test_the_interval_floor_is_the_local_ones(tmp: Path) -> None:
    res = dashboard(tmp, "--write-interval", "0.5s")
    assert res.returncode == 2 and "at least 1s" in res.stderr and "GitHub" not in res.stderr
    assert dashboard(tmp, "--write-interval", "2s").returncode == 0


def test_a_retry_tick_clears_the_failure_and_the_next_work_runs_the_item(tmp: Path) -> None:
    res = work(tmp, FAIL="T-1")
    assert res.returncode == 1, res.stderr
    assert dashboard(tmp).returncode == 0
    assert "### Failed (1)" in board_text(tmp)
    tick(tmp, "retry")
    res = dashboard(tmp, "--write-interval", "1s")
    assert res.returncode == 0 and "retried T-1" in res.stderr, res.stderr
    section = split(board_text(tmp)).section or ""
    assert "### Failed (0)" in section and "### Ready (1)" in section
    assert [t for t in ticks(section) if t.ticked] == []
    res = work(tmp)
    assert res.returncode == 0, res.stderr
    assert (tmp / "journal").read_text().split("\n").count("T-1 -") == 2


def test_an_approve_tick_answers_the_gate_and_the_next_work_runs_it_approved(
        tmp: Path) -> None:
    res = work(tmp, "--gate", "deploy", ASK="T-1")
    assert res.returncode == 3 and "awaits approval of gate deploy" in res.stderr, res.stderr
    assert dashboard(tmp).returncode == 0
    assert "### Awaiting approval (1)" in board_text(tmp)
    tick(tmp, "approve")
    res = dashboard(tmp, "--write-interval", "1s")
    assert res.returncode == 0 and "approved deploy for T-1" in res.stderr, res.stderr
    assert "### Awaiting approval (0)" in board_text(tmp)
    res = work(tmp, "--gate", "deploy", ASK="T-1")
    assert res.returncode == 0, res.stderr
    runs = (tmp / "journal").read_text().splitlines()
    assert runs[0] == "T-1 -" and "T-1 approved" in runs[1:], runs


def test_work_keeps_the_file_up_to_date_and_writes_the_final_state(tmp: Path) -> None:
    (tmp / "board.md").write_text("Team notes.\n")
    res = work(tmp, "--dashboard", "board.md", "--dashboard-interval", "1s")
    assert res.returncode == 0, res.stderr
    text = board_text(tmp)
    assert text.startswith("Team notes.\n\n" + START)
    assert "**0 ready, 0 in progress" in text and "(2 done)" in text, text


def test_a_retry_tick_during_a_waiting_run_is_picked_up_by_that_run(tmp: Path) -> None:
    """`jr2 work --wait --dashboard`: the tick is answered through the pool's own claim store,
    and the pool offers the item again in the same run (not after its next full reading)."""
    assert work(tmp, FAIL="T-1").returncode == 1
    proc = subprocess.Popen(
        [*JR2, "work", "local:b.toml", "--poll-every", "0.1", "--wait", "--dashboard",
         "board.md", "--dashboard-interval", "1s", "--", sys.executable,
         str(tmp / "worker.py"), str(tmp / "journal")],
        cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=env(JR2_STATE_DIR=str(tmp / ".jr2")))
    try:
        wait_for(lambda: (tmp / "board.md").exists() and "<!-- jr2:retry " in board_text(tmp),
                 timeout=30)
        tick(tmp, "retry")
        wait_for(lambda: (tmp / "journal").read_text().split("\n").count("T-1 -") == 2,
                 timeout=30)
        wait_for(lambda: "T-2 -" in (tmp / "journal").read_text(), timeout=30)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_jr2_ready_writes_nothing(tmp: Path) -> None:
    assert work(tmp, FAIL="T-1").returncode == 1
    assert dashboard(tmp).returncode == 0
    tick(tmp, "retry")
    before = (tmp / "board.md").stat()
    store = sorted((tmp / ".jr2").rglob("*"))
    stamps = {p: p.stat().st_mtime_ns for p in store if p.is_file()}
    res = run(tmp, "ready", "local:b.toml", "--json")
    assert res.returncode == 0, res.stderr
    after = (tmp / "board.md").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted((tmp / ".jr2").rglob("*")) == store
    assert {p: p.stat().st_mtime_ns for p in store if p.is_file()
            and not p.name.endswith(("-wal", "-shm"))} == {
        p: t for p, t in stamps.items() if not p.name.endswith(("-wal", "-shm"))}
    assert '"failed"' in res.stdout  # still failed: the tick is the dashboard's to act on


def test_a_persons_edit_during_dashboard_updates_is_never_lost(tmp: Path) -> None:
    """A person saves the file again and again (each save a read, an added line and an atomic
    write, as editors do) while `jr2 dashboard --every` rewrites its section as the backlog
    grows: every line the person added is still in the file at the end."""
    (tmp / "board.md").write_text("Notes:\n")
    proc = subprocess.Popen(
        [*JR2, "dashboard", "local:b.toml", "--issue", "board.md", "--every", "0.2s",
         "--write-interval", "1s"], cwd=tmp, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, env=env(JR2_STATE_DIR=str(tmp / ".jr2")))
    try:
        wait_for(lambda: START in board_text(tmp), timeout=30)
        for n in range(40):
            text = board_text(tmp)
            head, sep, rest = text.partition(START)
            tmpfile = tmp / ".person-save"
            tmpfile.write_text(f"{head.rstrip()}\nnote {n}\n\n{sep}{rest}", encoding="utf-8")
            os.replace(tmpfile, tmp / "board.md")
            if n % 8 == 0:  # the backlog changes: the section is due for a rewrite
                with (tmp / "b.toml").open("a") as f:
                    f.write(f'\n[[items]]\nid = "N-{n}"\ntitle = "New {n}"\n')
            time.sleep(0.1)
        wait_for(lambda: "N-32" in board_text(tmp), timeout=30)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = board_text(tmp)
    assert all(f"note {n}\n" in text for n in range(40)), text
    assert text.count(START) == 1 and text.count(END) == 1


# -- the compare-and-set of one write (no timing involved) ---------------------------------------


def _adapter(tmp: Path) -> LocalTracker:
    config = LocalConfig(target=str(tmp / "b.toml"))
    return LocalTracker(config, SourceEnv(tmp / ".jr2", read_only=True))


class SavedJustBeforeTheRename(LocalBoard):
    """A board whose first write finds that a person saved after the last read (their save
    lands between jr2's re-read and its rename)."""

    def write(self, body: str) -> None:
        if not getattr(self, "saved", False):
            self.saved = True
            self.path.write_text(self.path.read_text() + "a person's late line\n")
        super().write(body)


def test_a_save_landing_between_the_reread_and_the_rename_starts_the_update_over(
        tmp: Path) -> None:
    (tmp / "board.md").write_text("Notes:\n")
    adapter = _adapter(tmp)
    board = SavedJustBeforeTheRename(adapter, str(tmp / "board.md"))
    dash = Dashboard(board, interval=1.0)
    step = dash.update(lambda: compute_ready_set(adapter.snapshot(), now=datetime.now(UTC)))
    assert step.wrote, step
    text = board_text(tmp)
    assert text.startswith("Notes:\na person's late line\n\n" + START), text
    assert dash.writes == 1
    adapter.close()


def test_the_backlog_file_and_a_section_built_to_the_local_bound(tmp: Path) -> None:
    adapter = _adapter(tmp)
    with pytest.raises(UsageError, match="backlog file itself"):
        adapter.dashboard(str(tmp / "b.toml")).check()
    assert Dashboard(adapter.dashboard(str(tmp / "x.md"))).limit == 1_048_576
    adapter.close()

