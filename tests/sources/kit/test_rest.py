"""`jr2_sources.kit.rest.RestClient`, the body the GitHub and GitLab clients share: what a
subclass gets without writing it (tested through both trackers too; here, what neither tracker
shows)."""

from __future__ import annotations

from typing import ClassVar

import pytest
import responses
from pydantic import SecretStr

from jr2_core.errors import SourceError, SourceHTTPError
from jr2_sources.kit.rest import RestClient
from jr2_sources.kit.retry import RetryPolicy

API = "https://tracker.example/api"
TOKEN = "s3cret-token-value"


class Tracker(RestClient):
    tracker: ClassVar[str] = "Tracker"
    token_hint: ClassVar[str] = "TRACKER_TOKEN"
    max_pages: ClassVar[int] = 3


def client(cls: type[RestClient] = Tracker) -> RestClient:
    return cls(API, SecretStr(TOKEN), label="tracker:x", write_spacing=0.0,
               policy=RetryPolicy(budget=1.0), sleep=lambda s: None)


@responses.activate
def test_no_conditional_get_unless_the_tracker_keeps_etags() -> None:
    responses.get(f"{API}/items", json=[1], headers={"ETag": '"v1"'})
    c = client()
    c.get("/items")
    c.get("/items")
    sent = [call.request.headers.get("If-None-Match") for call in responses.calls]
    assert sent == [None, None] and c.stats.requests == 2

    class Caching(Tracker):
        etag_cache_size: ClassVar[int] = 8

    responses.reset()
    responses.get(f"{API}/items", json=[1], headers={"ETag": '"v1"'})
    responses.get(f"{API}/items", status=304)
    cached = client(Caching)
    first, second = cached.get("/items"), cached.get("/items")
    assert [call.request.headers.get("If-None-Match") for call in responses.calls] == [
        None, '"v1"']
    assert first.data == [1] and second.data == [1] and second.cached and second.status == 304


@responses.activate
def test_paging_stops_at_max_pages_and_never_leaves_the_api_host() -> None:
    loop = {"Link": f'<{API}/items?page=2>; rel="next"'}
    responses.get(f"{API}/items", json=["a"], headers=loop)
    items, _ = client().get_all("/items")
    assert items == ["a", "a", "a"] and len(responses.calls) == 3

    responses.reset()
    responses.get(f"{API}/items", json=["a"],
                  headers={"Link": '<https://evil.example/steal>; rel="next"'})
    with pytest.raises(SourceError, match="refusing to follow a link off the API host"):
        client().get_all("/items")
    assert all(call.request.url.startswith(API) for call in responses.calls)


@responses.activate
def test_errors_are_one_line_name_the_need_and_never_the_token() -> None:
    responses.get(f"{API}/items", status=401, json={"message": f"bad token {TOKEN}"})
    responses.post(f"{API}/items", status=422, json={"message": "title is required"})
    c = client()
    with pytest.raises(SourceHTTPError) as refused:
        c.get("/items")
    assert str(refused.value) == ("tracker:x: the token was refused (HTTP 401: bad token ***); "
                                  "check TRACKER_TOKEN")
    with pytest.raises(SourceHTTPError) as invalid:
        c.write("POST", "/items", {"title": ""}, need="create items")
    assert str(invalid.value) == ("tracker:x: Tracker refused to create items "
                                  "(HTTP 422: title is required)")
    assert c.stats.writes == 1 and c.stats.by_method == {"GET": 1, "POST": 1}
    assert TOKEN not in str(refused.value) + str(invalid.value)
