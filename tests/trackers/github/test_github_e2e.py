"""End to end against the fake GitHub: `jr2 ready` and `jr2 work`, and pools racing.

The CLI runs as `python -m jr2_core` and in-process (the `github` kind is one of jr2's own
entry points).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

import jr2_core.plugins as plugins
from jr2_sources.kit import claims
from jr2_sources.testing.fakes.github_server import FakeGitHub

HERE = Path(__file__).resolve().parent
JR2 = [sys.executable, "-m", "jr2_core"]
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]


def env_for(fake: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x",
                JR2_STATE_DIR=str(tmp_path / ".jr2"))


def seed_small(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", "Ready one", labels=["agent"])
    fake.add_issue("o/r", "Blocked natively", labels=["agent"])
    fake.add_dependency("o/r", 2, 1)
    fake.add_issue("o/r", "Blocked in text", "Depends on #1", labels=["agent"])
    fake.add_issue("o/r", "Not in scope")
    fake.add_issue("o/r", "A pull request", labels=["agent"], pr=True)


def check_ready_json(out: str) -> None:
    data = json.loads(out)
    assert data["schema_version"] == 1 and data["source"] == "github:o/r"
    assert [e["id"] for e in data["ready"]] == ["o/r#1"]
    blocked = {e["id"]: e["reasons"] for e in data["blocked"]}
    assert blocked == {"o/r#2": [{"kind": "open_blocker", "ref": "o/r#1", "held_by": None}],
                       "o/r#3": [{"kind": "open_blocker", "ref": "o/r#1", "held_by": None}]}


def test_ready_json_subprocess(fake: FakeGitHub, tmp_path: Path) -> None:
    seed_small(fake)
    res = subprocess.run([*JR2, "ready", "github:o/r", "--label", "agent", "--json"],
                         cwd=tmp_path, env=env_for(fake, tmp_path), capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    check_ready_json(res.stdout)
    assert not [e for e in fake.requests() if e["method"] != "GET"]
    assert not (tmp_path / ".jr2").exists()


def test_work_subprocess(fake: FakeGitHub, tmp_path: Path) -> None:
    for _ in range(5):
        fake.add_issue("o/r")
    res = subprocess.run([*JR2, "work", "github:o/r", "--cap", "2", *FAST, "--", "true"],
                         cwd=tmp_path, env=env_for(fake, tmp_path), capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert all(fake.issue("o/r", n).state == "closed" for n in range(1, 6))


def test_ready_in_process(fake: FakeGitHub, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "_host", None)
    from jr2_core.cli import main

    seed_small(fake)
    runner = CliRunner()
    env = {"GITHUB_API_URL": fake.url, "GITHUB_TOKEN": "ghp_e2eSECRET123",
           "JR2_STATE_DIR": str(tmp_path / ".jr2")}
    res = runner.invoke(main, ["ready", "github:o/r", "--label", "agent", "--json"], env=env)
    assert res.exit_code == 0, res.output
    check_ready_json(res.stdout)
    md = runner.invoke(main, ["ready", "github:o/r", "--label", "agent", "--format",
                              "markdown"], env=env)
    assert md.exit_code == 0 and "o/r#1" in md.stdout
    fake.tokens = {"another"}
    bad = runner.invoke(main, ["ready", "github:o/r"], env=env)
    assert bad.exit_code == 4
    assert "github:o/r: the token was refused (HTTP 401" in bad.output
    assert "ghp_e2eSECRET123" not in bad.output
    helped = runner.invoke(main, ["ready", "github:", "--help"], env=env)
    assert "--claim-label" in helped.stdout and "--on-success" in helped.stdout


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_signed_webhook_wakes_a_waiting_pool(fake: FakeGitHub, tmp_path: Path) -> None:
    """`--poll-every 60s`: only the webhook can make the pool see the new issue in seconds."""
    import requests
    from gh_helpers import load

    from jr2_sources.capabilities.webhooks import hmac_sha256

    port, log = _free_port(), tmp_path / "worked.log"
    env = dict(env_for(fake, tmp_path), JR2_WEBHOOK_SECRET="s3cret")
    proc = subprocess.Popen([*JR2, "work", "github:o/r", "--wait",
                             "--listen", f"127.0.0.1:{port}", "--webhook-secret-env",
                             "JR2_WEBHOOK_SECRET", "--write-spacing", "0.001", "--poll-every",
                             "60", "--", "sh", "-c", f'echo "$JR2_ITEM_ID" >> {log}'],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        payload = load("webhooks/issues.opened.json")
        payload["repository"]["full_name"] = "o/r"
        body = json.dumps(payload).encode()
        url = f"http://127.0.0.1:{port}/webhook"
        deadline = time.monotonic() + 20
        statuses: list[int] = []
        while time.monotonic() < deadline and not statuses:
            try:
                statuses.append(requests.post(url, data=body, timeout=2).status_code)
            except requests.ConnectionError:
                time.sleep(0.1)
        assert statuses == [401]  # the host is up; unsigned deliveries are refused
        fake.add_issue("o/r", "Arrived after the pool went idle")
        start, i = time.monotonic(), 0
        while time.monotonic() - start < 15 and not (log.exists() and log.read_text()):
            i += 1
            headers = {"X-Hub-Signature-256": "sha256=" + hmac_sha256("s3cret", body),
                       "X-GitHub-Event": "issues", "X-GitHub-Delivery": f"d-{i}",
                       "Content-Type": "application/json"}
            assert requests.post(url, data=body, headers=headers, timeout=2).status_code == 200
            time.sleep(0.5)
        assert log.read_text().split() == ["o/r#1"]
        assert time.monotonic() - start < 15
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert fake.issue("o/r", 1).state == "closed", err[-2000:]


def race(fake: FakeGitHub, tmp_path: Path, issues: int, pools: int = 4) -> float:
    """`pools` `jr2 work` processes over `issues` ready issues; checks each was worked once."""
    for _ in range(issues):
        fake.add_issue("o/r", labels=["agent"])
    worked = tmp_path / "worked.log"
    cmd = f'echo "$JR2_ITEM_ID $$" >> {worked}'
    start = time.monotonic()
    procs = [subprocess.Popen([*JR2, "work", "github:o/r",
                               "--label", "agent", "--cap", "2", *FAST, "--", "sh", "-c", cmd],
                              cwd=tmp_path, env=env_for(fake, tmp_path / f"p{i}"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(pools)]
    outs = [p.communicate(timeout=600) for p in procs]
    took = time.monotonic() - start
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    ids = Counter(line.split()[0] for line in worked.read_text().splitlines())
    assert set(ids) == {f"o/r#{n}" for n in range(1, issues + 1)}
    assert max(ids.values()) == 1, [i for i, c in ids.items() if c > 1]
    closes = Counter(e["path"] for e in fake.requests("PATCH", r"/issues/\d+$"))
    labelled = Counter(e["path"] for e in fake.requests("POST", r"/labels$"))
    for n in range(1, issues + 1):
        issue = fake.issue("o/r", n)
        assert issue.state == "closed" and issue.labels == ["agent"]
        assert closes[f"/repos/o/r/issues/{n}"] == 1
        assert labelled[f"/repos/o/r/issues/{n}/labels"] == 1  # one winner per issue
        t = datetime(2024, 1, 1, tzinfo=UTC)
        marks = [claims.parse_marker(claims.Comment(c.id, c.body, t, t))
                 for c in fake.comments_of("o/r", n)]
        assert [m.kind for m in marks if m is not None] == ["done"]
    winners = {e["holder"] for e in fake.requests("POST", r"/comments$")}
    assert len(winners) == pools  # every pool took part
    return took


def test_four_pools_race_over_60_issues(fake: FakeGitHub, tmp_path: Path) -> None:
    race(fake, tmp_path, 60)


@pytest.mark.soak
def test_four_pools_race_over_200_issues(fake: FakeGitHub, tmp_path: Path) -> None:
    race(fake, tmp_path, 200)


@pytest.mark.soak
def test_eight_pools_race_over_1000_issues(fake: FakeGitHub, tmp_path: Path) -> None:
    race(fake, tmp_path, 1000, pools=8)
