"""The network seen from the command line (issue 14): an offline machine or a wrong URL fails in
seconds with one line naming the host; retries that do happen say so, one line each; Ctrl-C
while retrying exits 130."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from clihelp import wait_for
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.testing.fakes.jira_server import FakeJira

JR2 = [sys.executable, "-m", "jr2_core"]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(args: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                               float]:
    t0 = time.monotonic()
    res = subprocess.run([*JR2, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, JIRA_EMAIL="bot@example.com",
                                  JIRA_API_TOKEN="test-token-123456", GITHUB_TOKEN="x", **env))
    return res, time.monotonic() - t0


def test_an_unreachable_tracker_fails_in_seconds_with_one_line_naming_the_host(
        tmp_path: Path) -> None:
    refused = f"http://127.0.0.1:{closed_port()}"
    cases = [
        (["ready", "github:o/r"], {"GITHUB_API_URL": refused},
         "error: github:o/r: cannot reach 127.0.0.1: it refused the connection"),
        (["ready", "github:o/r"], {"GITHUB_API_URL": "http://jr2-no-such-host.invalid"},
         "error: github:o/r: cannot reach jr2-no-such-host.invalid: its name does not resolve"),
        (["ready", f"jira:{refused}", "--jql", "project = ENG"], {},
         f"error: jira:{refused}: cannot reach 127.0.0.1: it refused the connection"),
        (["work", "github:o/r", "--", "true"], {"GITHUB_API_URL": refused},
         "error: github:o/r: cannot reach 127.0.0.1: it refused the connection"),
    ]
    for args, env, line in cases:
        res, took = run(args, tmp_path, **env)
        assert res.returncode == 4, (args, res.stderr)
        assert res.stderr.startswith(line) and res.stderr.count("\n") == 1, res.stderr
        assert took < 10, (args, took)


def test_each_retry_prints_one_line_and_the_run_goes_on(tmp_path: Path) -> None:
    with FakeGitHub() as fake:
        fake.add_issue("o/r", "one")
        fake.fault(503, times=2, path=r"/issues$")
        res, _ = run(["ready", "github:o/r", "--json"], tmp_path, GITHUB_API_URL=fake.url)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        "jr2: github:o/r: retrying in 1 s (2/8): HTTP 503",
        "jr2: github:o/r: retrying in 2 s (3/8): HTTP 503",
    ]


def test_ctrl_c_while_retrying_exits_130(tmp_path: Path) -> None:
    fake = FakeJira().start()
    try:
        fake.add_issue("Ready", labels=["agent"])
        fake.fault(502, times=1000, path="search")
        for args in (["ready", f"jira:{fake.url}", "--jql", "project = ENG"],
                     ["work", f"jira:{fake.url}", "--jql", "project = ENG", "--", "true"]):
            fake.clear_log()
            proc = subprocess.Popen(
                [*JR2, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, env=dict(os.environ, JIRA_EMAIL="bot@example.com",
                                    JIRA_API_TOKEN="test-token-123456"))
            try:
                wait_for(lambda: len(fake.requests(path="search")) >= 2, timeout=30)
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=20)
            finally:
                if proc.poll() is None:
                    proc.kill()
            assert proc.returncode == 130, (args, err)
            assert "Aborted!" not in err and "Traceback" not in err, err
    finally:
        fake.stop()


def test_ctrl_c_mid_run_while_a_read_retries_exits_130_at_once_and_releases(
        tmp_path: Path) -> None:
    fake = FakeJira().start()
    try:
        key = fake.add_issue("Ready", labels=["agent"])
        proc = subprocess.Popen(
            [*JR2, "work", f"jira:{fake.url}", "--jql", "project = ENG", "--cap", "2", "--wait",
             "--poll-every", "0.2", "--write-spacing", "0.001", "--", "sleep", "60"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, JIRA_EMAIL="bot@example.com", JIRA_API_TOKEN="test-token-123456"))
        try:
            wait_for(lambda: fake.requests("POST", path="comment"), timeout=30)  # claimed
            fake.clear_log()
            fake.fault(502, times=1000, path="search")  # the next polls retry (default budget)
            wait_for(lambda: len(fake.requests(path="search")) >= 2, timeout=30)
            t0 = time.monotonic()
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, err
        assert took < 10, took  # not the rest of a 5-minute retry budget
        assert "retrying in" in err and "Traceback" not in err
        released = [e for e in fake.requests() if e["method"] in ("PUT", "DELETE")]
        assert released, f"the claim on {key} was not released"
    finally:
        fake.stop()
