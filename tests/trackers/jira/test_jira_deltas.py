"""Jira deltas (`JiraTracker.changes`): the same Ready-set as a full reading through a sequence of
people's edits, at most two searches per unchanged poll and per claim whatever the backlog's
size, the account's time zone, webhook marks, a missed delta repaired by the resynchronisation,
and held items watched in one search."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jira_helpers import make_adapter

from jr2_core import Outcome
from jr2_sources.capabilities.deltas.incremental import Delta, IncrementalReadySet
from jr2_sources.capabilities.deltas.reader import ReadyReader
from jr2_sources.readyset import ReadySet, Snapshot, compute_ready_set
from jr2_sources.testing.fakes.jira_server import FakeJira
from jr2_sources.tracker import CLAIM_REMOVED, GONE
from jr2_sources.trackers.jira.jql import jql_time
from jr2_sources.trackers.jira.tracker import JiraTracker

JQL = "project = ENG AND labels = agent"
HOLDER = "run-1@host"


def _shape(rs: ReadySet) -> tuple[list[str], list[str], list[str]]:
    return ([e.item.id for e in rs.ready], sorted(e.item.id for e in rs.blocked),
            sorted(e.item.id for e in rs.claimed))


def _reference(fake: FakeJira, **options: Any) -> tuple[list[str], list[str], list[str]]:
    """The Ready-set of a fresh full reading (another process, nothing cached)."""
    ref = make_adapter(fake.url, jql=JQL, **options)
    try:
        return _shape(compute_ready_set(ref.snapshot(), now=datetime.now(UTC)))
    finally:
        ref.close()


class Follower:
    """An adapter read by deltas into an incremental Ready-set, deliveries passed by hand."""

    def __init__(self, fake: FakeJira, *, webhooks: bool = True, **options: Any) -> None:
        self.fake = fake
        self.webhooks = webhooks
        self.ad = make_adapter(fake.url, jql=JQL, **options)
        first = self.ad.changes()
        assert isinstance(first, Snapshot)
        self.inc = IncrementalReadySet(first, now=datetime.now(UTC))
        self.kinds: list[str] = []

    def step(self, *, full: bool = False) -> tuple[list[str], list[str], list[str]]:
        if self.webhooks:
            for payload in self.fake.pending():
                self.ad.webhook({}, json.dumps(payload).encode(), None)
        else:
            self.fake.pending()
        got = self.ad.changes(full=full)
        self.kinds.append(type(got).__name__)
        if isinstance(got, Snapshot):
            self.inc.reset(got, now=datetime.now(UTC))
        else:
            self.inc.apply(got, now=datetime.now(UTC))
        return _shape(self.inc.ready_set())


def _backlog(fake: FakeJira) -> dict[str, str]:
    """Ten issues in scope, one outside the filter, one in another project; some links."""
    k = {f"e{i}": fake.add_issue(f"E{i}", labels=["agent"]) for i in range(1, 11)}
    k["other"] = fake.add_issue("not ours", labels=["people"])
    k["ops"] = fake.add_issue("ops blocker", project="OPS")
    fake.add_link(k["e1"], k["e2"])  # e1 blocks e2
    fake.add_link(k["e2"], k["e3"])
    fake.add_link(k["other"], k["e4"])  # a blocker outside the filter, same project
    fake.add_link(k["ops"], k["e5"])  # a blocker in another project
    fake.advance(600)  # the backlog is ten minutes old when the pool starts
    return k


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_deltas_give_the_ready_set_of_a_full_reading_through_peoples_edits(cloud: bool) -> None:
    fake = FakeJira(cloud=cloud, time_zone="America/Los_Angeles").start()
    try:
        k = _backlog(fake)
        fake.capture()
        f = Follower(fake)
        assert f.step() == _reference(fake)
        edits = [
            ("a blocker is done", lambda: fake.set_status(k["e1"], "Done")),
            ("it is reopened", lambda: fake.set_status(k["e1"], "To Do")),
            ("an outside blocker is done", lambda: fake.set_status(k["other"], "Done")),
            ("another project's blocker is done", lambda: fake.set_status(k["ops"], "Done")),
            ("a link is added", lambda: fake.add_link(k["e6"], k["e7"])),
            ("a link is removed", lambda: fake.remove_link(k["e2"], k["e3"])),
            ("a person resolves a ready issue", lambda: fake.set_status(k["e8"], "Done")),
            ("a person edits one out of the JQL", lambda: fake.edit(k["e9"], remove="agent")),
            ("and back in", lambda: fake.edit(k["e9"], add="agent")),
            ("a person takes one", lambda: fake.edit(k["e10"], assignee={"accountId": "x"})),
            ("a blocker is deleted", lambda: fake.delete_issue(k["e6"])),
            ("a person moves one to another project", lambda: fake.move_issue(k["e4"], "OPS")),
            ("a new issue", lambda: fake.add_issue("new", labels=["agent"])),
            ("another project's blocker reopens", lambda: fake.set_status(k["ops"], "To Do")),
        ]
        for what, edit in edits:
            edit()
            assert f.step() == _reference(fake), what
        assert f.kinds == ["Delta"] * (len(edits) + 1), "no edit needed a full reading"
    finally:
        fake.stop()


def test_edits_that_bump_updated_need_no_webhook() -> None:
    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        fake.capture()
        f = Follower(fake, webhooks=False)
        for edit in (lambda: fake.set_status(k["e1"], "Done"),
                     lambda: fake.set_status(k["ops"], "Done"),
                     lambda: fake.edit(k["e9"], remove="agent"),
                     lambda: fake.set_status(k["e1"], "To Do"),
                     lambda: fake.add_issue("new", labels=["agent"])):
            edit()
            assert f.step() == _reference(fake)
        assert set(f.kinds) == {"Delta"}
    finally:
        fake.stop()


def test_a_missed_delta_is_repaired_by_the_resynchronisation() -> None:
    """A link removed with no delivery (links do not bump `updated`): the deltas keep the old
    blocker until the reader's next full reading, `resync_every` after the last one."""
    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        ad = make_adapter(fake.url, jql=JQL)
        t = [1000.0]
        reader = ReadyReader(ad.snapshot, ad.changes, children_block=True, clock=lambda: t[0],
                             resync_every=300.0)
        reader.read()
        fake.remove_link(k["e1"], k["e2"])
        t[0] += 10
        assert k["e2"] not in [it.id for it in reader.read().ready], "missed: no delivery"
        t[0] += 300
        assert k["e2"] in [it.id for it in reader.read().ready], "the resync repairs it"
        assert _shape(reader.last) == _reference(fake)  # type: ignore[arg-type]
    finally:
        fake.stop()


