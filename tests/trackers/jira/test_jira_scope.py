"""Issue 16 against the fake Jira: only the user's JQL selects work (the OPS-1 case through
`jr2 work`), `jr2 ready` shows nothing of other projects, jr2's own writes wake no pool,
renewals e-mail no watcher, the claim survives Cloud's comment storage, and a blocker settled
done without a transition releases its dependents."""

from __future__ import annotations

import itertools
import json
import signal
import socket
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from jira_helpers import make_adapter
from test_jira_e2e import FAST, LAUNCHER, env_for

from jr2_core import Outcome
from jr2_core.errors import ItemError
from jr2_sources.readyset import SnapshotItem, compute_ready_set
from jr2_sources.testing.fakes.jira_server import FakeJira

WRITES = ("POST", "PUT", "DELETE")
READS = ("/search", "/search/jql", "/comment/list")


def _writes_to(fake: FakeJira, key: str) -> list[tuple[str, str]]:
    return [(e["method"], e["path"]) for e in fake.requests()
            if e["method"] in WRITES and e["key"] == key and not e["path"].endswith(READS)]


def _stale_ops_claim(fake: FakeJira) -> str:
    """OPS-1: another team's issue with a `jr2:claimed` label whose claim lapsed long ago."""
    ops = fake.add_issue("Another team's issue", project="OPS", labels=["jr2:claimed"])
    fake.issue(ops).comments.append(
        {"id": 1, "issue": fake.issue(ops).id, "author": fake.me, "created": 1.0,
         "updated": 1.0, "properties": [], "body": '<!-- jr2:claim {"holder": "old@h", '
                                                   '"lease": 60, "nonce": "n"} -->\nold claim'})
    return ops


