"""Limits on Jira (`--exclusive-by`, `--global-cap`, `--control-issue`): the clean-up of lock
comments left by killed pools, on Cloud (markers in comment properties) and Data Center."""

from __future__ import annotations

import pytest
from jira_helpers import make_adapter

from jr2_sources.capabilities.limits.comment_locks import CommentLocks, LockedTracker
from jr2_sources.testing.fakes.jira_server import FakeJira


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_dead_lock_comments_are_deleted_and_nothing_else(cloud: bool) -> None:
    jira = FakeJira(cloud=cloud).start()
    try:
        control = jira.add_issue("jr2 coordination")
        note = jira.add_comment(control, "please keep this thread tidy", "alice")
        ad = make_adapter(jira.url, jql="project = ENG AND labels = agent")
        LockedTracker(ad, control).check()  # the user named it: jr2 may write there
        dead = CommentLocks(ad, control, global_cap=None)
        for i in range(2):  # a pool killed holding two locks
            assert dead.acquire(f"ENG-{i + 10}", ("db",) if i else (), "gone", 5) is not None
        jira.advance(5 + 5 + 1)  # past the lease and one more (`Date` is in whole seconds)
        held = CommentLocks(ad, control, global_cap=None).acquire("ENG-2", ("db",), "p2", 60)
        assert held is not None
        left = [c["id"] for c in jira.issue(control).comments]
        assert left == [note, held.comment_id]
        deleted = jira.requests("DELETE", f"/issue/{control}/comment/")
        assert len(deleted) == 2 and all(e["status"] == 204 for e in deleted)
    finally:
        jira.stop()
