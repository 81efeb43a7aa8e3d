"""What one claim, watch and settle ask of a real Redmine: the requests by method, and Redmine's
journals showing the settle as one save (closed and `jr2:claimed` off together)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redmine_helpers import Project

from jr2_core import Outcome


def _cost(tracker: Any, act: Callable[[], Any]) -> dict[str, int]:
    """The requests `act` makes through the tracker's client, by method."""
    stats = tracker.client.stats
    before = dict(stats.by_method)
    act()
    return {m: n - before.get(m, 0) for m, n in stats.by_method.items() if n - before.get(m, 0)}


def test_a_claim_costs_four_requests_a_watch_one_and_a_done_settle_three(
        redmine_project: Project) -> None:
    p = redmine_project
    n = p.issue("one job")
    tracker = p.tracker()
    [item] = tracker.snapshot().items
    tracker.identity()  # asked once a run: the key's own user, the closed status
    tracker.closed_status()
    won: list[bool] = []
    assert _cost(tracker, lambda: won.append(tracker.claim(item, "me@h", 600))) == {
        "GET": 2, "PUT": 2}  # look, note, check, the claim word
    assert won == [True]
    assert _cost(tracker, lambda: tracker.watch([item.id], "me@h")) == {"GET": 1}
    assert _cost(tracker, lambda: tracker.settle(item.id, "me@h", Outcome("done"))) == {
        "GET": 1, "PUT": 2}  # close and take the word off, read the close back, the note
    issue = p.get(n)
    assert issue["status"]["is_closed"]
    words = [cf["value"] for cf in issue["custom_fields"] if cf["name"] == "jr2"]
    assert words == [""]
    changed = [{d["property"] for d in j["details"]} for j in issue["journals"] if j["details"]]
    assert changed == [{"cf"}, {"attr", "cf"}]  # the claim word; then closed and word off


def test_a_claim_another_pool_holds_costs_one_read_and_posts_nothing(
        redmine_project: Project) -> None:
    p = redmine_project
    p.issue("taken")
    first, second = p.tracker(), p.tracker()
    [item] = first.snapshot().items
    [same] = second.snapshot().items
    assert first.claim(item, "one@h", 600)
    journals = p.get(int(item.id.lstrip("#")))["journals"]
    second.identity()  # asked once a run
    assert _cost(second, lambda: second.claim(same, "two@h", 600)) == {"GET": 1}
    assert p.get(int(item.id.lstrip("#")))["journals"] == journals
