"""GitLab deltas (`jr2_gitlab/delta.py`) against the fake GitLab: edits seen through deltas give
the Ready-set a full snapshot gives, an unchanged poll is one request, an Issue Hook marks what
changed, and a sign of a gap answers a full snapshot."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter

from jr2_core import Failure, Outcome
from jr2_gitlab.tracker import GitLabTracker
from jr2_sources import Delta, Snapshot, compute_ready_set
from jr2_sources.capabilities.deltas.reader import ReadyReader
from jr2_sources.readyset import ReadySet


def shape(rs: ReadySet) -> dict[str, Any]:
    return {"ready": sorted((e.item.id, e.item.in_scope) for e in rs.ready),
            "blocked": sorted((e.item.id, e.item.in_scope) for e in rs.blocked),
            "claimed": sorted((e.item.id, e.claim.holder) for e in rs.claimed)}


def full_shape(url: str, **options: Any) -> dict[str, Any]:
    """The shape of the Ready-set a fresh adapter's full reading gives (the reference a
    delta must agree with)."""
    full = make_adapter(url, **options)
    try:
        return shape(compute_ready_set(full.snapshot(), now=datetime.now(UTC)))
    finally:
        full.close()


def reader_of(a: GitLabTracker) -> ReadyReader:
    return ReadyReader(a.snapshot, a.changes, children_block=True, clock=time.time,
                       resync_every=None)


def hook(a: GitLabTracker, iid: int) -> None:
    """An Issue Hook as GitLab documents it (the fields jr2 reads)."""
    body = json.dumps({"object_kind": "issue", "project": {"path_with_namespace": "g/p"},
                       "object_attributes": {"iid": iid}}).encode()
    verdict = a.webhook({"X-Gitlab-Event": "Issue Hook",
                         "Idempotency-Key": f"k-{random.random()}"}, body, None)
    assert verdict.wake and verdict.touched == (str(iid),)


@pytest.mark.parametrize("options", [{}, {"label": ["agent"]}], ids=["all", "label"])
@pytest.mark.parametrize("seed", [1, 2])
def test_edits_seen_through_deltas_give_the_full_snapshots_ready_set(
        fake: FakeGitLab, seed: int, options: dict[str, Any]) -> None:
    rng = random.Random(seed)
    iids = [fake.add_issue("g/p", f"issue {i}", labels=["agent"] if i % 2 else [],
                           description=f"Depends on #{i - 1}" if i % 5 == 4 else "")
            for i in range(16)]
    fake.block(("g/p", 1), ("g/p", 3))
    fake.set_parent(("g/p", 6), ("g/p", 5))
    a = make_adapter(fake.url, **options)
    other = make_adapter(fake.url)
    reader = reader_of(a)
    reader.read().ready.close()
    kinds: list[str] = []
    done: list[str] = []
    for _ in range(25):
        open_ = [i for i in iids if i in fake.projects["g/p"]["issues"]
                 and fake.issue("g/p", i)["state"] == "opened"]
        n = rng.choice(open_)
        op = rng.choice(["close", "label", "unlabel", "block", "claim", "new", "delete"])
        if op == "close":
            fake.close_issue("g/p", n)
        elif op == "label":
            fake.set_labels("g/p", n, [*fake.issue("g/p", n)["labels"], "agent"])
        elif op == "unlabel":
            fake.set_labels("g/p", n, [x for x in fake.issue("g/p", n)["labels"]
                                       if x != "agent"])
        elif op == "block" and len(open_) > 1:
            fake.block(("g/p", rng.choice([m for m in open_ if m != n])), ("g/p", n))
        elif op == "claim":
            items = {it.id: it for it in other.snapshot().items}
            if f"g/p#{n}" in items:
                other.claim(items[f"g/p#{n}"], "pool-b", 600)
        elif op == "new":
            iids.append(fake.add_issue("g/p", "new", labels=rng.choice([[], ["agent"]])))
        elif op == "delete" and len(open_) > 3:
            fake.delete_issue("g/p", n)
            hook(a, n)
        done.append(op)
        got = a.changes()
        kinds.append("full" if isinstance(got, Snapshot) else "delta")
        inc = reader._inc
        assert inc is not None
        if isinstance(got, Snapshot):
            inc.reset(got, now=datetime.now(UTC))
        else:
            inc.apply(got, now=datetime.now(UTC))
        want = full_shape(fake.url, **options)
        assert shape(inc.ready_set()) == want, done
    assert kinds.count("delta") >= 15, kinds


def test_an_unchanged_poll_is_one_request(fake: FakeGitLab) -> None:
    for i in range(150):
        fake.add_issue("g/p", f"issue {i}")
    fake.advance(60)  # a backlog written before the pool started
    a = make_adapter(fake.url)
    assert isinstance(a.changes(), Snapshot)
    before = len(fake.requests)
    got = a.changes()
    assert isinstance(got, Delta) and not got
    sent = fake.requests[before:]
    assert len(sent) == 1, sent
    _, path, query = sent[0]
    assert path.endswith("/issues") and "updated_after" in query and "state" not in query


def test_a_claim_shows_up_in_the_next_delta_and_a_close_leaves(fake: FakeGitLab) -> None:
    for i in range(5):
        fake.add_issue("g/p", f"issue {i}")
    fake.advance(60)
    a = make_adapter(fake.url)
    snap = a.changes()
    assert isinstance(snap, Snapshot)
    assert a.claim(snap.items[0], "pool-a", 600)
    got = a.changes()
    assert isinstance(got, Delta)
    assert [it.id for it in got.items] == ["g/p#1"] and got.items[0].claim is not None
    fake.advance(2)
    fake.close_issue("g/p", 2)
    got = a.changes()
    assert isinstance(got, Delta) and got.left == {"g/p#2": "done"}


def test_an_issue_hook_is_read_directly_and_a_gone_issue_is_a_full_snapshot(
        fake: FakeGitLab) -> None:
    for i in range(3):
        fake.add_issue("g/p", f"issue {i}")
    fake.advance(60)
    a = make_adapter(fake.url)
    assert isinstance(a.changes(), Snapshot)
    fake.projects["g/p"]["issues"][2]["labels"] = ["jr2:failed"]  # no updated_at move
    hook(a, 2)
    before = len(fake.requests)
    got = a.changes()
    assert isinstance(got, Delta) and [it.id for it in got.items] == ["g/p#2"]
    assert any(p.endswith("/issues/2") for _, p, _ in fake.requests[before:])
    fake.delete_issue("g/p", 3)
    hook(a, 3)
    got = a.changes()
    assert isinstance(got, Snapshot) and "g/p#3" not in [it.id for it in got.items]


def test_no_detail_keeps_full_readings(fake: FakeGitLab) -> None:
    fake.add_issue("g/p", "one")
    a = make_adapter(fake.url, detail=False)
    assert isinstance(a.changes(), Snapshot) and isinstance(a.changes(), Snapshot)



def test_our_own_claim_costs_a_delta_one_request_and_a_release_is_read_whole(
        fake: FakeGitLab) -> None:
    """A delta rebuilds an issue whose change is our own claim from what it last read (no
    links, children or notes request: one request in all at N = 1,000); once the claim is not
    ours (a failure) it is read whole. Each Ready-set is the full reading's."""
    for i in range(1000):
        fake.add_issue("g/p", f"issue {i}", description="Depends on #2" if i == 4 else "")
    fake.block(("g/p", 1), ("g/p", 2))
    fake.set_parent(("g/p", 7), ("g/p", 2))
    fake.advance(60)
    a = make_adapter(fake.url)
    reader = reader_of(a)
    reader.read().ready.close()
    inc = reader._inc
    assert inc is not None

    def step() -> list[str]:
        before = len(fake.requests)
        got = a.changes()
        sent = [p for _, p, _ in fake.requests[before:]]
        assert isinstance(got, Delta)
        inc.apply(got, now=datetime.now(UTC))
        want = full_shape(fake.url)
        assert shape(inc.ready_set()) == want
        return sent

    held = next(it for it in a.snapshot().items if it.id == "g/p#2")
    assert held.blockers and held.children  # blocked, with a child: what a rebuild must keep
    step()
    assert a.claim(held, "pool-a", 600)
    sent = step()
    assert len(sent) == 1 and sent[0].endswith("/issues"), sent
    got = {e.item.id: e for e in inc.ready_set().claimed}
    assert got["g/p#2"].claim.holder == "pool-a"
    assert [b.id for b in got["g/p#2"].item.blockers] == ["g/p#1"]
    assert [c.id for c in got["g/p#2"].item.children] == ["g/p#7"]
    a.finish("g/p#2", "pool-a", Outcome("failed", failure=Failure("broke")))
    sent = step()
    assert any(p.endswith("/issues/2/links") for p in sent), sent
    assert any(p.endswith("/issues/2/notes") for p in sent), sent


