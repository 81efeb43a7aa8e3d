"""jr2-gitlab has no feedback loop (it does not declare `TakesFeedback`): `jr2 work gitlab:...
--on-feedback rerun` is one usage line (exit 2) naming the source, sent before any request,
and the option is listed by neither `jr2 work gitlab: --help` nor accepted by `jr2 ready`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from fake_gitlab import TOKEN, FakeGitLab

from jr2_core.cli import main


def jr2(fake: FakeGitLab, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITLAB_URL": fake.url, "GITLAB_TOKEN": TOKEN,
           "JR2_STATE_DIR": str(tmp_path / ".jr2")}
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)


def test_rerun_on_feedback_is_one_usage_line_and_asks_gitlab_nothing(
        fake: FakeGitLab, tmp_path: Path) -> None:
    fake.add_issue("group/project", "Change", labels=["agent"])
    ran = tmp_path / "ran"
    res = jr2(fake, tmp_path, "work", "gitlab:group/project", "--label", "agent",
              "--on-feedback", "rerun", "--max-attempts", "3", "--",
              sys.executable, "-c", f"open({str(ran)!r}, 'w')")
    assert res.returncode == 2, res.stderr
    [line] = res.stderr.strip().splitlines()
    assert line == ("error: gitlab:group/project: this source cannot send an item back on "
                    "review feedback (drop --on-feedback rerun)")
    assert fake.requests == [] and not ran.exists()


def test_nothing_on_feedback_runs_as_without_it(fake: FakeGitLab, tmp_path: Path) -> None:
    iid = fake.add_issue("group/project", "Change", labels=["agent"])
    res = jr2(fake, tmp_path, "work", "gitlab:group/project", "--label", "agent",
              "--write-spacing", "0.001", "--on-feedback", "nothing", "--", "true")
    assert res.returncode == 0, res.stderr
    assert fake.issue("group/project", iid)["state"] == "closed"


def test_the_option_is_not_listed_for_gitlab() -> None:
    res = CliRunner().invoke(main, ["work", "gitlab:", "--help"])
    assert res.exit_code == 0, res.output
    assert "--on-feedback" not in res.output and "--max-attempts" in res.output
    res = CliRunner().invoke(main, ["ready", "gitlab:group/project", "--on-feedback", "rerun"])
    assert res.exit_code == 2 and "no such option --on-feedback" in res.output
