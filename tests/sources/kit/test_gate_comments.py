"""`jr2_sources.capabilities.approvals.comments`: gates read from a comment thread."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jr2_sources.capabilities.approvals.comments import approvals_of
from jr2_sources.kit.claims import Comment, render_marker

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def at(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def parked(cid: int = 1, t: float = 10, reason: str | None = "ship?") -> Comment:
    body = render_marker("gate", {"holder": "h", "gate": "deploy", "reason": reason}, "jr2: ...")
    return Comment(cid, body, at(0), at(t), "jr2-bot")


WRITERS = {"alice", "bob"}


def test_a_request_awaits_until_a_writer_answers_after_it() -> None:
    early = Comment(2, "/jr2 approve deploy", at(5), at(5), "alice")  # before the request
    thread = [parked(), early]
    [g] = approvals_of(thread, WRITERS.__contains__)
    assert (g.status, g.at, g.reason, g.ignored) == ("awaiting", at(10), "ship?", ())
    thread += [Comment(3, "/jr2 approve deploy", at(11), at(11), "mallory"),
               Comment(4, "/jr2 approve other", at(12), at(12), "alice"),
               Comment(5, "/jr2 reject deploy not now", at(13), at(13), "bob"),
               Comment(6, "/jr2 approve deploy", at(14), at(14), "alice")]
    [g] = approvals_of(thread, WRITERS.__contains__)
    assert (g.status, g.reason, g.by, g.at) == ("rejected", "not now", "bob", at(13))


def test_answers_by_people_without_write_access_are_named() -> None:
    thread = [parked(), Comment(2, "/jr2 approve deploy", at(11), at(11), "mallory"),
              Comment(3, "/jr2 approve deploy", at(12), at(12), None)]
    [g] = approvals_of(thread, WRITERS.__contains__)
    assert g.status == "awaiting" and g.ignored == ("mallory", "?")


def test_asking_again_starts_over() -> None:
    thread = [parked(1, 10), Comment(2, "/jr2 approve deploy", at(11), at(11), "alice"),
              parked(3, 20, None)]
    [g] = approvals_of(thread, WRITERS.__contains__)
    assert (g.status, g.at, g.reason) == ("awaiting", at(20), None)


def test_no_request_no_gate() -> None:
    assert approvals_of([Comment(1, "/jr2 approve deploy", at(1), at(1), "alice")],
                    WRITERS.__contains__) == ()


def test_an_answer_recorded_by_jr2_counts_and_jr2s_own_commands_do_not() -> None:
    """The dashboard's answer (`answer_marker`, posted by jr2) counts, by whom it names; a plain
    `/jr2` comment by jr2's own account (`can_answer` None) is skipped without being named."""
    from jr2_sources.capabilities.approvals.comments import answer_marker

    def who_may(login: str) -> bool | None:
        return None if login == "jr2-bot" else login in WRITERS

    thread = [parked(), Comment(2, "/jr2 approve deploy", at(11), at(11), "jr2-bot"),
              Comment(3, answer_marker("deploy", "approved", None, "carol"), at(12), at(12),
                      "jr2-bot")]
    [g] = approvals_of(thread, who_may)
    assert (g.status, g.by, g.ignored) == ("approved", "carol", ())
    [g] = approvals_of(thread[:2], who_may)
    assert (g.status, g.ignored) == ("awaiting", ())