def _big(fake: FakeJira, n: int) -> list[str]:
    keys = [fake.add_issue(f"Issue {i}", labels=["agent"]) for i in range(n)]
    for i in range(0, n - 1, 3):
        fake.add_link(keys[i], keys[i + 1])
    fake.advance(600)
    return keys


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_an_unchanged_poll_is_at_most_two_requests_at_n_1000(cloud: bool) -> None:
    fake = FakeJira(cloud=cloud).start()
    try:
        _big(fake, 1000)
        ad = make_adapter(fake.url, jql=JQL)
        assert isinstance(ad.changes(), Snapshot)
        full = ad.client.stats.requests
        assert full >= 10, "a full reading is ceil(N/100) pages"
        ad.changes()  # the first delta also looks the account's time zone up, once
        for _ in range(3):
            before = ad.client.stats.requests
            delta = ad.changes()
            assert isinstance(delta, Delta) and not delta
            assert ad.client.stats.requests - before <= 2
    finally:
        fake.stop()


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_a_claims_snapshot_part_is_at_most_two_requests_at_n_1000(cloud: bool) -> None:
    fake = FakeJira(cloud=cloud).start()
    try:
        _big(fake, 1000)
        ad = make_adapter(fake.url, jql=JQL, on_success_transition="Done")
        reader = ReadyReader(ad.snapshot, ad.changes, children_block=True, clock=time.time)
        reader.read()
        reader.read()  # the account's time zone, once
        costs: list[int] = []
        for _ in range(12):
            before = ad.client.stats.requests
            view = reader.read()
            costs.append(ad.client.stats.requests - before)
            item = next(view.ready)
            view.ready.close()
            assert ad.claim(item, HOLDER, 600.0)
            ad.settle(item.id, HOLDER, Outcome("done"))
        assert max(costs) <= 2, costs
        reader.read()
        assert _shape(reader.last) == _reference(fake)  # type: ignore[arg-type]
    finally:
        fake.stop()


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Pacific/Auckland", None])
def test_the_delta_search_reads_dates_in_the_accounts_time_zone(zone: str | None) -> None:
    """Jira reads a JQL date in the account's zone: written in UTC for an account in Los Angeles
    it would mean 8 hours later, and the edit below would be missed. With no known zone the
    search reaches 12 hours back instead."""
    fake = FakeJira(time_zone=zone or "UTC").start()
    if zone is None:
        fake.me.pop("timeZone")
    try:
        k = _backlog(fake)
        ad = make_adapter(fake.url, jql=JQL)
        ad.changes()
        ad.changes()  # the first delta also reads the outside blockers' states once
        fake.set_status(k["e1"], "Done")
        delta = ad.changes()
        assert isinstance(delta, Delta) and delta.left == {k["e1"]: "done"}
        sent = [e["body"]["jql"] for e in fake.requests("POST", "/search")][-2:]
        assert all("updated >= " in jql for jql in sent)
    finally:
        fake.stop()


