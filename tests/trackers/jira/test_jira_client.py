"""Errors are one line with Jira's own text and no token; retries honour Retry-After."""

from __future__ import annotations

import pytest
import requests
import responses
from jira_helpers import TOKEN, load, make_adapter, make_client

from jr2_core.errors import SourceError, UsageError
from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.trackers.jira.client import parse_jira_time

BASE = "https://acme.atlassian.net"
API = f"{BASE}/rest/api/2"


def _ready(rsps: responses.RequestsMock) -> None:
    rsps.get(f"{API}/serverInfo", json=load("serverinfo_cloud.json"))


@pytest.mark.parametrize(("status", "body", "expect"), [
    (401, {"errorMessages": ["You are not authenticated."], "errors": {}},
     "credentials were refused (HTTP 401: You are not authenticated.); check JIRA_EMAIL"),
    (403, {"errorMessages": ["You do not have permission to browse projects."], "errors": {}},
     "cannot search issues (check the JQL) (HTTP 403: You do not have permission"),
    (404, {"errorMessages": ["Not found."], "errors": {}}, "(HTTP 404: Not found.)"),
    (400, load("error_jql.json"),
     "Jira refused to search issues (check the JQL) (HTTP 400: Error in the JQL Query: "
     "Expecting either a value"),
])
def test_errors_are_one_line_with_jiras_text(status: int, body: dict[str, object],
                                             expect: str) -> None:
    with responses.RequestsMock() as rsps:
        _ready(rsps)
        rsps.post(f"{API}/search/jql", json=body, status=status)
        with pytest.raises(SourceError) as err:
            make_adapter(BASE).snapshot()
    text = str(err.value)
    assert expect in text
    assert "\n" not in text and TOKEN not in text and text.startswith(f"jira:{BASE}: ")


def test_a_token_echoed_by_the_server_is_scrubbed() -> None:
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", json={"errorMessages": [f"bad token {TOKEN}"]},
                 status=401)
        with pytest.raises(SourceError) as err:
            make_client(BASE).server_info()
    assert TOKEN not in str(err.value) and "***" in str(err.value)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(status: int) -> None:
    sleeps: list[float] = []
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", json={"errorMessages": ["slow down"]}, status=status,
                 headers={"Retry-After": "7"})
        rsps.get(f"{API}/serverInfo", json=load("serverinfo_cloud.json"))
        client = make_client(BASE, sleeps=sleeps)
        assert client.is_cloud
    assert sleeps == [7.0]
    assert client.stats.requests == 2 and client.stats.retries == 1


def test_5xx_connection_errors_and_truncated_bodies_are_retried_then_give_up() -> None:
    sleeps: list[float] = []
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", status=502)
        rsps.get(f"{API}/serverInfo", body=requests.ConnectionError("reset"))
        rsps.get(f"{API}/serverInfo", body='{"baseUrl": "https://acme', status=200)
        rsps.get(f"{API}/serverInfo", json=load("serverinfo_dc.json"))
        client = make_client(BASE, sleeps=sleeps)
        assert client.is_cloud is False
    assert len(sleeps) == 3
    policy = RetryPolicy(budget=5.0, backoff=0.001, max_attempts=3)
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", status=500)
        with pytest.raises(SourceError, match=r"kept failing \(HTTP 500\) after 3 attempt"):
            make_client(BASE, policy=policy).server_info()


def test_a_retry_after_past_the_budget_fails_at_once() -> None:
    sleeps: list[float] = []
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", status=429, headers={"Retry-After": "3600"})
        with pytest.raises(SourceError, match="asks to wait 3600s, more than the retry budget"):
            make_client(BASE, sleeps=sleeps).server_info()
    assert sleeps == []


def test_the_jira_package_does_not_retry_by_itself() -> None:
    client = make_client(BASE)
    assert client.jira._session.max_retries == 0


def test_a_read_only_client_refuses_writes_before_sending() -> None:
    with responses.RequestsMock() as rsps:
        client = make_client(BASE, read_only=True)
        with pytest.raises(UsageError, match="read-only"):
            client.request("PUT", "/issue/ENG-1", body={"update": {}})
        assert len(rsps.calls) == 0


def test_pat_auth_sends_a_bearer_token_and_cloud_basic_auth() -> None:
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", json=load("serverinfo_dc.json"))
        make_client(BASE, pat=True).server_info()
        assert rsps.calls[0].request.headers["Authorization"] == f"Bearer {TOKEN}"
    with responses.RequestsMock() as rsps:
        rsps.get(f"{API}/serverInfo", json=load("serverinfo_cloud.json"))
        make_client(BASE).server_info()
        assert rsps.calls[0].request.headers["Authorization"].startswith("Basic ")


def test_jira_timestamps_parse() -> None:
    t = parse_jira_time("2024-03-04T10:05:00.123+0000")
    assert (t.year, t.microsecond, t.utcoffset()) == (2024, 123000, t.utcoffset())
    assert parse_jira_time("2024-03-04T10:05:00.000+1000").utcoffset().total_seconds() == 36000
