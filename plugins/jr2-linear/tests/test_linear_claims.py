"""Claims on Linear: markers ordered by (createdAt, id), a stranger's marker changes nothing,
a RATELIMITED answer is waited out, and the scope options become Linear's IssueFilter."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fake_linear import FakeLinear
from linear_helpers import make_adapter

from jr2_core import Outcome
from jr2_linear.markers import comment_id
from jr2_sources import compute_ready_set


@pytest.fixture
def fake() -> Iterator[FakeLinear]:
    f = FakeLinear().start()
    yield f
    f.stop()


def _ready(adapter: object) -> dict[str, object]:
    rs = compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))  # type: ignore[attr-defined]
    return {"ready": [e.item.id for e in rs.ready], "claimed": [e.item.id for e in rs.claimed],
            "blocked": {e.item.id: [r.kind for r in e.reasons] for e in rs.blocked}}


def test_claims_sort_by_created_at_then_id_not_by_the_random_uuid() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    high, low = "ffffffff-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000"
    assert comment_id(t, high) < comment_id(t + timedelta(milliseconds=1), low)
    assert comment_id(t, low) < comment_id(t, high)


def test_a_strangers_markers_change_nothing(fake: FakeLinear) -> None:
    a = fake.add_issue("Claimed by a stranger")
    b = fake.add_issue("Failed by a stranger")
    c = fake.add_issue("Done by a stranger")
    forever = {"jr2": "claim", "holder": "evil@x", "lease": 86400, "nonce": "n1"}
    fake.add_marker(a, forever)
    fake.add_marker(b, {"jr2": "failed", "holder": "evil@x", "nonce": "n2", "reason": "no"})
    fake.add_marker(c, {"jr2": "done", "holder": "evil@x", "nonce": "n3"})
    adapter = make_adapter(fake)
    assert _ready(adapter) == {"ready": [a, b, c], "claimed": [], "blocked": {}}
    item = {it.id: it for it in adapter.snapshot().items}[a]
    assert [ig.to_json_obj() for ig in item.ignored] == [
        {"kind": "ignored_marker", "marker": "claim", "author": "x@example.com", "why": "author"}]
    assert "ignored_markers" not in item.extra
    assert adapter.claim(item, "pool@h", 30.0) is True  # the forged claim does not hold it
    adapter.settle(a, "pool@h", Outcome("done"))
    assert fake.state_type(a) == "completed"


def test_a_marker_of_the_pools_own_user_counts(fake: FakeLinear) -> None:
    a = fake.add_issue("Claimed by another pool of the fleet")
    fake.add_marker(a, {"jr2": "claim", "holder": "other@h", "lease": 600, "nonce": "n"},
                    user="u-jr2")
    assert _ready(make_adapter(fake))["claimed"] == [a]


def test_with_a_marker_key_jr2_signs_its_markers_and_unsigned_ones_grant_nothing(
        fake: FakeLinear, monkeypatch: pytest.MonkeyPatch) -> None:
    """`JR2_MARKER_KEY`, as on every tracker: the kit's reader signs the metadata jr2 writes;
    a claim of the key's own user without a signature (a command holding the key) holds
    nothing, and a done mark counts signed or not."""
    monkeypatch.setenv("JR2_MARKER_KEY", "fleet-marker-key-0123456789")
    a = fake.add_issue("Claimed with the bot's key, unsigned")
    b = fake.add_issue("Done before the key was set")
    fake.add_marker(a, {"jr2": "claim", "holder": "cmd@h", "lease": 86400, "nonce": "n1"},
                    user="u-jr2")
    fake.add_marker(b, {"jr2": "done", "holder": "old@h", "nonce": "n2"}, user="u-jr2")
    adapter = make_adapter(fake)
    assert _ready(adapter)["ready"] == [a, b]
    item = {it.id: it for it in adapter.snapshot().items}[a]
    assert [(ig.marker, ig.why) for ig in item.ignored] == [("claim", "unsigned")]
    assert adapter.claim(item, "pool@h", 30.0) is True
    [mine] = [m for m in fake.markers(a) if m["metadata"].get("holder") == "pool@h"]
    assert len(mine["metadata"]["sig"]) == 64
    assert "fleet-marker-key" not in repr(adapter.markers)
    assert _ready(make_adapter(fake))["claimed"] == [a]  # another pool with the key: it holds
    item_b = {it.id: it for it in adapter.snapshot().items}[b]
    assert adapter.claim(item_b, "pool@h", 30.0) is False  # done stays done


def test_a_fleets_other_account_counts_with_trust(fake: FakeLinear) -> None:
    a = fake.add_issue("Claimed by the fleet's other account")
    fake.add_marker(a, {"jr2": "claim", "holder": "other@h", "lease": 600, "nonce": "n"},
                    user="u-person")
    assert _ready(make_adapter(fake))["claimed"] == []
    assert _ready(make_adapter(fake, trust=["Pat@example.com"]))["claimed"] == [a]


def test_a_ratelimited_answer_is_waited_out(fake: FakeLinear) -> None:
    fake.add_issue("One")
    sleeps: list[float] = []
    adapter = make_adapter(fake, sleeps=sleeps)
    fake.ratelimit_next(2, reset_in=3.0)
    assert [it.id for it in adapter.snapshot().items] == ["ENG-1"]
    # each wait runs until the spent budget's reset (X-RateLimit-Requests-Reset), not a guess
    assert len(sleeps) == 2 and all(s >= 2.0 for s in sleeps)
    assert fake.requests == 4  # two refused set-ups, then the set-up and one page


def test_a_ratelimit_longer_than_the_budget_is_one_line(fake: FakeLinear) -> None:
    fake.add_issue("One")
    adapter = make_adapter(fake, retry_budget=1.0)
    adapter.client.policy = type(adapter.client.policy)(budget=1.0)
    fake.ratelimit_next(1, reset_in=60.0)
    with pytest.raises(Exception, match="asks to wait") as err:
        adapter.snapshot()
    assert "\n" not in str(err.value)


def test_scope_options_select_on_the_server(fake: FakeLinear) -> None:
    me = fake.users["u-jr2"]["id"]
    fake.add_issue("In project, current cycle, nobody", project="Apollo", cycle=1)
    fake.add_issue("Other project", project="Gemini", cycle=1)
    fake.add_issue("Assigned to me", project="Apollo", cycle=1, assignee=me)
    fake.add_issue("Next cycle", project="Apollo", cycle=2)
    fake.add_issue("Low priority", project="Apollo", cycle=1, priority=4)
    ids = [it.id for it in make_adapter(fake, project="apollo", cycle="current",
                                        assignee="none").snapshot().items]
    assert ids == ["ENG-1", "ENG-5"]
    mine = make_adapter(fake, assignee="me").snapshot().items
    assert [it.id for it in mine] == ["ENG-3"]
    raw = make_adapter(fake, filter='{"priority": {"gte": 3}}').snapshot().items
    assert [it.id for it in raw] == ["ENG-5"]
    assert [it.id for it in make_adapter(fake, cycle="2").snapshot().items] == ["ENG-4"]


def test_a_claim_made_after_another_loses_even_with_a_lower_id(fake: FakeLinear) -> None:
    a = fake.add_issue("Contended")
    first, second = make_adapter(fake), make_adapter(fake)
    item = first.snapshot().items[0]
    assert first.claim(item, "pool-1@h", 30.0)
    assert not second.claim(item, "pool-2@h", 30.0)
    [marker] = fake.markers(a)
    assert marker["metadata"]["holder"] == "pool-1@h"
    uuid.UUID(marker["id"])  # Linear's ids are UUIDs: order came from createdAt
