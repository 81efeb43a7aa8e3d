"""`jr2 work --global-cap / --exclusive-by` at the command line: a comment tracker asks for its
coordination issue at start in one line (exit 2, nothing read or claimed); bad specs too. (A
tracker that cannot keep the limits at all: tests/sources/test_limits.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

JR2 = [sys.executable, "-m", "jr2_core"]
OFFLINE = {"GITHUB_TOKEN": "x", "GITHUB_API_URL": "http://127.0.0.1:1", "GITLAB_TOKEN": "x",
           "JIRA_EMAIL": "a@example.com", "JIRA_API_TOKEN": "x"}


@pytest.mark.parametrize("source", [["github:o/r"], ["gitlab:g/p"],
                                    ["jira:https://x.atlassian.net", "--jql", "project = X"]])
@pytest.mark.parametrize("limit", [["--global-cap", "2"], ["--exclusive-by", "label:area/*"]])
def test_a_comment_tracker_asks_for_its_coordination_issue_in_one_line(
        tmp_path: Path, source: list[str], limit: list[str]) -> None:
    out = subprocess.run([*JR2, "work", *source, *limit, "--", "true"],
                         cwd=tmp_path,
                         env={**os.environ, **OFFLINE, "JR2_STATE_DIR": str(tmp_path / "s")},
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr.strip().count("\n")) == (2, 0)
    assert "need --control-issue ID here" in out.stderr


@pytest.mark.parametrize("command", ["ready", "work"])
def test_a_bad_exclusive_by_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    rest = ["--", "true"] if command == "work" else []
    out = subprocess.run([*JR2, command, "local:b.toml", "--exclusive-by", "area/*", *rest],
                         cwd=tmp_path, env={**os.environ, "JR2_STATE_DIR": str(tmp_path / "s")},
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr.strip().count("\n")) == (2, 0)
    assert "--exclusive-by 'area/*': expected label:GLOB" in out.stderr


def test_a_deleted_coordination_issue_is_said_as_such_during_the_run_and_at_start(
        tmp_path: Path) -> None:
    """The coordination issue is not an item: its refusal is never "skipped". Deleted while
    the pool runs, the source cannot keep its limits: the run ends with that error (exit 4);
    at start it is bad input (exit 2, one line)."""
    from clihelp import wait_for
    from jr2_sources.testing.fakes.github_server import FakeGitHub

    with FakeGitHub() as fake:
        control = fake.add_issue("o/r", "control")
        fake.add_issue("o/r", "one", labels=["agent"])
        fake.add_issue("o/r", "two", labels=["agent"])
        env = {**os.environ, "GITHUB_API_URL": fake.url, "GITHUB_TOKEN": "x",
               "JR2_STATE_DIR": str(tmp_path / "s")}
        argv = [*JR2, "work", "github:o/r", "--label", "agent", "--write-spacing", "0.001",
                "--global-cap", "1", "--control-issue", f"o/r#{control}", "--"]
        started = tmp_path / "started"
        proc = subprocess.Popen([*argv, "sh", "-c", f"touch {started}; sleep 1"], cwd=tmp_path,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            wait_for(lambda: started.exists() or proc.poll() is not None, timeout=30)
            fake.delete_issue("o/r", control)
            _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        start = subprocess.run([*argv, "true"], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=60)
    where = f"the coordination issue o/r#{control} (from --control-issue)"
    assert proc.returncode == 4, err
    assert f"{where}: o/r#{control} was deleted (HTTP 410)" in err and "skipped" not in err
    assert start.returncode == 2, start.stderr
    [line] = start.stderr.splitlines()
    assert line == f"error: github:o/r: {where}: o/r#{control} was deleted (HTTP 410)"
