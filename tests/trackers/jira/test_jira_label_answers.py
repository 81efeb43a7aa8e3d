"""Gate answers by label on Jira, Cloud and Data Center: the adder comes from the change
history (`expand=changelog`), is checked for Edit Issues, and the history is read only while
the issue carries an answer label."""

from __future__ import annotations

import pytest
from jira_helpers import make_adapter

from jr2_sources.capabilities.approvals.policy import ApprovalRequest
from jr2_sources.testing.fakes.jira_server import FakeJira

JQL = "project = ENG AND labels = agent"


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_an_answer_label_counts_from_an_editor_only(cloud: bool) -> None:
    jira = FakeJira(cloud=cloud).start()
    try:
        key = jira.add_issue("Ship", labels=["agent"])
        jira.editors.add(jira.person("alice")["accountId" if cloud else "name"])
        ad = make_adapter(jira.url, jql=JQL)
        [item] = ad.snapshot().items
        assert ad.claim(item, "pool-1", 600)
        ad.park(key, "pool-1", ApprovalRequest("deploy", "ship it?"))
        jira.clear_log()
        [gate] = next(i for i in ad.snapshot().items if i.id == key).gates
        assert gate.status == "awaiting"
        assert not jira.requests("GET", f"/issue/{key}$")  # no answer label: no history read
        jira.edit(key, add="jr2:approve:deploy", by="mallory")
        [gate] = next(i for i in ad.snapshot().items if i.id == key).gates
        who = jira.person("mallory")["accountId" if cloud else "name"]
        assert (gate.status, gate.ignored) == ("awaiting", (who,))
        jira.edit(key, add="jr2:approve:later-gate", by="alice")  # another gate: no answer
        jira.edit(key, add="jr2:reject:deploy", by="alice")
        [gate] = next(i for i in ad.snapshot().items if i.id == key).gates
        alice = jira.person("alice")["accountId" if cloud else "name"]
        assert (gate.status, gate.by) == ("rejected", alice)
        got = jira.requests("GET", f"/issue/{key}$")
        assert got and all(e["query"].get("expand") == "changelog" for e in got)
    finally:
        jira.stop()