def test_a_blocker_moved_to_another_project_still_blocks_its_dependents(
        fake: FakeGitLab) -> None:
    """Moving an issue closes the original (`moved_to_id` names the new one) and its links
    follow the new, open issue without touching the issue it blocks. The delta sees only the
    original closing: taking that for "done" would start the dependent while its blocker is
    still open, where a full reading (the dependent's links) keeps it blocked."""
    fake.project("g/other")
    blocker = fake.add_issue("g/p", "blocker")
    blocked = fake.add_issue("g/p", "blocked")
    fake.block(("g/p", blocker), ("g/p", blocked))
    fake.advance(60)  # the links' notes are old news by the first reading
    adapter = make_adapter(fake.url)
    try:
        reader = reader_of(adapter)
        reader.read().ready.close()
        assert reader.last is not None
        assert shape(reader.last)["blocked"] == [("g/p#2", True)]
        fake.move_issue("g/p", blocker, "g/other")
        reader.read().ready.close()
        want = full_shape(fake.url)
        assert want["ready"] == [] and want["blocked"] == [("g/p#2", True)]
        assert shape(reader.last) == want
    finally:
        adapter.close()


def test_a_claim_rechecks_the_scope_and_keeps_nothing_on_an_issue_outside_it(
        fake: FakeGitLab) -> None:
    """The claim reads the issue once it has won (`still_to_do`); that read judges the
    scope too, so an issue the label filter stopped selecting since the reading the pool
    chose it from (a change a delta may not see: a label renamed or deleted) is lost: no
    claim label, and the claim note is deleted again."""
    n = fake.add_issue("g/p", "agent work", labels=["agent"])
    adapter = make_adapter(fake.url, label=["agent"])
    try:
        (item,) = adapter.snapshot().items
        fake.set_labels("g/p", n, ["other"])
        assert adapter.claim(item, "pool-1", 60) is False
        issue = fake.issue("g/p", n)
        assert issue["labels"] == ["other"]
        assert [x for x in issue["notes"] if not x["system"]] == []
    finally:
        adapter.close()