def test_jql_time_is_never_later_than_the_moment() -> None:
    at = datetime(2026, 3, 1, 12, 34, 56, tzinfo=UTC)
    assert jql_time(at, ZoneInfo("America/Los_Angeles")) == "2026/03/01 04:34"
    assert jql_time(at, UTC) == "2026/03/01 12:34"
    assert jql_time(at, None) == "2026/03/01 00:34"  # unknown zone: 12 hours back
    # 2026-11-01 01:30 happens twice in New York; on its first pass Jira may read the second
    first_pass = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT
    assert jql_time(first_pass, ZoneInfo("America/New_York")) == "2026/11/01 00:30"
    second_pass = datetime(2026, 11, 1, 6, 30, tzinfo=UTC)  # 01:30 EST
    assert jql_time(second_pass, ZoneInfo("America/New_York")) == "2026/11/01 01:30"
    for minutes in range(0, 60 * 48, 7):  # whatever Jira picks, it is not later
        t = datetime(2026, 10, 31, tzinfo=UTC) + timedelta(minutes=minutes, seconds=13)
        text = jql_time(t, ZoneInfo("America/New_York"))
        wall = datetime.strptime(text, "%Y/%m/%d %H:%M")
        for fold in (0, 1):
            assert wall.replace(tzinfo=ZoneInfo("America/New_York"), fold=fold) <= t


def test_held_items_are_watched_in_one_search_and_people_still_win() -> None:
    fake = FakeJira().start()
    try:
        keys = _big(fake, 1000)
        ad = make_adapter(fake.url, jql=JQL)
        snap = ad.snapshot()
        by = {it.id: it for it in snap.items}
        held = keys[1000 - 4:]
        for key in held:
            assert ad.claim(by[key], HOLDER, 600.0)
        before = ad.client.stats.requests
        assert ad.watch(held, HOLDER) == {}
        assert ad.client.stats.requests - before == 1, "one search, no comment listing"
        fake.edit(held[0], remove="jr2:claimed")
        fake.edit(held[1], add="jr2:failed")
        fake.set_status(held[2], "Done")
        taken = ad.watch(held, HOLDER)
        assert taken == {held[0]: CLAIM_REMOVED, held[1]: "it was marked failed",
                         held[2]: GONE}
    finally:
        fake.stop()


def test_a_failed_delta_search_keeps_what_it_was_to_read_again() -> None:
    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        ad: JiraTracker = make_adapter(fake.url, jql=JQL)
        ad.changes()
        ad.changes()
        fake.remove_link(k["e1"], k["e2"])
        ad.webhook({}, json.dumps({"webhookEvent": "issuelink_deleted", "issueLink": {
            "id": 1, "sourceIssueId": fake.issue(k["e1"]).id,
            "destinationIssueId": fake.issue(k["e2"]).id}}).encode(), None)
        fake.fault(503, path="/search", times=99)
        with pytest.raises(Exception, match="503"):
            ad.changes()
        fake.faults.clear()
        delta = ad.changes()
        assert isinstance(delta, Delta)
        assert [it.id for it in delta.items if it.id == k["e2"]] == [k["e2"]]
        assert [b.id for it in delta.items if it.id == k["e2"] for b in it.blockers] == []
    finally:
        fake.stop()


