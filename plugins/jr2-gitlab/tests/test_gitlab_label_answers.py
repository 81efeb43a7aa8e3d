"""Gate answers by label on GitLab (`jr2:approve:NAME` / `jr2:reject:NAME`): who added the label
comes from the issue's resource label events; a Developer's label answers, a Reporter's is
ignored and named; jr2 takes no answer label off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_gitlab import TOKEN, FakeGitLab

ROOT = Path(__file__).resolve().parents[3]
P = "group/project"
WORKER = r'''
import os, sys
open(os.path.join(sys.argv[1], "runs"), "a").write(os.environ.get("JR2_GATE_DEPLOY", "-") + "\n")
if "JR2_GATE_DEPLOY" not in os.environ:
    print("jr2: await-approval deploy ship it?")
    sys.exit(79)
'''


def _jr2(f: FakeGitLab, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "GITLAB_URL": f.url, "GITLAB_TOKEN": TOKEN})


def test_the_fake_label_events_have_the_documented_shape() -> None:
    doc = json.loads((ROOT / "fixtures" / "gitlab" / "api" / "resource_label_events.json")
                     .read_text())
    f = FakeGitLab().start()
    try:
        iid = f.add_issue(P, "x", labels=["a"])
        f.add_user("dev", 30)
        f.set_labels(P, iid, ["b"], by="dev")
        import urllib.request

        req = urllib.request.Request(
            f"{f.url}/api/v4/projects/{P.replace('/', '%2F')}/issues/{iid}/"
            "resource_label_events", headers={"PRIVATE-TOKEN": TOKEN})
        with urllib.request.urlopen(req, timeout=10) as resp:
            got: list[dict[str, Any]] = json.loads(resp.read())
        assert [(e["action"], e["label"]["name"], e["user"]["username"]) for e in got] == [
            ("add", "b", "dev"), ("remove", "a", "dev")]
        for event in got:
            assert set(event) == set(doc[0])
            assert set(event["label"]) == set(doc[0]["label"])
            assert set(event["user"]) <= set(doc[0]["user"]) | {"web_url"}
    finally:
        f.stop()


def test_an_answer_label_counts_from_a_developer_not_from_a_reporter(tmp_path: Path) -> None:
    f = FakeGitLab().start()
    try:
        f.add_user("dev", 30)
        f.add_user("rep", 20)
        iid = f.add_issue(P, "Ship", labels=["agent"])
        (tmp_path / "w.py").write_text(WORKER)
        argv = ["work", f"gitlab:{P}", "--label", "agent", "--write-spacing", "0.01",
                "--poll-every", "0.2", "--state", str(tmp_path / "state"), "--gate", "deploy",
                "--", sys.executable, str(tmp_path / "w.py"), str(tmp_path)]
        res = _jr2(f, *argv)
        assert res.returncode == 3, res.stderr[-2000:]
        issue = f.issue(P, iid)
        f.set_labels(P, iid, [*issue["labels"], "jr2:approve:deploy"], by="rep")
        report = _jr2(f, "ready", f"gitlab:{P}", "--label", "agent", "--json")
        [entry] = json.loads(report.stdout)["blocked"]
        [reason] = entry["reasons"]
        assert reason["kind"] == "awaiting_approval" and reason["ignored_answers_by"] == ["rep"]
        assert _jr2(f, *argv).returncode == 3  # still waiting: the Reporter's label is ignored
        f.set_labels(P, iid, [x for x in issue["labels"] if x != "jr2:approve:deploy"], by="rep")
        f.set_labels(P, iid, [*issue["labels"], "jr2:approve:deploy"], by="dev")
        res = _jr2(f, *argv)
        assert res.returncode == 0, res.stderr[-2000:]
        assert (tmp_path / "runs").read_text() == "-\napproved\n"
        assert issue["state"] == "closed"
        assert "jr2:approve:deploy" in issue["labels"]  # a person's label: jr2 keeps it
        assert not [e for e in issue["label_events"]
                    if e["user"]["username"] == "jr2-bot" and "approve" in e["label"]["name"]]
    finally:
        f.stop()
