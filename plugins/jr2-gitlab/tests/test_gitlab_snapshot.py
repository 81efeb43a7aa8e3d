"""Reading a project with `responses` and fixtures in GitLab's documented shapes: pagination,
links in both directions, missing and inaccessible blockers, claims and failures from notes,
exact request counts, one-line errors without the token, and retries."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime
from typing import Any

import pytest
import responses
from gitlab_helpers import TOKEN, fixture, make_adapter, make_client
from responses import matchers

from jr2_core import SourceError
from jr2_sources import BlockerRef, compute_ready_set

BASE = "https://gitlab.example.com"
API = f"{BASE}/api/v4/projects/group%2Fproject"
NOW = datetime(2024, 3, 1, 10, 5, tzinfo=UTC)
DATE = {"Date": email.utils.format_datetime(NOW, usegmt=True)}


def _lists(rsps: responses.RequestsMock) -> None:
    first = {"labels": "agent", "order_by": "created_at", "per_page": "100", "sort": "asc",
             "state": "opened"}
    nxt = f"{API}/issues?labels=agent&order_by=created_at&page=2&per_page=100&sort=asc&state=opened"
    rsps.get(f"{API}/issues", json=fixture("issues_page1.json"),
             headers={"Link": f'<{nxt}>; rel="next"', "x-next-page": "2"},
             match=[matchers.query_param_matcher(first)])
    rsps.get(f"{API}/issues", json=fixture("issues_page2.json"), headers={"x-next-page": ""},
             match=[matchers.query_param_matcher({**first, "page": "2"})])
    issues = fixture("issues_page2.json")
    for lab, found in (("jr2:claimed", [issues[0]]), ("jr2:failed", [issues[1]])):
        rsps.get(f"{API}/issues", json=found, match=[matchers.query_param_matcher(
            {"labels": lab, "per_page": "100", "state": "opened"})])


def _rest(rsps: responses.RequestsMock, detail: bool) -> None:
    rsps.get(f"{API}/issues/1/links", json=fixture("links_1.json"))
    if detail:
        rsps.get(f"{API}/issues/2/links", json=fixture("links_2.json"))
        for iid in (3, 4, 5):
            rsps.get(f"{API}/issues/{iid}/links", json=[])
        rsps.get(f"{API}/issues/5/notes", json=fixture("notes_5.json"), headers=DATE)
        rsps.post(f"{BASE}/api/graphql",
                  json={"data": {"project": {"workItems": {"nodes": [
                      {"iid": "2", "widgets": [{"hasChildren": True, "children": {"nodes": [
                          {"iid": "9", "state": "CLOSED",
                           "webUrl": f"{BASE}/group/project/-/work_items/9"}]}}]}]}}}},
                  match=[matchers.json_params_matcher(
                      {"variables": {"fullPath": "group/project", "first": 5,
                                     "iids": ["1", "2", "3", "4", "5"]}}, strict_match=False)])
    rsps.get(f"{BASE}/api/v4/projects/other%2Fsecret/issues/5", status=403,
             json={"message": "403 Forbidden"})
    rsps.get(f"{API}/issues/40", status=404, json={"message": "404 Not found"})
    rsps.get(f"{BASE}/api/v4/user", json={"id": 1, "username": "pipin"})  # the notes' author
    rsps.get(f"{API}/issues/4/notes", json=fixture("notes_4.json"), headers=DATE,
             match=[matchers.query_param_matcher({"order_by": "created_at", "per_page": "100",
                                                  "sort": "asc"})])


def _by_id(snapshot: Any) -> dict[str, Any]:
    return {i.id: i for i in snapshot.items}


@responses.activate
def test_detail_reads_every_link_and_names_each_blocker() -> None:
    _lists(responses.mock)
    _rest(responses.mock, detail=True)
    adapter = make_adapter(BASE, project="group/project", label=["agent"])
    snap = adapter.snapshot()
    items = _by_id(snap)
    assert sorted(items) == [f"group/project#{n}" for n in (1, 2, 3, 4, 5)]
    two = {(b.id, b.state) for b in items["group/project#2"].blockers}
    assert two == {("group/project#1", "open"), ("group/project#8", "done"),
                   ("other/lib#6", "open")}
    three = {(b.id, b.state) for b in items["group/project#3"].blockers}
    assert three == {("other/secret#5", "inaccessible"), ("group/project#40", "missing")}
    assert items["group/project#1"].blockers == []
    assert items["group/project#1"].extra["blocks"] == ["group/project#2"]  # not relates_to
    assert items["group/project#1"].url == f"{BASE}/group/project/-/issues/1"
    claim = items["group/project#4"].claim
    assert claim is not None and claim.holder == "run1@hostA"  # the lowest live note id
    assert items["group/project#5"].failed == "tests failed"
    assert items["group/project#2"].children == [BlockerRef("group/project#9", "done")]
    # 2 list pages + 2 marked lists + 5 links + 2 description refs + 2 notes listings
    # + 1 GraphQL POST for the children of the 5 listed issues (one page) + 1 `GET /user`
    # (whose markers count: asked once)
    assert adapter.client.stats.requests == 15
    assert adapter.client.stats.writes == 0
    rs = compute_ready_set(snap, now=datetime.now(UTC))
    assert [e.item.id for e in rs.ready] == ["group/project#1"]


@responses.activate
def test_no_detail_reads_links_only_where_blocking_issues_count_says_so() -> None:
    _lists(responses.mock)
    _rest(responses.mock, detail=False)
    adapter = make_adapter(BASE, project="group/project", label=["agent"], detail=False)
    items = _by_id(adapter.snapshot())
    assert {(b.id, b.state) for b in items["group/project#2"].blockers} == {
        ("group/project#1", "open")}
    assert items["group/project#5"].failed == "marked jr2:failed"
    # 4 list calls + 1 links call (issue 1 blocks one open issue) + 2 refs + 1 notes listing
    # + 1 `GET /user` (whose markers count)
    assert adapter.client.stats.requests == 9


@responses.activate
def test_an_unfiltered_list_makes_no_marked_label_calls_and_leaves_excluded_out() -> None:
    page = fixture("issues_page1.json")
    responses.get(f"{API}/issues", json=page)
    for iid in (1, 2, 3):
        responses.get(f"{API}/issues/{iid}/links", json=[])
    responses.get(f"{BASE}/api/v4/projects/other%2Fsecret/issues/5", status=404)
    responses.get(f"{API}/issues/40", json={**page[0], "iid": 40, "state": "closed"})
    adapter = make_adapter(BASE, project="group/project", exclude_label=["agent"])
    assert adapter.snapshot().items == []
    assert adapter.client.stats.requests == 1


@responses.activate
def test_errors_are_one_line_without_the_token() -> None:
    responses.get(f"{API}/issues", status=401, json={"message": f"401 Unauthorized {TOKEN}"})
    adapter = make_adapter(BASE, project="group/project")
    with pytest.raises(SourceError) as exc:
        adapter.snapshot()
    text = str(exc.value)
    assert "\n" not in text and TOKEN not in text
    assert text.startswith("gitlab:group/project: the token was refused (HTTP 401")
    assert "GITLAB_TOKEN" in text


@responses.activate
def test_an_unknown_project_says_the_token_cannot_read_it() -> None:
    responses.get(f"{API}/issues", status=404, json={"message": "404 Project Not Found"})
    with pytest.raises(SourceError, match=r"cannot read issues \(HTTP 404: not found or no "
                                          r"access\)"):
        make_adapter(BASE, project="group/project").snapshot()


@responses.activate
def test_5xx_and_429_are_retried_honouring_retry_after() -> None:
    url = f"{BASE}/api/v4/projects/group%2Fproject/issues"
    responses.get(url, status=502)
    responses.get(url, status=429, headers={"Retry-After": "7"}, json={"message": "Retry later"})
    responses.get(url, json=[])
    sleeps: list[float] = []
    client = make_client(BASE, sleeps=sleeps)
    items, _ = client.get_all("/projects/group%2Fproject/issues")
    assert items == []
    assert client.stats.requests == 3 and client.stats.retries == 2
    assert sleeps[1] == 7.0


@responses.activate
def test_a_403_that_is_not_a_rate_limit_is_not_retried() -> None:
    responses.get(f"{API}/issues", status=403, json={"message": "403 Forbidden"})
    client = make_client(BASE)
    with pytest.raises(SourceError, match="HTTP 403"):
        client.get("/projects/group%2Fproject/issues")
    assert client.stats.requests == 1


@responses.activate
def test_x_next_page_is_followed_when_there_is_no_link_header() -> None:
    responses.get(f"{API}/issues", json=[{"iid": 1}], headers={"x-next-page": "2"},
                  match=[matchers.query_param_matcher({"per_page": "100"})])
    responses.get(f"{API}/issues", json=[{"iid": 2}], headers={"x-next-page": ""},
                  match=[matchers.query_param_matcher({"per_page": "100", "page": "2"})])
    client = make_client(BASE)
    items, _ = client.get_all("/projects/group%2Fproject/issues")
    assert [i["iid"] for i in items] == [1, 2] and client.stats.requests == 2


@responses.activate
def test_a_next_link_to_another_host_is_refused() -> None:
    responses.get(f"{API}/issues", json=[],
                  headers={"Link": '<https://evil.example/steal?page=2>; rel="next"'})
    with pytest.raises(SourceError, match="off the API host"):
        make_client(BASE).get_all("/projects/group%2Fproject/issues")