def test_jr2_work_resync_every_repairs_a_change_no_delta_shows(tmp_path: Path) -> None:
    """`jr2 work jira:... --resync-every 1s`: a link removed while the pool runs (no delivery,
    and a link moves no `updated`) frees its issue at the next full reading, while another item
    still runs; at the default 5 minutes the pool would end deadlocked with it blocked."""
    import os
    import subprocess
    import sys

    fake = FakeJira().start()
    try:
        a = fake.add_issue("A", labels=["agent"])
        b = fake.add_issue("B", labels=["agent"])
        x = fake.add_issue("X, outside the filter")
        fake.add_link(x, a)
        env = dict(os.environ, JIRA_EMAIL="bot@example.com", JIRA_API_TOKEN="test-token-1234",
                   JR2_STATE_DIR=str(tmp_path / ".jr2"))
        env.pop("JIRA_PAT", None)
        script = f'if [ "$JR2_ITEM_ID" = {b} ]; then sleep 5; fi'
        proc = subprocess.Popen(
            [sys.executable, "-m", "jr2_core.cli", "work", f"jira:{fake.url}", "--jql", JQL,
             "--write-spacing", "0.001", "--poll-every", "0.2", "--resync-every", "1s",
             "--cap", "2", "--on-success-transition", "Done", "--", "sh", "-c", script],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while "jr2:claimed" not in fake.issue(b).labels and time.monotonic() < deadline:
                time.sleep(0.05)
            fake.remove_link(x, a)
            _out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err[-2000:]
        assert fake.issue(a).status == "Done" and fake.issue(b).status == "Done"
    finally:
        fake.stop()


_EDITS = st.lists(st.tuples(
    st.sampled_from(["done", "reopen", "progress", "unlabel", "label", "assign", "unassign",
                     "fail", "link", "unlink", "delete", "new", "move"]),
    st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=12)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_EDITS, min_size=1, max_size=4))
@example(steps=[[("unlabel", 0, 0)], [("done", 0, 0), ("move", 0, 0)]])  # a blocker moved away
@example(steps=[[("move", 0, 0)], [("done", 0, 0)]])  # then done under its new key
@example(steps=[[("move", 0, 0), ("delete", 0, 0)]])  # then deleted under its new key
# a blocker done, then reopened and taken by a person: in the filter, no item, open again
@example(steps=[[("done", 0, 0)], [("reopen", 0, 0), ("assign", 0, 0)]])
def test_any_sequence_of_edits_seen_through_deltas_gives_the_full_ready_set(
        steps: list[list[tuple[str, int, int]]]) -> None:
    """Property: whatever people do between two polls (with the webhook delivering links and
    deletions), the Ready-set read by deltas equals a fresh full reading's."""
    fake = FakeJira().start()
    try:
        keys = [fake.add_issue(f"E{i}", labels=["agent"]) for i in range(6)]
        keys += [fake.add_issue("outside", labels=["people"]), fake.add_issue("ops", "OPS")]
        fake.add_link(keys[0], keys[1])
        fake.add_link(keys[6], keys[2])
        fake.add_link(keys[7], keys[3])
        fake.advance(600)
        fake.capture()
        f = Follower(fake)
        for edits in steps:
            for what, i, j in edits:
                a, b = keys[i], keys[j]
                if a not in fake.issues or b not in fake.issues:
                    continue
                linked = any((ln.blocker, ln.blocked) == (a, b) for ln in fake.links)
                if what == "done":
                    fake.set_status(a, "Done")
                elif what == "reopen":
                    fake.set_status(a, "To Do")
                elif what == "progress":
                    fake.set_status(a, "In Progress")
                elif what in ("unlabel", "label", "fail"):
                    label = "jr2:failed" if what == "fail" else "agent"
                    fake.edit(a, **({"remove": label} if what == "unlabel" else {"add": label}))
                elif what in ("assign", "unassign"):
                    fake.edit(a, assignee={"accountId": "person"} if what == "assign" else None)
                elif what == "link" and a != b and not linked:
                    fake.add_link(a, b)
                elif what == "unlink" and linked:
                    fake.remove_link(a, b)
                elif what == "delete" and i not in (6, 7):
                    fake.delete_issue(a)
                elif what == "new":
                    keys.append(fake.add_issue("new", labels=["agent"]))
                elif what == "move" and i not in (6, 7):
                    keys[i] = fake.move_issue(a, "OPS")
            assert f.step() == _reference(fake)
    finally:
        fake.stop()


