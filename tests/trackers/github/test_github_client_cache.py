"""The conditional-request cache of a long-lived pool stays bounded by what it reads again:
"changed since" lists keep their last few URLs, and a settled item's answers are dropped."""

from __future__ import annotations

from gh_helpers import make_adapter, make_client

from jr2_core import Outcome
from jr2_sources.kit.rest import FAMILY_KEEP
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub


def cached(client: object) -> list[str]:
    return list(client._etags)  # type: ignore[attr-defined]


def test_a_since_list_keeps_its_last_urls_and_their_304s(fake: FakeGitHub) -> None:
    fake.add_issue("o/r")
    client = make_client(fake.url)
    stamps = [f"2026-01-01T00:00:{s:02d}Z" for s in range(12)]
    for since in stamps:
        client.get("/repos/o/r/issues", {"since": since, "state": "all"})
    assert cached(client) == [client.url("/repos/o/r/issues", {"since": s, "state": "all"})
                              for s in stamps[-FAMILY_KEEP:]]
    fake.clear_log()
    for since in stamps[-2:] * 3:  # a sweep's and a delta's URL, alternating: all 304
        client.get("/repos/o/r/issues", {"since": since, "state": "all"})
    assert [e["status"] for e in fake.requests()] == [304] * 6
    client.get("/repos/o/r/issues", {"state": "open"})  # no moving param: its own entry
    assert len(cached(client)) == FAMILY_KEEP + 1


def test_a_settled_item_leaves_nothing_in_the_cache(fake: FakeGitHub) -> None:
    n, other = fake.add_issue("o/r"), fake.add_issue("o/r")
    a = make_adapter(fake.url)
    assert a.claim(SnapshotItem(id=f"o/r#{n}"), "pool-a", 60)
    assert a.claim(SnapshotItem(id=f"o/r#{other}"), "pool-a", 60)
    assert a.watch([f"o/r#{n}", f"o/r#{other}"], "pool-a") == {}
    a.settle(f"o/r#{n}", "pool-a", Outcome("done"))
    left = [u.split("/repos/o/r/issues/", 1)[-1].split("?")[0] for u in cached(a.client)]
    assert str(n) not in left and f"{n}/comments" not in left
    assert str(other) in left  # still held: its answers serve the next watch


def test_a_list_that_got_shorter_drops_its_pages_past_the_new_end(fake: FakeGitHub) -> None:
    numbers = [fake.add_issue("o/r") for _ in range(250)]
    client = make_client(fake.url)
    found, _ = client.get_all("/repos/o/r/issues", {"state": "open"})
    assert len(found) == 250 and len(cached(client)) == 3  # its three pages, for their 304s
    for n in numbers[:200]:
        fake.close_issue("o/r", n)
    found, _ = client.get_all("/repos/o/r/issues", {"state": "open"})
    assert len(found) == 50
    # pages 2 and 3 are never asked again: only the first page's answer stays
    assert cached(client) == [client.url("/repos/o/r/issues", {"per_page": 100,
                                                               "state": "open"})]
    fake.clear_log()
    client.get_all("/repos/o/r/issues", {"state": "open"})
    assert [e["status"] for e in fake.requests()] == [304]
