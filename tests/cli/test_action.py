"""The GitHub Action (action.yml) run offline: its steps with the inputs substituted, in a
GitHub-like environment (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_PATH, GITHUB_API_URL, ...),
against the fake GitHub. Checks the job summary, the `exit-code` output and the step's exit code.

Design note: a composite action's steps are `run:` scripts with `${{ ... }}` expressions; this
test substitutes the expressions action.yml uses (`inputs.*`, `github.*`) the way the runner
does and runs each step with `bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`,
per GitHub's workflow syntax docs), adding GITHUB_PATH lines to PATH between steps. The first
step installs jr2 from the action's checkout, which needs the package index for jr2's
dependencies: the default test puts this checkout's jr2 on PATH in its place, and the
`needs_index` test runs the install step too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from jr2_sources.testing.fakes.github_server import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
TOKEN = "ghs_action_token_123"
_EXPR = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def substitute(text: str, context: dict[str, Any]) -> str:
    """Replace `${{ a.b }}` with its value in `context`; an unknown name is a test error."""

    def value(m: re.Match[str]) -> str:
        node: Any = context
        for part in m.group(1).split("."):
            node = node[part]
        return str(node)

    return _EXPR.sub(value, text)


def run_action(inputs: dict[str, str], tmp_path: Path, fake: FakeGitHub, *,
               install: bool = False) -> tuple[int, Path, Path]:
    """Run the action's steps; (exit code of the last step run, summary file, output file)."""
    given = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    github = {"action_path": str(ROOT), "token": TOKEN, "repository": "o/r"}
    given = {k: substitute(v, {"github": github}) for k, v in given.items()}
    given.update(inputs)
    context = {"inputs": given, "github": github}
    files = {n: tmp_path / n.lower() for n in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT",
                                                "GITHUB_PATH", "GITHUB_ENV")}
    for f in files.values():
        f.touch()
    (tmp_path / "runner").mkdir()
    base = {k: v for k, v in os.environ.items()
            if not re.search(r"TOKEN|JR2_|GITHUB_|PYTHONPATH", k)}
    base.update({k: str(v) for k, v in files.items()})
    base.update(GITHUB_API_URL=fake.url, GITHUB_REPOSITORY="o/r", GITHUB_ACTION_PATH=str(ROOT),
                GITHUB_WORKSPACE=str(tmp_path), RUNNER_TEMP=str(tmp_path / "runner"),
                GITHUB_ACTIONS="true", JR2_STATE_DIR=str(tmp_path / ".jr2"))
    path = [base["PATH"]]
    steps = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite" and "Install" in steps[0]["name"]
    if not install:
        steps = steps[1:]
        path.insert(0, str(Path(sys.executable).parent))  # this checkout's jr2 instead
    rc = 0
    for step in steps:
        env = dict(base, PATH=os.pathsep.join(path))
        env.update({k: substitute(str(v), context) for k, v in step.get("env", {}).items()})
        assert step["shell"] == "bash"
        res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                              substitute(step["run"], context)], env=env, cwd=tmp_path,
                             timeout=300)
        rc = res.returncode
        path[:0] = reversed(files["GITHUB_PATH"].read_text().split())
        if rc != 0:
            break
    return rc, files["GITHUB_STEP_SUMMARY"], files["GITHUB_OUTPUT"]


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    server = FakeGitHub(tokens={TOKEN}).start()
    server.add_issue("o/r", "Ready one", labels=["agent"])
    server.add_issue("o/r", "Blocked by one", labels=["agent"])
    server.add_dependency("o/r", 2, 1)
    try:
        yield server
    finally:
        server.stop()


def test_ready_writes_the_ready_set_to_the_job_summary(fake: FakeGitHub, tmp_path: Path) -> None:
    rc, summary, output = run_action({"options": "--label agent"}, tmp_path, fake)
    assert rc == 0
    text = summary.read_text()
    assert "o/r#1" in text and "o/r#2" in text and "```mermaid" in text
    assert output.read_text().splitlines() == ["exit-code=0"]
    assert not [r for r in fake.requests() if r["method"] != "GET"]  # read-only


def test_work_runs_the_command_and_passes_its_exit_code_through(fake: FakeGitHub,
                                                                tmp_path: Path) -> None:
    run = 'echo "$JR2_ITEM_ID ${GH_TOKEN:-no-token}" >> ran.txt; test "$JR2_ITEM_ID" != "o/r#2"'
    rc, summary, output = run_action(
        {"command": "work", "options": "--label agent --write-spacing 0.001 --poll-every 0.2",
         "work-options": "--cap 2", "run": run}, tmp_path, fake)
    assert rc == 1  # o/r#2 failed: jr2 work exits 1, and so does the step
    assert output.read_text().splitlines() == ["exit-code=1"]
    assert (tmp_path / "ran.txt").read_text().splitlines() == ["o/r#1 no-token",
                                                              "o/r#2 no-token"]
    assert fake.issue("o/r", 1).state == "closed"
    after = summary.read_text()  # the Ready-set after the run
    assert "**0 ready, 1 blocked, 0 claimed**" in after and "last attempt failed" in after


def test_bad_input_is_one_line_and_exit_code_2(fake: FakeGitHub, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rc, _, output = run_action({"command": "work"}, tmp_path / "a", fake)  # no `run`
    assert rc == 2 and output.read_text().splitlines() == ["exit-code=2"]
    rc, _, output = run_action({"command": "wrok"}, tmp_path / "b", fake)
    assert rc == 2 and output.read_text().splitlines() == ["exit-code=2"]


def test_a_wrong_token_fails_the_step(fake: FakeGitHub, tmp_path: Path) -> None:
    rc, summary, _ = run_action({"token": "ghs_wrong_token_456"}, tmp_path, fake)
    assert rc == 4  # the source cannot read its tracker
    assert summary.read_text() == ""


@pytest.mark.needs_index
def test_the_install_step_installs_jr2_from_the_checkout(fake: FakeGitHub,
                                                        tmp_path: Path) -> None:
    rc, summary, _ = run_action({"options": "--label agent"}, tmp_path, fake, install=True)
    assert rc == 0 and "o/r#1" in summary.read_text()
    assert (tmp_path / "runner" / "jr2-venv" / "bin" / "jr2").is_file()
