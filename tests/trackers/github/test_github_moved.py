"""A renamed or transferred repository (finding 1): GitHub answers its old name with
`301 Moved Permanently`; jr2 resolves the new name once, says so once, and sends every later
request (writes included) to the new name, never through a redirect."""

from __future__ import annotations

import logging

import pytest
from gh_helpers import make_adapter

from jr2_core import Outcome
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub


def test_a_renamed_repository_is_followed_to_its_new_name(
        fake: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    a = fake.add_issue("o/r", "a")
    b = fake.add_issue("o/r", "b")
    fake.add_sub_issue("o/r", b, a)
    fake.rename_repo("o/r", "o/renamed")
    adapter = make_adapter(fake.url)
    with caplog.at_level(logging.WARNING, logger="jr2.github"):
        snap = adapter.snapshot()
        assert [i.id for i in snap.items] == ["o/r#1", "o/r#2"]  # not "0 ready"
        assert adapter.claim(SnapshotItem(id=f"o/r#{a}"), "pool-1", 60)
        adapter.record(f"o/r#{a}", "pool-1", Outcome(status="done"))
        again = adapter.snapshot()
    assert [i.id for i in again.items] == ["o/r#2"]
    assert fake.issue("o/renamed", a).state == "closed"
    moved = [r.getMessage() for r in caplog.records if "moved to" in r.getMessage()]
    assert len(moved) == 1 and "o/renamed" in moved[0]
    redirected = fake.requests(path=r"^/repos/o/r(/|$)")
    assert [e["status"] for e in redirected] == [301, 301]  # the first list call, then /repos/o/r
    writes = [e for e in fake.requests() if e["method"] != "GET"]
    assert writes and all(e["path"].startswith("/repos/o/renamed/") for e in writes)
    assert all(e["status"] < 300 for e in writes)


def test_a_transferred_issue_is_not_taken_for_a_moved_repository(fake: FakeGitHub) -> None:
    a = fake.add_issue("o/r", "a")
    fake.add_issue("o/r", "b", f"Depends on #{a}")
    fake.transfer_issue("o/r", a)
    snap = make_adapter(fake.url, detail=True).snapshot()
    (item,) = snap.items
    assert [(b.id, b.state) for b in item.blockers] == [(f"o/r#{a}", "missing")]
    assert fake.requests("GET", r"^/repos/o/r$")  # asked once whether the repository moved
