"""Snapshots from documented issue objects (`responses`): scope, blockers, order, request counts."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import responses
from gh_helpers import make_adapter
from gh_mockapi import API, MockAPI, issue, labels

from jr2_sources.readyset import ReadySet, compute_ready_set
from jr2_sources.testing.fakes.github_server import FakeGitHub, seed
from jr2_sources.trackers.github.tracker import GitHubTracker

APP = "/repos/octo/app/issues"


@pytest.fixture
def api() -> Iterator[MockAPI]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield MockAPI(rsps)


def ready_set(adapter: GitHubTracker, **kw: Any) -> ReadySet:
    return compute_ready_set(adapter.snapshot(**kw), now=datetime.now(UTC))


def reasons(rs: ReadySet, iid: str) -> list[dict[str, Any]]:
    entry = rs.entry(iid)
    return [r.to_json_obj() for r in getattr(entry, "reasons", [])]


@pytest.fixture
def documented(api: MockAPI, fixture: Callable[[str], Any]) -> MockAPI:
    """The fixture repository: the list, the outside refs of #5, details of #3 and #4."""
    api.set(APP, fixture("issues_list.json"))
    api.set("/repos/octo/lib/issues/7", fixture("issue_closed_not_planned.json"))
    api.set(f"{APP}/3/dependencies/blocked_by", fixture("blocked_by.json"))
    api.set(f"{APP}/4/sub_issues", fixture("sub_issues.json"))
    return api


def test_pull_requests_are_left_out_and_ids_are_owner_repo_number(documented: MockAPI) -> None:
    snap = make_adapter(API, "octo/app").snapshot()
    ids = [it.id for it in snap.items]
    assert "octo/app#2" not in ids  # the PR: it has a `pull_request` key
    assert ids == ["octo/app#1", "octo/app#3", "octo/app#4", "octo/app#5", "octo/app#6",
                   "octo/app#7", "octo/app#8"]
    one = snap.items[0]
    assert one.url == "https://github.com/octo/app/issues/1"
    assert one.labels == ["agent", "priority:high"] and one.extra["number"] == 1


def test_readiness_needs_no_per_issue_call(documented: MockAPI) -> None:
    rs = ready_set(make_adapter(API, "octo/app", priority_label=["priority:high=1",
                                                                 "priority:low=3"]))
    # one list page; the only other GETs are #5's body refs outside the listed set
    assert documented.count("GET", APP + "$") == 1
    assert documented.count() == 3
    assert documented.count(path="dependencies|sub_issues|comments") == 0
    assert reasons(rs, "octo/app#3") == [
        {"kind": "open_blocker", "ref": "1 open GitHub dependency", "held_by": None}]
    assert reasons(rs, "octo/app#4") == [{"kind": "open_children", "refs": ["1 open sub-issue"]}]
    assert reasons(rs, "octo/app#7") == [{"kind": "failed", "reason": "marked jr2:failed"}]
    # priority first (high=1, low=3), then oldest
    assert [e.item.id for e in rs.ready] == ["octo/app#1", "octo/app#8", "octo/app#6"]
    assert rs.entry("octo/app#6").item.parent == "octo/app#4"


def test_detail_names_blockers_and_sub_issues(documented: MockAPI,
                                             fixture: Callable[[str], Any]) -> None:
    failed = fixture("issue_comment.json")
    failed["id"] += 1
    failed["body"] = ('<!-- jr2:failed {"holder": "r-1@h", "nonce": "n", "reason": "exit 3"} -->'
                      "\njr2: failed")
    documented.set(f"{APP}/7/comments", [fixture("issue_comment.json"), failed])
    documented.set("/user", fixture("issue_comment.json")["user"])  # the token's: the author
    rs = ready_set(make_adapter(API, "octo/app", read_only=True))  # `jr2 ready`: detail on
    assert reasons(rs, "octo/app#3") == [
        {"kind": "open_blocker", "ref": "octo/app#1", "held_by": None}]  # octo/lib#2 is closed
    assert reasons(rs, "octo/app#4") == [{"kind": "open_children", "refs": ["octo/app#6"]}]
    assert documented.count("GET", "dependencies/blocked_by") == 1
    assert documented.count("GET", "sub_issues") == 1
    # detail mode reads the reason from the failure comment
    assert reasons(rs, "octo/app#7") == [{"kind": "failed", "reason": "exit 3"}]


