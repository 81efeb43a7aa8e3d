"""The REST client: one-line errors without the token, the retry layer, write spacing, auth."""

from __future__ import annotations

import email.utils
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import responses
from gh_helpers import TOKEN, make_client
from pydantic import SecretStr

from jr2_core.errors import ConfigError, SourceError
from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.trackers.github.auth import api_url, resolve_token
from jr2_sources.trackers.github.client import GitHubHTTPError

API = "https://api.github.com"
URL = f"{API}/repos/o/r/issues"


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.mark.parametrize(("status", "message", "expected"), [
    (401, "Bad credentials",
     "github:o/r: the token was refused (HTTP 401: Bad credentials); check GH_TOKEN / "
     "GITHUB_TOKEN"),
    (403, "Resource not accessible by personal access token",
     "github:o/r: the token cannot read issues (HTTP 403: Resource not accessible by personal "
     "access token)"),
    (404, "Not Found", "github:o/r: the token cannot read issues (HTTP 404: not found or no "
                       "access)"),
    (422, f"Validation Failed for {TOKEN}",
     "github:o/r: GitHub refused to read issues (HTTP 422: Validation Failed for ***)"),
])
def test_errors_are_one_line_without_the_token(rsps: responses.RequestsMock, status: int,
                                               message: str, expected: str) -> None:
    rsps.add(responses.GET, URL, json={"message": message}, status=status)
    client = make_client(API)
    with pytest.raises(GitHubHTTPError) as info:
        client.get("/repos/o/r/issues")
    assert str(info.value) == expected
    assert info.value.status == status and TOKEN not in repr(info.value)
    assert len(rsps.calls) == 1  # no retry: waiting does not grant a permission
    assert rsps.calls[0].request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in repr(client.__dict__)


def test_5xx_then_success_backs_off(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL, json={"message": "x"}, status=502)
    rsps.add(responses.GET, URL, json={"message": "x"}, status=503)
    rsps.add(responses.GET, URL, json=[{"number": 1}], status=200)
    sleeps: list[float] = []
    client = make_client(API, sleeps=sleeps, policy=RetryPolicy(budget=10, backoff=0.5))
    assert client.get("/repos/o/r/issues").data == [{"number": 1}]
    assert sleeps == [0.5, 1.0] and client.stats.retries == 2 and client.stats.requests == 3


def test_429_honours_retry_after(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL, json={"message": "slow down"}, status=429,
             headers={"Retry-After": "7"})
    rsps.add(responses.GET, URL, json=[], status=200)
    sleeps: list[float] = []
    make_client(API, sleeps=sleeps, policy=RetryPolicy(budget=10)).get("/repos/o/r/issues")
    assert sleeps == [7.0]


def test_spent_primary_limit_waits_until_reset_by_server_time(
        rsps: responses.RequestsMock) -> None:
    server_now = 2_000_000_000  # far from the local clock: only the Date header counts
    rsps.add(responses.GET, URL, json={"message": "API rate limit exceeded"}, status=403,
             headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(server_now + 30),
                      "Date": email.utils.formatdate(server_now, usegmt=True)})
    rsps.add(responses.GET, URL, json=[], status=200)
    sleeps: list[float] = []
    make_client(API, sleeps=sleeps, policy=RetryPolicy(budget=60)).get("/repos/o/r/issues")
    assert sleeps == [31.0]


def test_secondary_limit_without_headers_waits_at_least_the_floor(
        rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL, status=403,
             json={"message": "You have exceeded a secondary rate limit."})
    rsps.add(responses.GET, URL, json=[], status=200)
    sleeps: list[float] = []
    make_client(API, sleeps=sleeps, policy=RetryPolicy(budget=100, secondary_wait=60)).get(
        "/repos/o/r/issues")
    assert sleeps == [60.0]


def test_a_wait_beyond_the_budget_fails_at_once(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL, json={"message": "x"}, status=429,
             headers={"Retry-After": "3600"})
    sleeps: list[float] = []
    with pytest.raises(SourceError) as info:
        make_client(API, sleeps=sleeps, policy=RetryPolicy(budget=300)).get("/repos/o/r/issues")
    assert str(info.value) == ("github:o/r: HTTP 429: rate limited: GitHub asks to wait 3600s, "
                               "more than the retry budget (300s)")
    assert sleeps == [] and len(rsps.calls) == 1


def test_persistent_failure_ends_with_a_clear_error(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL, json={"message": "x"}, status=500)
    with pytest.raises(SourceError, match=r"^github:o/r: GitHub kept failing \(HTTP 500\) "
                                          r"after 8 attempt\(s\)$"):
        make_client(API, policy=RetryPolicy(budget=100, backoff=0.001)).get("/repos/o/r/issues")


def test_truncated_json_and_resets_are_retried(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL, body='[{"number": 1', status=200)
    rsps.add(responses.GET, URL, body=requests.ConnectionError("reset by peer"))
    rsps.add(responses.GET, URL, json=[{"number": 1}], status=200)
    client = make_client(API)
    assert client.get("/repos/o/r/issues").data == [{"number": 1}]
    assert client.stats.retries == 2


def test_links_off_the_api_host_are_not_followed(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.GET, URL + "?per_page=100", json=[{"n": 1}],
             headers={"Link": '<https://evil.example/steal?page=2>; rel="next"'})
    with pytest.raises(SourceError, match="off the API host"):
        make_client(API).get_all("/repos/o/r/issues")


def test_writes_are_spaced(rsps: responses.RequestsMock) -> None:
    rsps.add(responses.POST, URL + "/1/labels", json=[])
    client = make_client(API, write_spacing=0.2)
    start = time.monotonic()
    for _ in range(3):
        client.write("POST", "/repos/o/r/issues/1/labels", {"labels": ["x"]})
    assert time.monotonic() - start >= 0.4
    assert client.stats.writes == 3


# -- token and base URL -----------------------------------------------------------------------


def test_token_from_env_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `gh`
    # the gh CLI's order: GH_TOKEN first
    assert resolve_token(API, {"GITHUB_TOKEN": "a1", "GH_TOKEN": "b2"}).get_secret_value() == "b2"
    assert resolve_token(API, {"GITHUB_TOKEN": "a1"}).get_secret_value() == "a1"
    assert resolve_token(API, {"GH_TOKEN": "b2"}).get_secret_value() == "b2"
    assert "b2" not in repr(resolve_token(API, {"GH_TOKEN": "b2"}))
    with pytest.raises(ConfigError, match=r"^github: no token: set GH_TOKEN or GITHUB_TOKEN"):
        resolve_token(API, {})


def test_token_from_gh_auth_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = tmp_path / "gh"
    gh.write_text('#!/bin/sh\n[ "$1 $2 $3 $4" = "auth token --hostname ghe.corp" ] && '
                  'echo gho_fromgh\n')
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    token = resolve_token("https://ghe.corp/api/v3", {})
    assert isinstance(token, SecretStr) and token.get_secret_value() == "gho_fromgh"


def test_api_url() -> None:
    assert api_url({}) == "https://api.github.com"
    assert api_url({"GITHUB_API_URL": "http://127.0.0.1:8080/"}) == "http://127.0.0.1:8080"
    with pytest.raises(ConfigError, match="GITHUB_API_URL"):
        api_url({"GITHUB_API_URL": "ftp://x"})
