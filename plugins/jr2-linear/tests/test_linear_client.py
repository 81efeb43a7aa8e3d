"""The GraphQL client: both credential forms, Linear's rate-limit headers, one-line errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
import responses
from pydantic import SecretStr

from jr2_core import ConfigError, SourceError
from jr2_linear.client import LinearClient, LinearHTTPError, rate_limit_wait, resolve_auth
from jr2_sources.kit.retry import RetryPolicy

URL = "https://api.linear.app/graphql"
DATE = "Wed, 02 Dec 2026 07:00:00 GMT"  # 1796194800 s
NOW_MS = 1796194800 * 1000


def client(sleeps: list[float], *, bearer: bool = False) -> LinearClient:
    return LinearClient(URL, SecretStr("lin_api_secret"), bearer=bearer, label="linear:ENG",
                        sleep=sleeps.append, policy=RetryPolicy(budget=60, backoff=0.01))


def test_a_personal_key_goes_as_it_is_and_an_oauth_token_as_bearer() -> None:
    assert resolve_auth({"LINEAR_API_KEY": "lin_api_x"}) == (SecretStr("lin_api_x"), False)
    assert resolve_auth({"LINEAR_OAUTH_TOKEN": "tok"}) == (SecretStr("tok"), True)
    with pytest.raises(ConfigError, match="LINEAR_API_KEY"):
        resolve_auth({})


@responses.activate
def test_the_authorization_header_of_each_form() -> None:
    responses.post(URL, json={"data": {"viewer": {"id": "u"}}})
    client([]).run("Q", "query Q { viewer { id } }")
    client([], bearer=True).run("Q", "query Q { viewer { id } }")
    sent = [c.request.headers["Authorization"] for c in responses.calls]
    assert sent == ["lin_api_secret", "Bearer lin_api_secret"]


def test_the_wait_follows_the_spent_budgets_reset() -> None:
    spent = {"Date": DATE, "X-RateLimit-Requests-Remaining": "0",
             "X-RateLimit-Requests-Reset": str(NOW_MS + 30_000),
             "X-RateLimit-Complexity-Remaining": "5000",
             "X-RateLimit-Complexity-Reset": str(NOW_MS + 900_000)}
    assert rate_limit_wait(spent) == pytest.approx(31.0)
    assert rate_limit_wait({"Retry-After": "7", **spent}) == 7.0


@responses.activate
def test_http_429_and_5xx_are_retried_then_answered() -> None:
    responses.post(URL, status=429, headers={"Retry-After": "2"}, json={"errors": []})
    responses.post(URL, status=502, body="bad gateway")
    responses.post(URL, json={"data": {"viewer": {"id": "u"}}})
    sleeps: list[float] = []
    ans = client(sleeps).run("Q", "query Q { viewer { id } }")
    assert ans.data == {"viewer": {"id": "u"}} and sleeps[0] == 2.0 and len(sleeps) == 2


@responses.activate
def test_a_graphql_error_is_one_line_without_the_key() -> None:
    body: dict[str, Any] = {"errors": [{"message": "Entity not found: Issue\n(lin_api_secret)",
                                        "extensions": {"code": "INVALID_INPUT"}}]}
    responses.post(URL, status=200, body=json.dumps(body))
    with pytest.raises(LinearHTTPError) as err:
        client([]).run("Jr2Issue", "query Jr2Issue { viewer { id } }")
    text = str(err.value)
    assert "\n" not in text and "lin_api_secret" not in text and err.value.code == "INVALID_INPUT"
    assert text.startswith("linear:ENG: Linear refused Jr2Issue")


@responses.activate
def test_a_mutation_counts_as_a_write() -> None:
    responses.post(URL, json={"data": {"attachmentDelete": {"success": True}}})
    c = client([])
    c.run("Jr2MarkerDelete", 'mutation Jr2MarkerDelete { attachmentDelete(id: "a") { success } }')
    assert (c.stats.requests, c.stats.writes) == (1, 1)
    assert isinstance(LinearHTTPError("x", 400), SourceError)
