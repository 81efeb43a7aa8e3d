"""`jr2 ready` on the local source: formats, read-only, options, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clihelp import ROOT, jr2, jr2_here

SEED = """
[[items]]
id = "T-1"
title = "Trim the name."
[[items]]
id = "T-2"
title = "Add a --version flag."
[[items]]
id = "T-3"
title = "Document the two changes."
needs = ["T-1", "T-2"]
[[items]]
id = "T-4"
title = "Remove the old flag."
needs = ["T-9"]
labels = ["cleanup"]
[[items]]
id = "C-1"
title = "One half of a cycle."
needs = ["C-2"]
[[items]]
id = "C-2"
title = "The other half."
needs = ["C-1"]
"""


@pytest.fixture
def backlog(tmp_path: Path) -> Path:
    path = tmp_path / "backlog.toml"
    path.write_text(SEED)
    return path


def test_ready_json_is_the_documented_contract(tmp_path: Path, backlog: Path) -> None:
    res = jr2_here("ready", f"local:{backlog.name}", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["schema_version"] == 1
    assert [e["id"] for e in data["ready"]] == ["T-1", "T-2"]
    blocked = {e["id"]: e["reasons"] for e in data["blocked"]}
    assert blocked["T-4"] == [{"kind": "missing_blocker", "ref": "T-9", "state": "missing"}]
    assert {"kind": "open_blocker", "ref": "T-1", "held_by": None} in blocked["T-3"]
    assert data["cycles"] == [["C-1", "C-2"]]
    assert data["counts"] == {"ready": 2, "blocked": 4, "claimed": 0, "done": 0}


def test_ready_creates_no_state_and_does_not_touch_the_backlog(tmp_path: Path,
                                                              backlog: Path) -> None:
    before = backlog.read_bytes()
    for fmt in ("table", "json", "markdown", "mermaid", "dot"):
        assert jr2_here("ready", f"local:{backlog.name}", "--format", fmt,
                   cwd=tmp_path).returncode == 0
    assert not (tmp_path / ".jr2").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backlog.toml"]
    assert backlog.read_bytes() == before


def test_ready_markdown_has_a_mermaid_graph(tmp_path: Path, backlog: Path) -> None:
    res = jr2_here("ready", f"local:{backlog.name}", "--format", "markdown", cwd=tmp_path)
    assert "```mermaid" in res.stdout and "T-9" in res.stdout


def test_ready_explain_walks_to_the_root(tmp_path: Path, backlog: Path) -> None:
    res = jr2_here("ready", f"local:{backlog.name}", "--explain", "T-3", cwd=tmp_path)
    assert res.returncode == 0 and "T-1" in res.stdout and "T-2" in res.stdout
    res = jr2_here("ready", f"local:{backlog.name}", "--explain", "NOPE", cwd=tmp_path)
    assert res.returncode == 2 and "'NOPE' is not an open item" in res.stderr


def test_fail_on_deadlock_exits_3_only_when_nothing_can_run(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_text('[[items]]\nid = "A"\ntitle = "a"\nneeds = ["Z"]\n')
    assert jr2_here("ready", "local:b.toml", "--fail-on", "deadlock", cwd=tmp_path).returncode == 3
    path.write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    assert jr2_here("ready", "local:b.toml", "--fail-on", "deadlock", cwd=tmp_path).returncode == 0


def test_done_counts_only_the_items_a_label_picks(tmp_path: Path, backlog: Path) -> None:
    backlog.write_text(SEED + '[[items]]\nid = "D-1"\ntitle = "d"\nstatus = "done"\n'
                       '[[items]]\nid = "D-2"\ntitle = "d"\nstatus = "done"\n'
                       'labels = ["cleanup"]\n')
    every = json.loads(jr2_here("ready", f"local:{backlog.name}", "--json", cwd=tmp_path).stdout)
    res = jr2_here("ready", f"local:{backlog.name}", "--label", "cleanup", "--json", cwd=tmp_path)
    assert every["counts"]["done"] == 2
    assert json.loads(res.stdout)["counts"] == {"ready": 0, "blocked": 1, "claimed": 0, "done": 1}


def test_source_options_are_validated_by_the_kinds_model(tmp_path: Path, backlog: Path) -> None:
    res = jr2_here("ready", f"local:{backlog.name}", "--label", "cleanup", "--json", cwd=tmp_path)
    assert [e["id"] for e in json.loads(res.stdout)["blocked"]] == ["T-4"]
    res = jr2_here("ready", f"local:{backlog.name}", "--colour", "red", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: local: no such option --colour (options: --label")
    res = jr2_here("ready", f"local:{backlog.name}", "--poll-every", "soon", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr == (
        "error: local: --poll-every: 'soon' is not a duration like 30s, 10m or 1h\n")


def test_kind_help_lists_the_options_of_a_kind(tmp_path: Path) -> None:
    res = jr2_here("ready", "local:", "--help", cwd=tmp_path)
    assert res.returncode == 0 and "--children-block / --no-children-block" in res.stdout


def test_a_kind_that_declares_target_again_changes_its_target_help() -> None:
    from pydantic import Field

    from jr2_sources import SourceKind, Tracker
    from jr2_sources.registry import kind_help

    class Generic(Tracker.Options):
        pass

    class Acme(Tracker.Options):
        target: str = Field(min_length=1, description="the Acme server's URL")

    assert "  TARGET  what to read (a file, a repository, a URL)" in kind_help(
        SourceKind("generic", Generic, lambda c, e: None))
    shown = kind_help(SourceKind("acme", Acme, lambda c, e: None)).splitlines()
    assert "  TARGET  the Acme server's URL" in shown and "  --target TEXT" not in shown


def test_an_unknown_kind_lists_the_kinds(tmp_path: Path) -> None:
    res = jr2_here("ready", "gitlub:x/y", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("error: unknown source kind 'gitlub' (kinds: ")
    assert "local" in res.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[items]]\nid = "A"\ntitle = \n', "b.toml:3:"),
        ('[[items]]\nid = "A"\ntitle = "a"\nnedds = ["B"]\n', "unknown key 'nedds'"),
        ('[[items]]\nid = "A"\ntitle = "a"\n[[items]]\nid = "A"\ntitle = "b"\n',
         'duplicate id "A"'),
        ('[[items]]\nid = "A"\ntitle = "a"\nneeds = ["A"]\n', "needs itself"),
    ],
)
def test_a_bad_backlog_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "b.toml").write_text(text)
    res = jr2_here("ready", "local:b.toml", cwd=tmp_path)
    assert res.returncode == 2 and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_a_missing_backlog_is_one_line(tmp_path: Path) -> None:
    res = jr2_here("ready", "local:nope.toml", cwd=tmp_path)
    assert res.returncode == 2 and "nope.toml: no such file" in res.stderr


@pytest.mark.parametrize("command", ["ready", "work"])
def test_a_pipe_or_a_device_is_refused_in_one_line_not_read(tmp_path: Path, command: str) -> None:
    """`local:FIFO` and `local:/dev/zero` would block or never end: refused at once."""
    import os

    os.mkfifo(tmp_path / "pipe.toml")
    for target in ("pipe.toml", "/dev/zero"):
        args = [command, f"local:{target}", *(["--", "true"] if command == "work" else [])]
        res = jr2(*args, cwd=tmp_path, timeout=20)
        assert res.returncode == 2, res.stderr
        assert res.stderr.strip() == (f"error: {target}: not a regular file (a pipe, device or "
                                      "socket); a backlog is a .toml or .json file")


def test_help_and_local_ready_do_not_import_tracker_clients(tmp_path: Path,
                                                            backlog: Path) -> None:
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['jr2'] + sys.argv[1:]\n"
        "try:\n"
        "    runpy.run_module('jr2_core', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('github', 'jira'))\n"
        "print('IMPORTED', bad, file=sys.stderr)\n"
    )
    for args in (["--help"], ["ready", f"local:{backlog.name}"]):
        res = subprocess.run([sys.executable, "-c", probe, *args], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
        assert "IMPORTED []" in res.stderr, res.stderr
    assert ROOT.exists()


def test_an_item_outside_the_label_whose_claim_expired_is_not_listed(tmp_path: Path) -> None:
    """A crashed pool over `--label b` left a claim on B; once it expired, `jr2 ready --label a`
    shows A only (B is listed beside the filter only while it carries a mark)."""
    import time

    from jr2_sources.cli.source import open_source
    from jr2_sources.readyset import SnapshotItem

    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\nlabels = ["a"]\n'
                                     '[[items]]\nid = "B"\ntitle = "b"\nlabels = ["b"]\n')
    state = tmp_path / "state"
    pool, _ = open_source(f"local:{tmp_path / 'b.toml'}", ["--label", "b"], state,
                          read_only=False)
    assert pool.claim(SnapshotItem("B", labels=["b"]), "dead@h", 600.0)
    listed = ["--label", "a", "--json", "--state", str(state)]
    held = json.loads(jr2_here("ready", "local:b.toml", *listed, cwd=tmp_path).stdout)
    assert [e["id"] for e in held["claimed"]] == ["B"]  # the mark is shown while it holds
    # its last renewal was short (the pool crashed after it): the claim expires now, however
    # long the first `jr2 ready` took on a busy machine
    assert pool.renew("B", "dead@h", 0.1)
    time.sleep(0.2)
    res = jr2_here("ready", "local:b.toml", *listed, cwd=tmp_path)
    out = json.loads(res.stdout)
    assert [e["id"] for e in out["ready"]] == ["A"] and out["claimed"] == []
