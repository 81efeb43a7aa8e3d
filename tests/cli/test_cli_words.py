"""The CLI reads well: no internal gates in the progress, run endings in words, counts without
an unknown `done`, `--explain` on a done item, option metavars and defaults in words, the work
usage line, `--quiet`, and pydantic's errors in jr2's words."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from clihelp import jr2, jr2_here
from jr2_sources.cli.work import run_ending
from jr2_sources.readyset import BlockerRef, Snapshot, SnapshotItem, compute_ready_set
from jr2_sources.report import explain, render_text

CHAIN = ('[[items]]\nid = "A"\ntitle = "a"\n[[items]]\nid = "B"\ntitle = "b"\nneeds = ["A"]\n'
         '[[items]]\nid = "D"\ntitle = "d"\nstatus = "done"\n')


def test_a_work_run_shows_no_internal_gate_and_ends_in_words(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(CHAIN)
    res = jr2("work", "local:b.toml", "--", "sh", "-c", 'test "$JR2_ITEM_ID" = B', cwd=tmp_path)
    assert res.returncode == 1
    assert "gate open" not in res.stderr
    assert " failed and deadlocked: 0 done, 1 failed, 0 cancelled" in res.stderr
    assert "(failed)" not in res.stderr and "deadlocked (" not in res.stderr


def test_run_endings() -> None:
    assert run_ending("done", "drained") == "drained"
    assert run_ending("done", "deadlocked") == "deadlocked"
    assert run_ending("failed", "drained") == "failed"
    assert run_ending("error", "error") == "ended with an error"
    assert run_ending("interrupted", "interrupted") == "interrupted"


def test_quiet_prints_only_failures(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(CHAIN)
    res = jr2("work", "local:b.toml", "--quiet", "--", "false", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stderr.splitlines() == ["jr2:   failed A: exit code 1"]
    ok = jr2("work", "local:b.toml", "-q", "--", "true", cwd=tmp_path / "..")
    assert ok.returncode == 2  # no such backlog there: an error still shows
    assert ok.stderr.startswith("error: ")


def _rs(done_count: int | None) -> object:
    snap = Snapshot("s", [SnapshotItem("A", blockers=[BlockerRef("D", "done")])],
                    done_count=done_count)
    return compute_ready_set(snap, now=datetime.now(UTC))


def test_counts_leave_out_done_when_the_source_cannot_say() -> None:
    assert render_text(_rs(None)).splitlines()[-1] == "1 ready, 0 blocked, 0 claimed"  # type: ignore[arg-type]
    assert render_text(_rs(3)).splitlines()[-1] == "1 ready, 0 blocked, 0 claimed, 3 done"  # type: ignore[arg-type]


def test_explain_a_done_item(tmp_path: Path) -> None:
    assert explain(_rs(1), "D") == "D: done"  # type: ignore[arg-type]
    (tmp_path / "b.toml").write_text(CHAIN)
    res = jr2_here("ready", "local:b.toml", "--explain", "D", cwd=tmp_path)
    assert res.returncode == 2
    assert "'D' is not an open item of local:b.toml" in res.stderr and "done" in res.stderr


def test_kind_options_show_metavars_and_defaults_in_words(tmp_path: Path) -> None:
    out = jr2_here("ready", "github:", "--help", cwd=tmp_path).stdout
    assert "--poll-every DURATION" in out and "[default: 1m]" in out
    assert "--retry-budget DURATION" in out and "[default: 5m]" in out
    assert "--on-success close|label|nothing" in out
    assert "[default: None]" not in out and "300.0" not in out and " VALUE" not in out


def test_the_work_usage_line_names_the_command(tmp_path: Path) -> None:
    out = jr2_here("work", "--help", cwd=tmp_path).stdout
    assert out.startswith("Usage: jr2 work [OPTIONS] SOURCE [KIND OPTIONS] -- COMMAND [ARGS]...")


def test_config_errors_are_in_jr2s_words(tmp_path: Path) -> None:
    res = jr2_here("ready", "github:o/r", "--on-success", "shut", cwd=tmp_path)
    assert res.stderr == ("error: github: --on-success: expected 'close', 'label', 'nothing' "
                          "or 'review', not 'shut'\n")
    (tmp_path / "jr2.toml").write_text('[sources.w]\nkind = "local"\ntarget = "b"\nfoo = 1\n')
    res = jr2_here("ready", "w", cwd=tmp_path)
    assert res.stderr.startswith("error: jr2.toml: source 'w': foo: no such key (keys: label,")
    assert "Extra inputs" not in res.stderr
