"""End to end against the fake Jira: the plugin, `jr2 ready`, `jr2 work`, and pools racing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import jr2_core.plugins as plugins
from jr2_sources.hooks import load_registry
from jr2_sources.registry import model_of
from jr2_sources.testing.fakes.jira_server import FakeJira

HERE = Path(__file__).resolve().parent
LAUNCHER = [sys.executable, str(HERE / "jira_jr2.py")]
JQL = ["--jql", "project = ENG AND labels = agent ORDER BY created"]
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]


def env_for(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, JIRA_EMAIL="bot@example.com", JIRA_API_TOKEN="test-token-123456",
               JR2_STATE_DIR=str(tmp_path / ".jr2"))
    env.pop("JIRA_PAT", None)
    return env


def test_the_plugin_registers_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    code = ("import sys, jr2_sources.trackers.jira.plugin; "
            "print('jira' in sys.modules, 'requests' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert res.stdout.split() == ["False", "False"]
    plugins.load(refresh=True)
    kind = load_registry().get("jira")
    assert model_of(kind).__name__ == "JiraConfig"  # the model is named by module:attr


def test_ready_json_subprocess_only_reads(fake: FakeJira, tmp_path: Path) -> None:
    a = fake.add_issue("Ready", labels=["agent"])
    b = fake.add_issue("Blocked", labels=["agent"])
    fake.add_issue("Out of scope")
    fake.add_link(a, b)
    res = subprocess.run([*LAUNCHER, "ready", f"jira:{fake.url}", *JQL, "--json"],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert [e["id"] for e in data["ready"]] == [a]
    assert data["blocked"][0]["reasons"] == [{"kind": "open_blocker", "ref": a,
                                              "held_by": None}]
    sent = {(e["method"], e["path"]) for e in fake.requests()}
    assert all(m == "GET" or p.endswith("/search/jql") for m, p in sent), sent
    assert not (tmp_path / ".jr2").exists()


def test_a_jql_error_is_one_line(fake: FakeJira, tmp_path: Path) -> None:
    res = subprocess.run([*LAUNCHER, "ready", f"jira:{fake.url}", "--jql", "project = AND x"],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                         timeout=60)
    assert res.returncode != 0
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "Error in the JQL Query" in last
    assert "test-token-123456" not in res.stderr


def test_work_subprocess_cap_2(fake: FakeJira, tmp_path: Path) -> None:
    keys = [fake.add_issue(f"I{i}", labels=["agent"]) for i in range(5)]
    fake.add_link(keys[0], keys[4])
    res = subprocess.run([*LAUNCHER, "work", f"jira:{fake.url}", *JQL, "--cap", "2", *FAST,
                          "--on-success-transition", "Done", "--", "true"],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert all(fake.issue(k).status == "Done" for k in keys)
    assert all("jr2:claimed" not in fake.issue(k).labels for k in keys)


def _race(fake: FakeJira, tmp_path: Path, n: int, pools: int) -> float:
    keys = [fake.add_issue(f"I{i}", labels=["agent"]) for i in range(n)]
    marker = tmp_path / "worked.log"
    script = f'echo "$JR2_ITEM_ID $JR2_RUN_ID" >> {marker}'
    started = time.monotonic()
    procs = [subprocess.Popen([*LAUNCHER, "work", f"jira:{fake.url}", *JQL, "--cap", "3",
                               *FAST, "--on-success-transition", "Done", "--", "sh", "-c",
                               script],
                              cwd=tmp_path, env=env_for(tmp_path / f"p{i}"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(pools)]
    outs = [p.communicate(timeout=600) for p in procs]
    took = time.monotonic() - started
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    worked = Counter(line.split()[0] for line in marker.read_text().splitlines())
    assert set(worked) == set(keys) and set(worked.values()) == {1}, worked.most_common(3)
    assert all(fake.issue(k).status == "Done" for k in keys)
    # from the fake's log: one label add (the winner's) per issue, one done marker per issue
    adds = Counter(e["key"] for e in fake.requests("PUT", r"/issue/ENG-\d+$")
                   if any("add" in op and op["add"] == "jr2:claimed"
                          for op in e["body"]["update"]["labels"]))
    assert set(adds.values()) == {1}
    done = Counter(e["key"] for e in fake.requests("PUT", "/comment/") if e.get("kind") == "done")
    assert set(done.values()) == {1} and len(done) == n
    return took


def test_four_pools_race_over_60_issues(fake: FakeJira, tmp_path: Path) -> None:
    """Each issue worked exactly once."""
    assert _race(fake, tmp_path, 60, 4) < 120


@pytest.mark.soak
def test_four_pools_race_over_200_issues(fake: FakeJira, tmp_path: Path) -> None:
    """Each issue worked exactly once, at a bigger size."""
    assert _race(fake, tmp_path, 200, 4) < 120
