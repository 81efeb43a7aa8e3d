"""`jr2 work local:` imports no tracker client on its way (PyGithub, jira, requests), from the
command line to the last command's exit, in a process with every plugin of the development
environment installed. The time itself is measured by bench/cli_start.py and
bench/work_drain.py.

Also here: the run's results are plain data and serialise as the models did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("requests", "urllib3", "jira", "github")

_RUN = """
import json, sys
from jr2_core.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"modules": sorted(sys.modules), "code": code}}), file=sys.stderr)
"""


def _run(tmp_path: Path, argv: list[str]) -> tuple[set[str], int, str]:
    out = subprocess.run([sys.executable, "-c", _RUN.format(argv=argv)], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    last = json.loads(out.stderr.strip().splitlines()[-1])
    return set(last["modules"]), last["code"], out.stdout


def _backlog(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "T-1"\ntitle = "one"\n\n'
        '[[items]]\nid = "T-2"\ntitle = "two"\nneeds = ["T-1"]\nlabels = ["x"]\n'
        'created = 2026-01-02T03:04:05\n')


@pytest.mark.parametrize("options", [[], ["--label", "x", "--poll-every", "1s"]])
def test_jr2_work_local_imports_no_tracker_client(tmp_path: Path, options: list[str]) -> None:
    _backlog(tmp_path)
    if options:  # only T-2 carries the label; T-1 (outside the scope) still blocks it
        (tmp_path / "b.toml").write_text((tmp_path / "b.toml").read_text()
                                         .replace('title = "one"\n', 'title = "one"\n'
                                                  'status = "done"\n'))
    loaded, code, stdout = _run(tmp_path, ["work", "local:b.toml", *options, "--cap", "2",
                                           "--state", str(tmp_path / "state"), "--json",
                                           "--", "true"])
    assert code == 0
    assert "jr2_sources.trackers.local.source" in loaded  # it did run the local source
    assert "sqlite3" in loaded and "asyncio" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []
    out = json.loads(stdout)
    assert out["state"] == "done"
    assert sorted(out["output"]["items"]) == (["T-2"] if options else ["T-1", "T-2"])


def test_a_backlog_the_models_refuse_is_bad_usage(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "T-1"\ntitle = "one"\npriority = "2"\n')
    _, code, _ = _run(tmp_path, ["work", "local:b.toml", "--state",
                                 str(tmp_path / "state"), "--", "true"])
    assert code == 2


def test_a_bad_option_is_worded_by_the_model(tmp_path: Path) -> None:
    _backlog(tmp_path)
    out = subprocess.run([sys.executable, "-m", "jr2_core", "work", "local:b.toml",
                          "--poll-every", "soon", "--state", str(tmp_path / "s"), "--", "true"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        "error: local: --poll-every: 'soon' is not a duration like 30s, 10m or 1h")


def test_run_results_are_plain_data_that_serialise_as_the_models_did() -> None:
    from datetime import UTC, datetime

    from jr2_core import Failure, FailureInfo, GateInfo, RunOutput, RunResult

    out = RunOutput(status="drained", items={"a": {"n": 1}},
                    failures={"b": FailureInfo("boom", {"exit_code": 1})}, attempts={"a": 1})
    res = RunResult(run_id="r-1", state="failed",
                    failure=Failure("1 of 2 items failed", detail=out).to_json())
    assert res.to_json() == {
        "run_id": "r-1", "state": "failed", "output": None,
        "failure": {"reason": "1 of 2 items failed", "detail": {
            "status": "drained", "items": {"a": {"n": 1}},
            "failures": {"b": {"reason": "boom", "detail": {"exit_code": 1}}},
            "cancelled": {}, "attempts": {"a": 1}}}}
    gate = GateInfo(id="T-1.review", accepts=["approve"],
                    opened_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), meta={"t": "T-1"})
    assert gate.to_json() == {"id": "T-1.review", "accepts": ["approve"], "meta": {"t": "T-1"},
                              "opened_at": "2026-01-02T03:04:05Z"}