def test_body_refs_listed_closed_not_planned_and_missing(documented: MockAPI) -> None:
    rs = ready_set(make_adapter(API, "octo/app"))
    # #1 is listed (open, no GET); octo/lib#7 closed as not planned: done; #40: 404 -> missing
    assert reasons(rs, "octo/app#5") == [
        {"kind": "open_blocker", "ref": "octo/app#1", "held_by": None},
        {"kind": "missing_blocker", "ref": "octo/app#40", "state": "missing"}]
    assert rs.entry("octo/app#5").item.extra["closed_not_planned"] == ["octo/lib#7"]
    assert documented.count("GET", "/repos/octo/app/issues/1$") == 0


def test_ignore_sub_issues(documented: MockAPI) -> None:
    rs = ready_set(make_adapter(API, "octo/app", ignore_sub_issues=True))
    assert rs.entry("octo/app#4").status == "ready"


@pytest.mark.parametrize(("status", "state"), [(404, "missing"), (410, "missing"),
                                               (301, "missing"), (403, "inaccessible")])
def test_an_outside_ref_is_looked_up_once(api: MockAPI, status: int, state: str) -> None:
    api.set("/repos/o/r/issues", [issue(1, "o/r", body="Blocked by x/y#9")])
    api.set("/repos/x/y/issues/9", {"message": "nope"}, status=status)
    adapter = make_adapter(API)
    rs = ready_set(adapter)
    assert reasons(rs, "o/r#1") == [{"kind": "missing_blocker", "ref": "x/y#9", "state": state}]
    ready_set(adapter)
    lookups = api.count("GET", "/repos/x/y/issues/9")
    assert lookups == (1 if state == "missing" else 2)  # final answers are not asked again


def test_an_open_outside_ref_unblocks_when_it_closes(api: MockAPI) -> None:
    api.set("/repos/o/r/issues", [issue(1, "o/r", body="needs #2")])
    api.set("/repos/o/r/issues/2", issue(2, "o/r"))
    adapter = make_adapter(API, label=["agent"])  # #2 is outside the filtered list
    api.set("/repos/o/r/issues", lambda q: [issue(1, "o/r", body="needs #2")]
            if q.get("labels") == "agent" else [])
    assert reasons(ready_set(adapter), "o/r#1")[0]["kind"] == "open_blocker"
    api.set("/repos/o/r/issues/2", issue(2, "o/r", state="closed", state_reason="completed"))
    assert ready_set(adapter).entry("o/r#1").status == "ready"


def test_filters_go_to_the_server_and_marked_issues_come_anyway(api: MockAPI) -> None:
    seen: list[dict[str, str]] = []

    def listing(q: dict[str, str]) -> list[dict[str, Any]]:
        seen.append(q)
        if q.get("labels") == "jr2:claimed":
            return [issue(9, "o/r", labels=labels("jr2:claimed"))]
        if q.get("labels") == "jr2:failed":
            return [issue(8, "o/r", labels=labels("jr2:failed"))]
        return [issue(1, "o/r", labels=labels("agent", "ui")),
                issue(2, "o/r", labels=labels("agent", "wontdo")),
                issue(3, "o/r", labels=labels("agent", "ui"), pull_request={"url": "x"})]

    api.set("/repos/o/r/issues", listing)
    api.set("/repos/o/r/milestones", [{"number": 4, "title": "v1"}])
    api.set("/repos/o/r/issues/9/comments", [])
    adapter = make_adapter(API, label=["agent", "ui"], exclude_label=["wontdo"],
                           milestone="v1", assignee="none")
    snap = adapter.snapshot()
    assert [it.id for it in snap.items] == ["o/r#1", "o/r#8", "o/r#9"]
    main = seen[0]
    assert main == {"state": "open", "labels": "agent,ui", "milestone": "4", "assignee": "none",
                    "sort": "updated", "direction": "asc", "per_page": "100"}
    assert {q.get("labels") for q in seen[1:]} == {"jr2:claimed", "jr2:failed"}
    adapter.snapshot()
    assert api.count("GET", "milestones") == 1  # a title is resolved once per process


