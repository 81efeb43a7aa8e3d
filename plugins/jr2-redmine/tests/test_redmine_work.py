"""`jr2 work` against a real Redmine: it closes what it ran, people win, a dry run writes
nothing (as Redmine's own journals show), and pools racing run each issue once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redmine_helpers import Project


def _state(p: Project) -> dict[int, tuple[str, int, str]]:
    """Each issue's `updated_on`, journal count and marks field, as the admin reads them."""
    out = {}
    for n in p.all_issues():
        issue = p.get(n)
        words = next((cf.get("value") or "" for cf in issue.get("custom_fields", [])
                      if cf["name"] == "jr2"), "")
        out[n] = (issue["updated_on"], len(issue["journals"]), words)
    return out


@pytest.mark.parametrize("marker_key", [None, "fleet-marker-key-0123456789"],
                         ids=["unsigned", "signed"])
def test_jr2_work_runs_ready_issues_in_order_and_closes_them(redmine_project: Project,
                                                             tmp_path: Path,
                                                             marker_key: str | None) -> None:
    """With a marker key set, jr2's own claims are signed (unsigned ones would grant nothing):
    the same run, each issue once."""
    p = redmine_project
    a = p.issue("first")
    b = p.issue("second, after first")
    p.block(a, b)
    log = tmp_path / "ran.txt"
    res = p.jr2("work", p.source, "--project", p.identifier, "--state", str(tmp_path / "st"),
                "--", sys.executable, "-c",
                f"import os; open({str(log)!r}, 'a').write(os.environ['JR2_ITEM_ID'] + '\\n')",
                marker_key=marker_key)
    assert res.returncode == 0, res.stderr
    assert log.read_text().split() == [f"#{a}", f"#{b}"]
    assert marker_key is None or marker_key not in res.stdout + res.stderr
    for n in (a, b):
        issue = p.get(n)
        assert issue["status"]["is_closed"], issue["status"]
        notes = [j["notes"] for j in issue["journals"] if j["notes"]]
        assert len(notes) == 1 and notes[0].startswith("<!-- jr2:done "), notes
        seeded = [j for j in issue["journals"]
                  if any(d["property"] == "relation" for d in j["details"])]
        assert {j["user"]["id"] for j in issue["journals"] if j not in seeded} == {
            p.redmine.bot_id}


def test_jr2_ready_writes_nothing_as_redmines_journals_show(redmine_project: Project) -> None:
    p = redmine_project
    a = p.issue("held by another pool")
    b = p.issue("waits for it")
    p.block(a, b)
    p.issue("failed before", custom_fields=[{"id": p.redmine.field_id, "value": "jr2:failed"}])
    tracker = p.tracker()
    item = next(it for it in tracker.snapshot().items if it.id == f"#{a}")
    assert tracker.claim(item, "other@h", 600)
    before = _state(p)
    for args in ([], ["--json"], ["--explain", f"#{b}"]):
        res = p.jr2("ready", p.source, "--project", p.identifier, *args)
        assert res.returncode == 0, res.stderr
    assert _state(p) == before
    data = json.loads(p.jr2("ready", p.source, "--project", p.identifier, "--json").stdout)
    assert [e["id"] for e in data["claimed"]] == [f"#{a}"]


def test_a_person_closing_a_held_issue_stops_its_worker(redmine_project: Project,
                                                         tmp_path: Path) -> None:
    p = redmine_project
    n = p.issue("a long job a person takes back")
    started = tmp_path / "started"
    cmd = [sys.executable, "-m", "jr2_core", "work", p.source, "--project", p.identifier,
           "--poll-every", "1s", "--state", str(tmp_path / "st"), "--json", "--",
           sys.executable, "-c",
           f"import time; open({str(started)!r}, 'w').close(); time.sleep(120)"]
    env = {**__import__("os").environ, "REDMINE_API_KEY": p.redmine.bot_key}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the worker never started"
            time.sleep(0.2)
        p.person.call("PUT", f"/issues/{n}.json",
                      {"issue": {"status_id": 6, "notes": "Not needed after all."}})
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert "a person took" in result["output"]["cancelled"][f"#{n}"]["reason"], result
    issue = p.get(n)
    assert issue["status"]["name"] == "Rejected"  # what the person set stays
    person_journal = next(j for j in issue["journals"] if j["user"]["id"] == p.redmine.person_id)
    after = [j for j in issue["journals"] if j["id"] > person_journal["id"]]
    assert all(d["property"] == "cf" for j in after for d in j["details"]), after


