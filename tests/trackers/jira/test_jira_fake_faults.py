"""Over real HTTP against the fake: injected faults are retried by the one retry layer."""

from __future__ import annotations

import pytest
from jira_helpers import make_adapter, make_client

from jr2_core.errors import SourceError
from jr2_sources.testing.fakes.jira_server import FakeJira


@pytest.mark.parametrize(("kind", "status", "retry_after"), [
    ("status", 503, 2.0), ("status", 429, 3.0), ("status", 502, None), ("reset", 0, None),
    ("truncate", 0, None)])
def test_search_faults_are_retried(fake: FakeJira, kind: str, status: int,
                                   retry_after: float | None) -> None:
    keys = [fake.add_issue(f"I{i}", labels=["agent"]) for i in range(3)]
    sleeps: list[float] = []
    client = make_client(fake.url, sleeps=sleeps)
    client.server_info()
    fake.fault(status, kind=kind, method="POST", path="/search", retry_after=retry_after)
    ad = make_adapter(fake.url, client=client)
    assert [it.id for it in ad.snapshot().items] == keys
    assert len(sleeps) == 1
    if retry_after is not None:
        assert sleeps == [retry_after]
    assert client.stats.retries == 1


def test_a_slow_answer_is_waited_for(fake: FakeJira) -> None:
    fake.add_issue("A")
    fake.fault(kind="slow", delay=0.3, path="/serverInfo")
    assert make_client(fake.url).is_cloud


def test_a_write_fault_is_retried_and_the_claim_still_holds(fake: FakeJira) -> None:
    key = fake.add_issue("A", labels=["agent"])
    ad = make_adapter(fake.url)
    item = ad.snapshot().items[0]
    fake.fault(500, method="PUT", path=rf"/issue/{key}$")
    assert ad.claim(item, "p@h", 60)
    assert "jr2:claimed" in fake.issue(key).labels


def test_refused_credentials_are_one_line(fake: FakeJira) -> None:
    fake.deny_auth = True
    with pytest.raises(SourceError, match=r"HTTP 401: You are not authenticated"):
        make_adapter(fake.url).snapshot()