def test_only_a_verified_delivery_marks_issues_to_read_again() -> None:
    import hashlib
    import hmac

    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        fake.capture()
        ad = make_adapter(fake.url, jql=JQL)
        ad.changes()
        ad.changes()
        fake.remove_link(k["e1"], k["e2"])
        (payload,) = fake.pending()
        body = json.dumps(payload).encode()
        forged = ad.webhook({"X-Hub-Signature": "sha256=" + "0" * 64}, body, "s3cret")
        assert forged.status == 401
        assert not ad.changes(), "a forged delivery names nothing"
        sig = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
        assert ad.webhook({"X-Hub-Signature": sig}, body, "s3cret").wake
        delta = ad.changes()
        assert isinstance(delta, Delta)
        assert [(it.id, it.blockers) for it in delta.items if it.id == k["e2"]] == [(k["e2"], [])]
    finally:
        fake.stop()


@pytest.mark.parametrize(("overlap", "seen"), [("2m", True), ("1s", False)])
def test_the_overlap_covers_the_searchs_staleness(overlap: str, seen: bool) -> None:
    """Cloud's search shows an edit late (here 90 s, on the fake's clock). An edit the first
    delta cannot see yet is seen by the next one, because each delta reaches back
    `--delta-overlap` (default 2 minutes) before the previous one began; with 1 s it would be
    lost until the next full reading."""
    fake = FakeJira(search_lag=90.0).start()
    try:
        k = _backlog(fake)
        ad = make_adapter(fake.url, jql=JQL, delta_overlap=overlap)
        ad.changes()
        ad.changes()
        fake.set_status(k["e1"], "Done")
        fake.advance(65)
        assert not ad.changes(), "not visible to search yet"
        fake.advance(30)
        delta = ad.changes()
        assert isinstance(delta, Delta)
        assert (delta.left == {k["e1"]: "done"}) is seen
    finally:
        fake.stop()


def test_own_writes_are_read_consistently_on_cloud() -> None:
    """The issues this process claimed or settled go in `reconcileIssues`: the next delta sees
    them at once although the search is stale."""
    fake = FakeJira(search_lag=90.0).start()
    try:
        k = _backlog(fake)
        ad = make_adapter(fake.url, jql=JQL, on_success_transition="Done")
        snap = ad.changes()
        assert isinstance(snap, Snapshot)
        ad.changes()
        item = next(it for it in snap.items if it.id == k["e1"])
        assert ad.claim(item, HOLDER, 600.0)
        ad.settle(item.id, HOLDER, Outcome("done"))
        delta = ad.changes()
        assert isinstance(delta, Delta) and delta.left == {k["e1"]: "done"}
        sent = fake.requests("POST", "/search/jql")[-2:]
        assert all(fake.issue(k["e1"]).id in e["body"]["reconcileIssues"] for e in sent)
    finally:
        fake.stop()


def test_another_pools_claim_is_read_again_when_its_lease_ends_here() -> None:
    """Renewals are comment edits, which need not move the issue's `updated`: a claim another
    pool keeps renewing stays claimed in the deltas, and one it stopped renewing ends."""
    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        other = make_adapter(fake.url, jql=JQL)
        snap = other.snapshot()
        x, y = (next(it for it in snap.items if it.id == k[n]) for n in ("e9", "e10"))
        # y's lease (1 s) ends well within the 2.8 s below, even read through a `Date` header
        # that keeps whole seconds
        assert other.claim(x, "other@host", 2.0) and other.claim(y, "other@host", 1.0)
        ad = make_adapter(fake.url, jql=JQL)
        reader = ReadyReader(ad.snapshot, ad.changes, children_block=True, clock=time.time)
        assert {k["e9"], k["e10"]} <= set(reader.read().holders)
        for _ in range(4):  # x is renewed, y is not
            time.sleep(0.7)
            assert other.renew(k["e9"], "other@host", 2.0)
        view = reader.read()
        ready = [it.id for it in view.ready]
        assert k["e9"] in view.holders and k["e9"] not in ready
        assert k["e10"] not in view.holders and k["e10"] in ready
        assert _shape(reader.last) == _reference(fake)  # type: ignore[arg-type]
    finally:
        fake.stop()


def test_a_refused_delta_or_watch_search_falls_back_to_a_full_reading() -> None:
    """Jira refusing a delta search (400: e.g. an issue it names was deleted meanwhile) is a
    sign of a gap: a full reading answers instead; so for the one search that watches."""
    fake = FakeJira().start()
    try:
        keys = _big(fake, 150)
        ad = make_adapter(fake.url, jql=JQL)
        snap = ad.changes()
        assert isinstance(snap, Snapshot)
        ad.changes()
        fake.fault(400, path="/search", times=1, message="Error in the JQL Query")
        assert isinstance(ad.changes(), Snapshot)
        item = next(it for it in snap.items if it.id == keys[-1])
        assert ad.claim(item, HOLDER, 600.0)
        fake.fault(400, path="/search", times=1, message="Error in the JQL Query")
        before = ad.client.stats.requests
        assert ad.watch([keys[-1]], HOLDER) == {}
        # refused, then a full reading: 2 pages and the held issue's comments (2 on Cloud)
        assert ad.client.stats.requests - before == 1 + 2 + 2
    finally:
        fake.stop()


