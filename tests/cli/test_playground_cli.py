"""`jr2 playground`: served from the command line, it prints shell to export and serves until
a signal (no traceback); `jr2 playground act` changes it as a person would, over HTTP, and only
ever talks to a loopback playground."""

from __future__ import annotations

import signal
import socket
import subprocess
from pathlib import Path

import pytest
import requests

from clihelp import env, jr2, popen

WORLD = """
[people]
alice = "write"

[[repos]]
name = "octo/app"

[[issues]]
title = "Parser"
labels = ["agent"]

[[pulls]]
head = "jr2/issue-1"
fixes = [1]
checks = "success"
"""


def _serve(tmp_path: Path, kind: str = "github",
           world: str = WORLD) -> tuple[subprocess.Popen[str], dict[str, str]]:
    (tmp_path / "world.toml").write_text(world, encoding="utf-8")
    proc = popen("playground", kind, "--seed", "world.toml", cwd=tmp_path)
    assert proc.stdout is not None
    lines = []
    while not (lines and lines[-1].startswith("export ") and "TOKEN" in lines[-1]):
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "ended"
        lines.append(line.rstrip("\n"))
    assert all(ln.startswith(("# ", "export ")) for ln in lines)  # shell a reader can source
    exports = dict(ln.removeprefix("export ").split("=", 1) for ln in lines
                   if ln.startswith("export "))
    return proc, exports


def test_serves_until_a_signal_and_ends_without_a_traceback(tmp_path: Path) -> None:
    proc, exports = _serve(tmp_path)
    assert set(exports) == {"GITHUB_API_URL", "GH_TOKEN"}
    url = exports["GITHUB_API_URL"]
    assert url.startswith("http://127.0.0.1:")
    got = requests.get(f"{url}/repos/octo/app/issues", timeout=5,
                       headers={"Authorization": f"Bearer {exports['GH_TOKEN']}"})
    assert [i["title"] for i in got.json()] == ["PR from jr2/issue-1", "Parser"]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert (proc.returncode, err) == (130, "")
    proc, exports = _serve(tmp_path)
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    assert (proc.returncode, err) == (0, "")


def test_a_bad_seed_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "world.toml").write_text('[[repos]]\nname = "o/r"\n[[issues]]\ntitle = 1\n')
    res = jr2("playground", "github", "--seed", "world.toml", cwd=tmp_path)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == "error: world.toml: issues.0.title: expected a valid string, not 1\n"
    res = jr2("playground", "jira", "--seed", "missing.toml", cwd=tmp_path)
    assert (res.returncode, res.stderr) == (2, "error: missing.toml: No such file or directory\n")


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "world.toml").write_text(WORLD, encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = jr2("playground", "github", "--seed", "world.toml", "--port", str(port),
                  cwd=tmp_path)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"error: cannot serve on 127.0.0.1:{port}: Address already in use\n"


def test_a_persons_acts_change_the_playground_over_http(tmp_path: Path) -> None:
    proc, exports = _serve(tmp_path)
    e = env(**exports)
    try:
        def act(*args: str) -> str:
            res = jr2("playground", "act", "github", *args, cwd=tmp_path, env=e)
            assert (res.returncode, res.stderr) == (0, ""), res.stderr
            return res.stdout.strip()

        assert act("comment", "octo/app#1", "/jr2 approve deploy", "--as", "alice") == \
            "octo/app#1: comment by alice"
        assert act("label", "octo/app#1", "deploy") == "octo/app#1: labelled deploy by octocat"
        assert act("fail-check", "octo/app#2").startswith("octo/app#2: check ci failure on its "
                                                           "head ")
        assert act("merge", "octo/app#2").startswith("octo/app#2: merged by octocat (")
        shown = act("show", "octo/app#1").splitlines()
        assert shown[:3] == ["octo/app#1: Parser", "  state: closed (completed)",
                             "  labels: agent, deploy"]
        assert shown[3:] == ["  comment by alice:", "    /jr2 approve deploy"]
        assert act("reopen", "octo/app#1") == "octo/app#1: reopened by octocat"
        assert act("close", "octo/app#1", "--not-planned") == \
            "octo/app#1: closed (not_planned) by octocat"
        assert act("open-pr", "octo/app", "--head", "jr2/issue-1", "--fixes", "1") == \
            "octo/app#3: pull request jr2/issue-1 -> main opened by octocat"
        # the tracker refuses: one line, exit 1, nothing changed
        res = jr2("playground", "act", "github", "merge", "octo/app#2", cwd=tmp_path, env=e)
        assert (res.returncode, res.stderr) == (
            1, "error: PUT /repos/octo/app/pulls/2/merge: HTTP 405: Pull Request is not "
               "mergeable\n")
        res = jr2("playground", "act", "github", "comment", "octo/app#1", "hi", "--as", "eve",
                  cwd=tmp_path, env=e)
        assert (res.returncode, res.stderr) == (
            1, "error: POST /repos/octo/app/issues/1/comments: HTTP 401: Bad credentials\n")
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


@pytest.mark.parametrize("url", ["https://api.github.com", "http://10.0.0.7:8080", ""])
def test_acts_go_only_to_a_loopback_playground(tmp_path: Path, url: str) -> None:
    res = jr2("playground", "act", "github", "close", "octo/app#1", cwd=tmp_path,
              env=env(GITHUB_API_URL=url))
    assert res.returncode == 2
    assert res.stderr.startswith("error: " + (f"{url} is not a playground" if url else
                                              "no playground: set GITHUB_API_URL"))


def test_a_jira_playground_and_a_persons_acts(tmp_path: Path) -> None:
    proc, exports = _serve(tmp_path, "jira", """
[people]
alice = "edit"

[[issues]]
title = "Parser"
labels = ["agent"]
""")
    assert set(exports) == {"JIRA_SERVER", "JIRA_EMAIL", "JIRA_API_TOKEN"}
    e = env(**exports)
    try:
        def act(*args: str) -> str:
            res = jr2("playground", "act", "jira", *args, cwd=tmp_path, env=e)
            assert (res.returncode, res.stderr) == (0, ""), res.stderr
            return res.stdout.strip()

        assert act("comment", "ENG-1", "/jr2 approve deploy") == "ENG-1: comment by alice"
        assert act("unlabel", "ENG-1", "agent") == "ENG-1: label agent removed by alice"
        assert act("close", "ENG-1") == "ENG-1: Done by alice"
        assert act("show", "ENG-1").splitlines() == [
            "ENG-1: Parser", "  status: Done", "  labels: none", "  comment by Alice:",
            "    /jr2 approve deploy"]
        assert act("reopen", "ENG-1") == "ENG-1: To Do by alice"
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
