"""The fake GitHub keeps GitHub's documented behaviour, and PyGithub 2.10 reads its shapes."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import requests

from jr2_sources.testing.fakes.github_server import FakeGitHub, seed

ROOT = Path(__file__).resolve().parents[3]
H = {"Authorization": "Bearer x", "Accept": "application/vnd.github+json"}


def test_list_pages_link_etag_and_304(fake: FakeGitHub) -> None:
    seed(fake, "o/r", 150, prs=3)
    s = requests.Session()
    r1 = s.get(f"{fake.url}/repos/o/r/issues", params={"per_page": 100}, headers=H)
    assert r1.status_code == 200 and len(r1.json()) == 100
    assert r1.json()[0]["number"] == 153  # default order: newest first
    nxt = r1.links["next"]["url"]
    assert "page=2" in nxt and "page=2" in r1.links["last"]["url"]
    r2 = s.get(nxt, headers=H)
    assert len(r2.json()) == 53 and "next" not in r2.links
    assert sum("pull_request" in i for i in r1.json() + r2.json()) == 3
    used = r2.headers["x-ratelimit-used"]
    r3 = s.get(nxt, headers={**H, "If-None-Match": r2.headers["ETag"]})
    assert r3.status_code == 304 and r3.content == b""
    assert r3.headers["x-ratelimit-used"] == used  # a 304 costs nothing
    fake.close_issue("o/r", 1)
    r4 = s.get(nxt, headers={**H, "If-None-Match": r2.headers["ETag"]})
    assert r4.status_code == 200 and len(r4.json()) == 52


def test_labels_assignees_comments(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r", labels=["bug"])
    base = f"{fake.url}/repos/o/r/issues/{n}"
    s = requests.Session()
    for _ in range(2):  # adding a label twice is fine
        r = s.post(f"{base}/labels", json={"labels": ["jr2:claimed"]}, headers=H)
    assert [lab["name"] for lab in r.json()] == ["bug", "jr2:claimed"]
    assert s.delete(f"{base}/labels/jr2%3Aclaimed", headers=H).status_code == 200
    assert s.delete(f"{base}/labels/jr2%3Aclaimed", headers=H).status_code == 404
    s.post(f"{base}/assignees", json={"assignees": ["a"]}, headers=H)
    r = s.post(f"{base}/assignees", json={"assignees": ["b"]}, headers=H)
    assert [u["login"] for u in r.json()["assignees"]] == ["a", "b"]  # they accumulate
    c1 = s.post(f"{base}/comments", json={"body": "one"}, headers=H).json()
    fake.advance(5)
    c2 = s.post(f"{base}/comments", json={"body": "two"}, headers=H).json()
    assert c2["id"] > c1["id"] and c2["created_at"] > c1["created_at"]
    edited = s.patch(f"{fake.url}/repos/o/r/issues/comments/{c1['id']}", json={"body": "1"},
                     headers=H).json()
    assert edited["updated_at"] > c1["updated_at"] and edited["created_at"] == c1["created_at"]
    listed = s.get(f"{base}/comments", headers=H).json()
    assert [c["id"] for c in listed] == [c1["id"], c2["id"]]  # ascending id, not update time
    assert s.delete(f"{fake.url}/repos/o/r/issues/comments/{c2['id']}",
                    headers=H).status_code == 204
    closed = s.patch(base, json={"state": "closed", "state_reason": "not_planned"},
                     headers=H).json()
    assert (closed["state"], closed["state_reason"]) == ("closed", "not_planned")


def test_summaries_and_dependency_lists(fake: FakeGitHub) -> None:
    a, b, c = (fake.add_issue("o/r") for _ in range(3))
    fake.add_dependency("o/r", c, a)
    fake.add_dependency("o/r", c, b)
    fake.add_sub_issue("o/r", a, b)
    fake.close_issue("o/r", b)
    s = requests.Session()
    issue_c = s.get(f"{fake.url}/repos/o/r/issues/{c}", headers=H).json()
    assert issue_c["issue_dependencies_summary"] == {
        "blocked_by": 1, "blocking": 0, "total_blocked_by": 2, "total_blocking": 0}
    issue_a = s.get(f"{fake.url}/repos/o/r/issues/{a}", headers=H).json()
    assert issue_a["sub_issues_summary"] == {"total": 1, "completed": 1,
                                             "percent_completed": 100}
    blockers = s.get(f"{fake.url}/repos/o/r/issues/{c}/dependencies/blocked_by",
                     headers=H).json()
    assert [(i["number"], i["state"]) for i in blockers] == [(a, "open"), (b, "closed")]
    subs = s.get(f"{fake.url}/repos/o/r/issues/{a}/sub_issues", headers=H).json()
    assert subs[0]["parent_issue_url"].endswith(f"/repos/o/r/issues/{a}")


def test_faults_switch_at_run_time(fake: FakeGitHub) -> None:
    fake.add_issue("o/r")
    fake.fault(status=429, retry_after=3, path=r"/issues$", times=2)
    s = requests.Session()
    r = s.get(f"{fake.url}/repos/o/r/issues", headers=H)
    assert (r.status_code, r.headers["Retry-After"]) == (429, "3")
    assert s.get(f"{fake.url}/repos/o/r/issues", headers=H).status_code == 429
    assert s.get(f"{fake.url}/repos/o/r/issues", headers=H).status_code == 200
    req = urllib.request.Request(f"{fake.url}/_fake/faults", method="POST",
                                 data=json.dumps({"kind": "truncate"}).encode())
    assert urllib.request.urlopen(req).status == 201
    r = s.get(f"{fake.url}/repos/o/r/issues", headers=H)
    try:
        r.json()
        parsed = True
    except ValueError:
        parsed = False
    assert not parsed
    assert [e["status"] for e in fake.requests("GET")] == [429, 429, 200, 200]


def test_pygithub_reads_the_fake_and_completes_lazily(fake: FakeGitHub) -> None:
    """Our shapes are what PyGithub 2.10 expects; and its lazy completion costs one GET per
    issue as soon as an attribute the list lacks is read (why jr2 reads plain JSON)."""
    from github import Auth, Github

    a = fake.add_issue("o/r")
    b = fake.add_issue("o/r")
    fake.add_dependency("o/r", b, a)
    gh = Github(base_url=fake.url, auth=Auth.Token("x"), retry=None, per_page=100, lazy=True,
                seconds_between_requests=None)
    issues = list(gh.get_repo("o/r").get_issues(state="open"))
    before = len(fake.requests("GET"))
    counts = {i.number: i.issue_dependencies_summary.blocked_by for i in issues}
    assert counts == {a: 0, b: 1}
    assert [i.sub_issues_summary.total for i in issues] == [0, 0]
    assert len(fake.requests("GET")) == before  # present attributes: no request
    _ = [i.pull_request for i in issues]  # absent on plain issues: completes each one
    assert len(fake.requests("GET")) == before + 2
    assert [x.number for x in gh.get_repo("o/r").get_issue(b).get_blocked_by()] == [a]


def test_a_persons_token_writes_as_that_person(fake: FakeGitHub) -> None:
    # GitHub authors a comment and a label event as the token's user; `GET /user` is them
    fake.people["alice-token"] = "alice"
    n = fake.add_issue("o/r", "One")
    alice = {**H, "Authorization": "Bearer alice-token"}
    url = f"{fake.url}/repos/o/r/issues/{n}"
    said = requests.post(f"{url}/comments", json={"body": "/jr2 approve deploy"}, headers=alice,
                         timeout=5).json()
    mine = requests.post(f"{url}/comments", json={"body": "mine"}, headers=H, timeout=5).json()
    assert (said["user"]["login"], mine["user"]["login"]) == ("alice", fake.login)
    requests.post(f"{url}/labels", json={"labels": ["deploy"]}, headers=alice, timeout=5)
    assert [e["actor"] for e in fake.events[("o/r", n)]] == ["alice"]
    assert requests.get(f"{fake.url}/user", headers=alice, timeout=5).json()["login"] == "alice"
    assert requests.get(f"{fake.url}/user", headers=H, timeout=5).json()["login"] == fake.login


def test_standalone_prints_its_url() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "jr2_sources.testing.fakes.github_server",
                             "--port", "0", "--issues", "5"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        got = requests.get(f"{url}/repos/o/r/issues", headers=H, timeout=5).json()
        assert len(got) == 5
    finally:
        proc.terminate()
        proc.wait(timeout=10)