def test_work_leaves_an_issue_outside_the_jql_untouched(fake: FakeJira, tmp_path: Path) -> None:
    """The OPS-1 case: `--jql "project = ENG"` never claims, runs or writes to OPS-1."""
    ops = _stale_ops_claim(fake)
    fake.add_issue("Failed over there", project="OPS", labels=["jr2:failed"])
    eng = [fake.add_issue(f"E{i}") for i in range(2)]
    log = tmp_path / "worked.log"
    res = subprocess.run([*LAUNCHER, "work", f"jira:{fake.url}", "--jql", "project = ENG", *FAST,
                          "--on-success-transition", "Done", "--", "sh", "-c",
                          f'echo "$JR2_ITEM_ID" >> {log}'],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert sorted(log.read_text().split()) == sorted(eng)
    assert _writes_to(fake, ops) == [], "no request writes to OPS-1"
    assert fake.issue(ops).labels == ["jr2:claimed"] and len(fake.issue(ops).comments) == 1
    assert fake.issue(ops).status == "To Do"
    jqls = [e["body"]["jql"] for e in fake.requests("POST", "/search/jql")]
    assert jqls and all("labels" not in q for q in jqls), jqls  # never widened site-wide


def test_ready_lists_no_other_projects_marked_issues(fake: FakeJira, tmp_path: Path) -> None:
    _stale_ops_claim(fake)
    failed_ops = fake.add_issue("Failed over there", project="OPS", labels=["jr2:failed"])
    eng = fake.add_issue("Ours", labels=["agent"])
    res = subprocess.run([*LAUNCHER, "ready", f"jira:{fake.url}", "--jql",
                          "project = ENG AND labels = agent", "--json"],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    shown = {e["id"] for group in ("ready", "blocked", "claimed") for e in data.get(group) or []}
    assert eng in shown and failed_ops not in shown and "OPS-1" not in shown, data


def test_marked_issues_beside_the_filter_are_read_only_and_bounded(fake: FakeJira) -> None:
    """A report shows jr2's marks on issues of the projects in the results that the filter does
    not select, as `in_scope=False`; a pool never has them, nor anything of other projects."""
    ours = fake.add_issue("Ours", labels=["agent"])
    beside = fake.add_issue("Failed, no longer tagged", labels=["jr2:failed"])
    fake.add_issue("Failed over there", project="OPS", labels=["jr2:failed"])
    report = make_adapter(fake.url, jql="project = ENG AND labels = agent", read_only=True)
    items = {it.id: it.in_scope for it in report.snapshot().items}
    assert items == {ours: True, beside: False}
    pool = make_adapter(fake.url, jql="project = ENG AND labels = agent")
    assert {it.id for it in pool.snapshot().items} == {ours}


def test_the_adapter_refuses_to_write_outside_the_jql(fake: FakeJira) -> None:
    ops = _stale_ops_claim(fake)
    fake.add_issue("Ours")
    ad = make_adapter(fake.url, jql="project = ENG")
    ad.snapshot()
    fake.clear_log()
    with pytest.raises(ItemError, match="outside the JQL scope"):
        ad.claim(SnapshotItem(id=ops), "p@h", 60)
    with pytest.raises(ItemError, match="outside the JQL scope"):
        ad.claim(SnapshotItem(id="ENG-1", in_scope=False), "p@h", 60)
    assert _writes_to(fake, ops) == [] and _writes_to(fake, "ENG-1") == []


def test_renewals_and_marker_edits_email_no_watcher(fake: FakeJira) -> None:
    """Notifications per renewal: 1 per watcher before (`notifyUsers` defaults to true), 0 now."""
    key = fake.add_issue("A")
    ad = make_adapter(fake.url, jql="project = ENG", on_success_transition="Done")
    assert ad.claim(ad.snapshot().items[0], "p@h", 60)
    before = len(fake.notifications)
    for _ in range(6):
        assert ad.renew(key, "p@h", 60)
    assert [n for n in fake.notifications[before:] if n[1] == "comment updated"] == []
    ad.finish(key, "p@h", Outcome("done"))
    edits = fake.requests("PUT", r"/comment/\d+$")
    assert len(edits) == 7 and all(e["query"].get("notifyUsers") == "false" for e in edits)
    assert ("comment updated" not in {why for _, why in fake.notifications})


@pytest.mark.parametrize("cloud", [True, False])
def test_the_claim_survives_the_sites_comment_storage(cloud: bool) -> None:
    """Cloud drops `<!-- -->` from a stored body (the fake models it): the claim must still be
    seen by another pool, from the comment property; Data Center keeps the body verbatim."""
    fake = FakeJira(cloud=cloud).start()
    try:
        key = fake.add_issue("A")
        p1 = make_adapter(fake.url, jql="project = ENG")
        p2 = make_adapter(fake.url, jql="project = ENG")
        assert p1.claim(p1.snapshot().items[0], "p1@h", 60)
        stored = fake.issue(key).comments[0]["body"]
        if cloud:
            assert "<!--" not in json.dumps(stored) and stored["type"] == "doc"
        seen = p2.snapshot().items[0]
        assert seen.claim is not None and seen.claim.holder == "p1@h"
        assert p2.claim(seen, "p2@h", 60) is False
    finally:
        fake.stop()


def test_a_marker_in_the_body_does_not_survive_the_lossy_cloud_fake(fake: FakeJira) -> None:
    """The fake is lossy as Cloud is: a body-only marker would be lost (so tests catch it)."""
    key = fake.add_issue("A")
    ad = make_adapter(fake.url, jql="project = ENG")
    ad.snapshot()
    ad.client.request("POST", f"/issue/{key}/comment",
                      body={"body": '<!-- jr2:claim {"holder": "x"} -->\nclaimed'})
    comments, _ = ad.comments(key)
    assert [c.body for c in comments] == ["claimed"]


def test_done_without_a_transition_releases_the_dependents(fake: FakeJira) -> None:
    """ISSUE-NOTES 17: with no success transition the blocker stays "To Do" in Jira; the pool
    that settled it done counts it as done, so its dependent becomes ready (no deadlock)."""
    a = fake.add_issue("A")
    b = fake.add_issue("B")
    fake.add_link(a, b)
    ad = make_adapter(fake.url, jql="project = ENG")
    rs = compute_ready_set(ad.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in rs.ready] == [a]
    assert ad.claim(rs.ready[0].item, "p@h", 60)
    ad.finish(a, "p@h", Outcome("done"))
    assert fake.issue(a).status == "To Do"
    rs = compute_ready_set(ad.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in rs.ready] == [b]
    # another pool learns it from the `jr2:done` marker the first time it tries to claim A
    other = make_adapter(fake.url, jql="project = ENG")
    first = compute_ready_set(other.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in first.ready] == [a]
    assert other.claim(first.ready[0].item, "q@h", 60) is False
    again = compute_ready_set(other.snapshot(), now=datetime.now(UTC))
    assert [e.item.id for e in again.ready] == [b]


def test_work_without_a_transition_drains_a_chain(fake: FakeJira, tmp_path: Path) -> None:
    keys = [fake.add_issue(f"I{i}") for i in range(4)]
    for x, y in itertools.pairwise(keys):
        fake.add_link(x, y)
    log = tmp_path / "worked.log"
    res = subprocess.run([*LAUNCHER, "work", f"jira:{fake.url}", "--jql", "project = ENG", *FAST,
                          "--", "sh", "-c", f'echo "$JR2_ITEM_ID" >> {log}'],
                         cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert log.read_text().split() == keys


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_own_writes_wake_no_pool(fake: FakeJira, tmp_path: Path) -> None:
    """Wakes per worked item from jr2's own writes (claim comment, label edits, renewals,
    transition, outcome marker, as the fake delivers them): 0. A person's change still wakes."""
    keys = [fake.add_issue(f"I{i}") for i in range(3)]
    other = fake.add_issue("Elsewhere", project="OPS")
    port, log = _free_port(), tmp_path / "worked.log"
    fake.webhook(f"http://127.0.0.1:{port}/webhook", "s3cret")
    env = dict(env_for(tmp_path), JR2_WEBHOOK_SECRET="s3cret")
    proc = subprocess.Popen([*LAUNCHER, "work", f"jira:{fake.url}", "--jql", "project = ENG",
                             "--wait", "--listen", f"127.0.0.1:{port}", "--webhook-secret-env",
                             "JR2_WEBHOOK_SECRET", "--lease", "3", "--write-spacing", "0.001",
                             "--poll-every", "60", "--on-success-transition", "Done", "--",
                             "sh", "-c", f'echo "$JR2_ITEM_ID" >> {log}; sleep 1.5'],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
                fake.issue(k).status == "Done" and not fake.issue(k).labels for k in keys):
            time.sleep(0.1)
        fake.flush()
        own = list(fake.deliveries)
        assert own and all(isinstance(d["answer"], dict) and "woke" in d["answer"]
                           for d in own), [d for d in own if "woke" not in d["answer"]]
        renewals = [e for e in fake.requests("PUT", r"/comment/\d+$") if e.get("kind") == "claim"]
        assert renewals, "the 1.5 s workers renewed their 3 s leases"
        wakes = sum(1 for d in own if d["answer"]["woke"])
        assert wakes == 0, [(d["event"], d["type"], d["answer"]) for d in own
                            if d["answer"]["woke"]]
        # a change made by someone else wakes; one outside the projects in scope does not
        fake.set_status(other, "In Progress")
        fake.set_status(keys[0], "To Do")
        fake.flush()
        last = fake.deliveries[len(own):len(own) + 2]  # the pool was idle: these come first
        assert [(d["key"], d["answer"]["woke"]) for d in last] == [(other, False),
                                                                  (keys[0], True)], last
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert sorted(set(log.read_text().split()) & set(keys)) == sorted(keys), err[-2000:]
    print(f"\nwebhook deliveries for {len(keys)} worked items: {len(own)}, wakes: {wakes}")


@pytest.mark.parametrize("cloud", [True, False])
def test_a_report_counts_an_issue_settled_done_without_a_transition_as_done(cloud: bool) -> None:
    """`jr2 ready` after a pool finished A with no success transition: A (still "To Do" in
    Jira, with jr2's done marker) is not listed as ready, and its dependent B is."""
    fake = FakeJira(cloud=cloud).start()
    try:
        a, b, c = fake.add_issue("A"), fake.add_issue("B"), fake.add_issue("C")
        fake.add_link(a, b)
        pool = make_adapter(fake.url, jql="project = ENG")
        item = next(it for it in pool.snapshot().items if it.id == a)
        assert pool.claim(item, "p@h", 60)
        pool.finish(a, "p@h", Outcome("done"))
        fake.add_comment(c, "a person writes: jr2 done? not yet", "someone")  # words prove nothing
        report = make_adapter(fake.url, jql="project = ENG", read_only=True)
        rs = compute_ready_set(report.snapshot(), now=datetime.now(UTC))
        assert sorted(e.item.id for e in rs.ready) == [b, c]
    finally:
        fake.stop()