def test_resync_every_and_delta_overlap_are_checked_durations() -> None:
    from jr2_sources.trackers.jira.config import JiraConfig

    cfg = JiraConfig(jql="project = ENG", resync_every="2m", delta_overlap="30s")
    assert (cfg.resync_every, cfg.delta_overlap) == (120.0, 30.0)
    with pytest.raises(ValueError, match="resync_every"):
        JiraConfig(jql="project = ENG", resync_every="0s")


def test_a_parked_issue_and_its_answer_comment_are_seen_by_deltas() -> None:
    """`--gate`: another pool parks an issue (its claim comment edited into the gate marker,
    the claim label kept), then a person with Edit Issues answers with a `/jr2 approve`
    comment. A comment need not move the issue's `updated` (the fake's does not), so the
    deltas read parked issues again every time: the pool sees the answer at its next poll."""
    from jr2_sources.capabilities.approvals.policy import ApprovalRequest, awaiting

    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        ad = make_adapter(fake.url, jql=JQL)
        reader = ReadyReader(ad.snapshot, ad.changes, children_block=True, clock=time.time)
        assert k["e9"] in [it.id for it in reader.read().ready]
        other = make_adapter(fake.url, jql=JQL)
        [x] = [it for it in other.snapshot().items if it.id == k["e9"]]
        assert other.claim(x, "other@host", 60)
        other.park(k["e9"], "other@host", ApprovalRequest("deploy", "ship it?"))
        assert k["e9"] not in [it.id for it in reader.read().ready]
        last = reader.last
        assert last is not None
        [parked] = [e.item for e in last.blocked if e.item.id == k["e9"]]
        assert awaiting(parked) is not None
        stamp = fake.issue(k["e9"]).updated
        who = fake.person("alice")
        editor = str(who.get("accountId") or who.get("name"))  # Cloud: an account id
        fake.editors.add(editor)
        fake.add_comment(k["e9"], "/jr2 approve deploy", "alice")
        assert fake.issue(k["e9"]).updated == stamp  # the answer did not bump `updated`
        assert k["e9"] in [it.id for it in reader.read().ready]
        last = reader.last
        assert last is not None
        [answered] = [e.item for e in last.ready if e.item.id == k["e9"]]
        assert [(g.status, g.by) for g in answered.gates] == [("approved", editor)]
        assert _shape(reader.last) == _reference(fake)  # type: ignore[arg-type]
    finally:
        fake.stop()


def test_an_issue_this_pool_parked_is_read_again_and_its_answer_seen() -> None:
    """The pool that parks an issue (a comment edit, the claim label kept: `updated` need not
    move) reads it again in its next delta, so it knows the issue parked and then sees a
    person's answer comment at the next poll (not at its lease's end or the resync)."""
    from jr2_sources.capabilities.approvals.policy import ApprovalRequest, awaiting

    fake = FakeJira().start()
    try:
        k = _backlog(fake)
        ad = make_adapter(fake.url, jql=JQL)
        reader = ReadyReader(ad.snapshot, ad.changes, children_block=True, clock=time.time)
        view = reader.read()
        [x] = [it for it in view.ready if it.id == k["e9"]]
        view.ready.close()
        assert ad.claim(x, HOLDER, 600)
        reader.read().ready.close()
        ad.park(k["e9"], HOLDER, ApprovalRequest("deploy"))
        assert k["e9"] not in [it.id for it in reader.read().ready]
        last = reader.last
        assert last is not None
        [parked] = [e.item for e in last.blocked if e.item.id == k["e9"]]
        assert awaiting(parked) is not None
        who = fake.person("alice")
        fake.editors.add(str(who.get("accountId") or who.get("name")))
        fake.add_comment(k["e9"], "/jr2 approve deploy", "alice")
        assert k["e9"] in [it.id for it in reader.read().ready]
        assert _shape(reader.last) == _reference(fake)  # type: ignore[arg-type]
    finally:
        fake.stop()