def _race(p: Project, tmp_path: Path, pools: int, issues: int, *, cap: int, bulk: bool) -> None:
    """`pools` pools of `cap` workers racing over `issues` issues, some in chains so pools wait
    on each other's work: each issue runs exactly once, and Redmine shows it closed with one
    note, jr2's `done` (every lost claim's note deleted). `bulk`: seeded in one request of the
    throwaway server, instead of one REST request an issue and a relation."""
    subjects = [f"race {i}" for i in range(issues)]
    chains = [(i, i + 1) for i in range(0, issues - 1, 4)]
    if bulk:
        nums = p.seed(subjects, chains)
    else:
        nums = [p.issue(s) for s in subjects]
        for a, b in chains:
            p.block(nums[a], nums[b])
    log = tmp_path / "ran.txt"
    worker = (f"import os; fd = os.open({str(log)!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT);"
              " os.write(fd, (os.environ['JR2_ITEM_ID'] + '\\n').encode())")
    env = {**__import__("os").environ, "REDMINE_API_KEY": p.redmine.bot_key}
    procs = [subprocess.Popen(
        [sys.executable, "-m", "jr2_core", "work", p.source, "--project", p.identifier,
         "--cap", str(cap), "--poll-every", "1s", "--state", str(tmp_path / f"st{k}"), "--",
         sys.executable, "-c", worker], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, env=env) for k in range(pools)]
    errs = [proc.communicate(timeout=900)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * pools, errs
    ran = log.read_text().split()
    assert sorted(ran) == sorted(f"#{n}" for n in nums), "an issue ran twice or never"
    for n in nums:
        issue = p.get(n)
        notes = [j["notes"] for j in issue["journals"] if j["notes"]]
        assert issue["status"]["is_closed"], (n, issue["status"])
        assert len(notes) == 1 and notes[0].startswith("<!-- jr2:done "), (n, notes)


def test_four_pools_racing_over_40_issues_run_each_once(redmine_project: Project,
                                                        tmp_path: Path) -> None:
    """About 520 requests of a server that serves one at a time (50 to 150 ms each,
    `bench/redmine_race.py`): about 25 s beside other tests."""
    _race(redmine_project, tmp_path, pools=4, issues=40, cap=2, bulk=True)


@pytest.mark.soak
def test_eight_pools_racing_over_80_issues_seeded_one_by_one_run_each_once(
        redmine_project: Project, tmp_path: Path) -> None:
    """Seeded one REST request at a time, so issues differ in creation time and pools spread
    less over them (`spread_claims` spreads equals only): more races."""
    _race(redmine_project, tmp_path, pools=8, issues=80, cap=2, bulk=False)


def test_a_strangers_claim_note_changes_nothing_through_jr2_ready(redmine_project: Project
                                                                   ) -> None:
    """The snapshot reads an issue's notes through the marker reader: alice (a Manager, not
    an account the pool trusts) writes a day-long claim and marks the issue claimed; the issue
    stays ready and the report names her marker."""
    p = redmine_project
    n = p.issue("held by a forged note")
    forged = '<!-- jr2:claim {"holder": "evil@x", "lease": 86400, "nonce": "n1"} -->\njr2: held'
    p.person.call("PUT", f"/issues/{n}.json", {"issue": {
        "notes": forged, "custom_fields": [{"id": p.redmine.field_id, "value": "jr2:claimed"}]}})
    res = p.jr2("ready", p.source, "--project", p.identifier, "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["claimed"] == []
    [entry] = data["ready"]
    assert entry["id"] == f"#{n}"
    assert [(r["kind"], r["marker"], r["author"]) for r in entry["reasons"]] == [
        ("ignored_marker", "claim", str(p.redmine.person_id))]