@pytest.mark.parametrize("n", [250, 1000])
def test_readiness_costs_pages_plus_two_and_an_unchanged_poll_is_all_304(api: MockAPI,
                                                                         n: int) -> None:
    many = [issue(i, "o/r", labels=labels("agent"),
                  issue_dependencies_summary={"blocked_by": i % 3 == 0, "blocking": 0,
                                              "total_blocked_by": i % 3 == 0,
                                              "total_blocking": 0})
            for i in range(1, n + 1)]
    api.set("/repos/o/r/issues", lambda q: [] if q.get("labels", "").startswith("jr2:")
            else many)
    adapter = make_adapter(API, label=["agent"])
    rs = ready_set(adapter)
    assert len(rs.ready) + len(rs.blocked) == n
    first = adapter.client.stats.snapshot()
    assert first["requests"] <= math.ceil(n / 100) + 2
    ready_set(adapter)
    second = adapter.client.stats.snapshot()
    assert second["requests"] - first["requests"] == first["requests"]
    assert second["not_modified"] == first["requests"]
    assert second["points"] == first["points"]  # a 304 costs no rate limit


@pytest.mark.parametrize("edit", [False, True])
def test_a_full_reading_misses_no_open_issue_while_earlier_ones_close(fake: FakeGitHub,
                                                                      edit: bool) -> None:
    """Issues of the first page close (or change) while the pages are read: every issue
    still open at the end was listed."""
    seed(fake, "o/r", 350)
    lists = []

    def person(method: str, path: str) -> None:
        if method != "GET" or path != "/repos/o/r/issues":
            return
        lists.append(path)
        if len(lists) > 1:  # after the first page: its oldest issues leave (or move)
            first = sorted(k for (_, k), i in fake.issues.items() if i.state == "open")[:3]
            for number in first:
                if edit:
                    fake.edit_body("o/r", number, "edited")
                else:
                    fake.close_issue("o/r", number)

    fake.hooks.append(person)
    adapter = make_adapter(fake.url)
    listed = {it.id for it in adapter.snapshot().items}
    fake.hooks.clear()
    still_open = {f"o/r#{k}" for (_, k), i in fake.issues.items() if i.state == "open"}
    assert still_open - listed == set()
    assert len(lists) == 5  # 4 pages, then the first again


def test_label_names_compare_case_insensitively_as_on_github(fake: FakeGitHub) -> None:
    """`--done-label done` in a repository whose label is `Done` (GitHub's names are one label
    whatever the case): done work is not offered again, failures stay failures, excluded stays
    excluded, priorities apply."""
    fake.add_issue("o/r", "finished", labels=["Done"])
    fake.add_issue("o/r", "broke", labels=["JR2:Failed"])
    fake.add_issue("o/r", "skip me", labels=["WontFix"])
    fake.add_issue("o/r", "urgent", labels=["P1"])
    adapter = make_adapter(fake.url, on_success="label", done_label="done",
                           exclude_label=["wontfix"], priority_label=["p1=1"])
    snap = adapter.snapshot()
    by_title = {i.title: i for i in snap.items}
    assert sorted(by_title) == ["broke", "urgent"]
    assert by_title["broke"].failed and by_title["urgent"].priority == 1


def test_an_open_outside_ref_stays_open_when_asked_again(fake: FakeGitHub) -> None:
    """The second reading of an unchanged open outside ref is a 304: still `open`."""
    fake.add_issue("o/r", "Outside the filter")
    fake.add_issue("o/r", "In scope", "needs #1", labels=["agent"])
    adapter = make_adapter(fake.url, label=["agent"])
    for _ in range(2):
        assert reasons(ready_set(adapter), "o/r#2") == [
            {"kind": "open_blocker", "ref": "o/r#1", "held_by": None}]


def test_detail_keeps_an_issue_blocked_when_its_summary_and_endpoint_disagree(
        api: MockAPI) -> None:
    """The summary counts 2 open blockers, the endpoint names one closed and one open (one is
    stale): blocked by the open one and by the one the endpoint does not name."""
    summary = {"blocked_by": 2, "blocking": 0, "total_blocked_by": 2, "total_blocking": 0}
    api.set("/repos/o/r/issues", [issue(1, "o/r", issue_dependencies_summary=summary)])
    api.set("/repos/o/r/issues/1/dependencies/blocked_by",
            [issue(8, "o/r", state="closed"), issue(9, "o/r")])
    rs = ready_set(make_adapter(API, read_only=True))  # `jr2 ready`: detail on
    assert reasons(rs, "o/r#1") == [
        {"kind": "open_blocker", "ref": "o/r#9", "held_by": None},
        {"kind": "open_blocker", "ref": "1 other open GitHub dependency", "held_by": None}]
    api.set("/repos/o/r/issues/1/dependencies/blocked_by", [])  # the endpoint says none
    assert ready_set(make_adapter(API, read_only=True)).entry("o/r#1").status == "blocked"
