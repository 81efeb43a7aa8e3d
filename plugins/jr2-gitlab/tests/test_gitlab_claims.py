"""The claim protocol over notes against the stateful fake: sequential and simultaneous
contenders (threads and separate processes), leases in server time, settle, and human labels."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter

from jr2_core import Failure, Outcome
from jr2_sources import SnapshotItem

HERE = Path(__file__).parent


def _item(iid: int) -> SnapshotItem:
    return SnapshotItem(id=f"g/p#{iid}", title="t")


def test_a_second_contender_loses_and_leaves_no_note(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "one")
    a, b = make_adapter(fake.url), make_adapter(fake.url)
    assert a.claim(_item(iid), "pool-a@h", 60) is True
    assert b.claim(_item(iid), "pool-b@h", 60) is False
    issue = fake.issue("g/p", iid)
    assert "jr2:claimed" in issue["labels"]
    assert len(issue["notes"]) == 1  # the loser deleted its note
    # per claim: POST note, GET notes, GET issue, PUT add_labels; a loser: POST, GET, DELETE
    assert a.client.stats.requests == 4 and b.client.stats.requests == 3


def test_simultaneous_thread_contenders_have_one_winner(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "race")
    adapters = [make_adapter(fake.url) for _ in range(8)]
    barrier = threading.Barrier(len(adapters))
    wins: list[int] = []

    def run(n: int) -> None:
        barrier.wait()
        if adapters[n].claim(_item(iid), f"pool-{n}@h", 60):
            wins.append(n)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(adapters))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert len(fake.issue("g/p", iid)["notes"]) == 1


def test_simultaneous_process_contenders_have_one_winner(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "race across processes")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from gitlab_helpers import make_adapter; from jr2_sources import SnapshotItem;"
        "a = make_adapter(sys.argv[2]);"
        "print(a.claim(SnapshotItem(id=sys.argv[3], title='t'), sys.argv[4], 60))"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(HERE), fake.url, f"g/p#{iid}",
                               f"proc-{n}@h"], stdout=subprocess.PIPE, text=True)
             for n in range(4)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(outs) == ["False", "False", "False", "True"], outs


def test_an_expired_lease_is_taken_over_in_server_time(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "lease")
    dead, alive = make_adapter(fake.url), make_adapter(fake.url)
    assert dead.claim(_item(iid), "dead@h", 30)
    fake.advance(31)  # the server's clock, not ours
    snap = alive.snapshot()
    assert snap.items[0].claim is None
    assert alive.claim(_item(iid), "alive@h", 30) is True
    assert dead.renew(f"g/p#{iid}", "dead@h", 30) is False


def test_renew_moves_the_note_and_keeps_the_item(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "renew")
    a = make_adapter(fake.url)
    assert a.claim(_item(iid), "p@h", 30)
    fake.advance(20)
    assert a.renew(f"g/p#{iid}", "p@h", 30) is True
    fake.advance(20)  # 40s after the claim, 20s after the renewal: still held
    assert make_adapter(fake.url).claim(_item(iid), "q@h", 30) is False


def test_done_closes_and_removes_only_the_claim_label(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "settle", labels=["agent", "needs-review"])
    fake.issue("g/p", iid)["assignees"] = [{"id": 9, "username": "grace"}]
    a = make_adapter(fake.url)
    assert a.claim(_item(iid), "p@h", 60)
    a.finish(f"g/p#{iid}", "p@h", Outcome("done", output="ok"))
    issue = fake.issue("g/p", iid)
    assert issue["state"] == "closed"
    assert issue["labels"] == ["agent", "needs-review"]
    assert issue["assignees"] == [{"id": 9, "username": "grace"}]
    assert "jr2:done" in issue["notes"][0]["body"]


def test_failed_marks_the_issue_with_the_reason(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "fails")
    a = make_adapter(fake.url)
    assert a.claim(_item(iid), "p@h", 60)
    a.finish(f"g/p#{iid}", "p@h", Outcome("failed", failure=Failure("tests broke")))
    assert fake.issue("g/p", iid)["labels"] == ["jr2:failed"]
    item = a.snapshot().items[0]
    assert item.failed == "tests broke"
    assert make_adapter(fake.url).claim(_item(iid), "q@h", 60) is False


def test_a_read_only_adapter_refuses_to_write(fake: FakeGitLab) -> None:
    iid = fake.add_issue("g/p", "ro")
    ro = make_adapter(fake.url, read_only=True)
    with pytest.raises(Exception, match="read-only"):
        ro.claim(_item(iid), "p@h", 60)
    assert fake.writes() == 0


def test_the_request_log_holds_no_token_in_any_url(fake: FakeGitLab) -> None:
    fake.add_issue("g/p", "x")
    make_adapter(fake.url).snapshot()
    assert "glpat" not in json.dumps(fake.requests)


def test_marked_issues_outside_the_filter_are_listed_out_of_scope(fake: FakeGitLab) -> None:
    ours = fake.add_issue("g/p", "ours", labels=["agent"])
    other = fake.add_issue("g/p", "another scope's failure", labels=["ops", "jr2:failed"])
    fake.add_issue("g/p", "not marked, not ours", labels=["ops"])
    snap = make_adapter(fake.url, label=["agent"]).snapshot()
    assert {it.id: it.in_scope for it in snap.items} == {f"g/p#{ours}": True,
                                                        f"g/p#{other}": False}
