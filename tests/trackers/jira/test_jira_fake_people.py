"""The fake Jira authors a comment, and records a label edit in the change history, as the
credentials that send it (Jira: the authenticated user), so a person acts over HTTP as a
person would."""

from __future__ import annotations

import requests

from jr2_sources.testing.fakes.jira_server import API, FakeJira


def test_a_comment_is_authored_by_the_credentials_that_post_it(fake: FakeJira) -> None:
    fake.people["Basic YWxpY2U="] = "alice"
    key = fake.add_issue("A")
    url = f"{fake.url}{API}/issue/{key}/comment"
    hers = requests.post(url, json={"body": "/jr2 approve deploy"},
                         headers={"Authorization": "Basic YWxpY2U="}, timeout=5).json()
    mine = requests.post(url, json={"body": "jr2's"}, headers={"Authorization": "Basic eA=="},
                         timeout=5).json()
    assert hers["author"]["accountId"] == "acc-alice"
    assert mine["author"]["accountId"] == fake.me["accountId"]


def test_a_label_edit_is_recorded_as_the_credentials_that_send_it(fake: FakeJira) -> None:
    fake.people["Basic YWxpY2U="] = "alice"
    key = fake.add_issue("A")
    requests.put(f"{fake.url}{API}/issue/{key}", json={"update": {"labels": [
        {"add": "jr2:approve:deploy"}]}}, headers={"Authorization": "Basic YWxpY2U="}, timeout=5)
    [change] = fake.issue(key).history
    assert change["author"]["accountId"] == "acc-alice"
