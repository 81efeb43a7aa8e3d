"""Snapshots from Atlassian-shaped answers (`responses`): links, done, sub-tasks, order, pages."""

from __future__ import annotations

import copy
import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
import responses
from jira_helpers import load, make_adapter

from jr2_sources.readyset import compute_ready_set
from jr2_sources.trackers.jira.client import FIELDS

BASE = "https://acme.atlassian.net"
API = f"{BASE}/rest/api/2"


def _server(rsps: responses.RequestsMock, cloud: bool = True) -> None:
    rsps.get(f"{API}/serverInfo", json=load("serverinfo_cloud.json" if cloud
                                            else "serverinfo_dc.json"))


def _bodies(rsps: responses.RequestsMock, suffix: str) -> list[dict[str, Any]]:
    return [json.loads(c.request.body) for c in rsps.calls if c.request.url.endswith(suffix)]


def test_cloud_snapshot_reads_links_subtasks_priority_and_pages() -> None:
    with responses.RequestsMock() as rsps:
        _server(rsps)
        rsps.post(f"{API}/search/jql", json=load("search_jql_page1.json"))
        rsps.post(f"{API}/search/jql", json=load("search_jql_page2.json"))
        rsps.get(f"{API}/myself", json={"accountId": "5b10ac8d82e05b22cc7d4ef5"})
        ad = make_adapter(BASE, jql="project = ENG ORDER BY created")
        snap = ad.snapshot()
        sent = _bodies(rsps, "/search/jql")
    by = {it.id: it for it in snap.items}
    # the blocked issue carries `inwardIssue` = its blocker; `outwardIssue` and other types
    # are not blockers
    assert [(b.id, b.state) for b in by["ENG-1"].blockers] == [("ENG-2", "open"),
                                                               ("ENG-3", "done")]
    assert [(c.id, c.state) for c in by["ENG-2"].children] == [("ENG-7", "open"),
                                                               ("ENG-8", "done")]
    assert by["ENG-7"].parent == "ENG-2"
    assert (by["ENG-1"].priority, by["ENG-2"].priority, by["ENG-7"].priority) == (2, 1, 3)
    assert by["ENG-9"].failed == "marked jr2:failed"
    assert "ENG-10" not in by, "an issue assigned to a person is not jr2's to take"
    assert sent[0]["fields"] == list(FIELDS) and sent[0]["maxResults"] == 100
    assert sent[0]["jql"].endswith("AND statusCategory != Done ORDER BY created")
    assert "nextPageToken" not in sent[0] and sent[1]["nextPageToken"] == "CAEaAggD"
    rs = compute_ready_set(snap, now=datetime.now(UTC))
    assert [e.item.id for e in rs.ready] == ["ENG-7"]
    assert {e.item.id for e in rs.blocked} == {"ENG-1", "ENG-2", "ENG-9"}
    assert ad.client.stats.requests == 4  # serverInfo, 2 pages, myself


def test_data_center_uses_search_with_start_at() -> None:
    with responses.RequestsMock() as rsps:
        _server(rsps, cloud=False)
        rsps.post(f"{API}/search", json=load("search_dc.json"))
        rsps.get(f"{API}/myself", json={"name": "jr2bot", "key": "jr2bot"})
        ad = make_adapter(BASE)
        ids = {it.id for it in ad.snapshot().items}
        body = _bodies(rsps, "/search")[0]
    assert ids == {"ENG-1", "ENG-2", "ENG-7", "ENG-9"}
    assert body["startAt"] == 0 and body["maxResults"] == 100
    assert body["fields"] == list(FIELDS)


def _issue(n: int) -> dict[str, Any]:
    page = load("search_jql_page2.json")["issues"][0]
    issue = copy.deepcopy(page)
    issue["key"] = f"ENG-{n}"
    issue["fields"]["parent"] = None
    return issue


@pytest.mark.parametrize("cloud", [True, False])
@pytest.mark.parametrize("n", [1, 100, 250])
def test_requests_for_n_issues_are_ceil_n_over_100_plus_1(cloud: bool, n: int) -> None:
    issues = [_issue(i) for i in range(1, n + 1)]

    def cloud_page(request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        start = int(body.get("nextPageToken") or 0)
        out: dict[str, Any] = {"issues": issues[start:start + 100]}
        if start + 100 < n:
            out["nextPageToken"] = str(start + 100)
        out["isLast"] = start + 100 >= n
        return 200, {}, json.dumps(out)

    def dc_page(request: Any) -> tuple[int, dict[str, str], str]:
        start = json.loads(request.body)["startAt"]
        return 200, {}, json.dumps({"startAt": start, "maxResults": 100, "total": n,
                                    "issues": issues[start:start + 100]})

    with responses.RequestsMock() as rsps:
        _server(rsps, cloud)
        rsps.add_callback(responses.POST, f"{API}/search/jql" if cloud else f"{API}/search",
                          callback=cloud_page if cloud else dc_page)
        ad = make_adapter(BASE)
        assert len(ad.snapshot().items) == n
        assert ad.client.stats.requests == math.ceil(n / 100) + 1  # serverInfo and the pages


def test_a_missing_status_category_is_looked_up_once_per_status() -> None:
    page = load("search_jql_page1.json")
    for issue in page["issues"]:
        for link in issue["fields"]["issuelinks"]:
            for side in ("inwardIssue", "outwardIssue"):
                if side in link:
                    link[side]["fields"]["status"].pop("statusCategory")
    page.pop("nextPageToken")
    page["isLast"] = True
    with responses.RequestsMock() as rsps:
        _server(rsps)
        rsps.post(f"{API}/search/jql", json=page)
        todo = load("search_jql_page2.json")["issues"][0]["fields"]["status"]
        rsps.get(f"{API}/status/10000", json=todo)
        rsps.get(f"{API}/status/10001", json=load("search_jql_page1.json")["issues"][0]
                 ["fields"]["issuelinks"][1]["inwardIssue"]["fields"]["status"])
        ad = make_adapter(BASE)
        by = {it.id: it for it in ad.snapshot().items}
        ad.snapshot()  # cached: no second status lookup
        lookups = [c for c in rsps.calls if "/status/" in c.request.url]
    assert [(b.id, b.state) for b in by["ENG-1"].blockers] == [("ENG-2", "open"),
                                                               ("ENG-3", "done")]
    assert len(lookups) == 2


def test_link_type_by_id_and_custom_priority_order() -> None:
    page = load("search_jql_page1.json")
    page.pop("nextPageToken")
    page["isLast"] = True
    with responses.RequestsMock() as rsps:
        _server(rsps)
        rsps.post(f"{API}/search/jql", json=page)
        ad = make_adapter(BASE, link_type="10003", priority_order=["High", "Highest"])
        by = {it.id: it for it in ad.snapshot().items}
    assert [b.id for b in by["ENG-1"].blockers] == ["ENG-6"]  # the "Relates" type, by id
    assert (by["ENG-1"].priority, by["ENG-2"].priority) == (0, 1)
