"""`CommentClaims.claim` and approval gates: a claim chosen from a snapshot taken before another
pool ran and parked the item must lose (it would run again before anyone approved), while an old,
answered or abandoned request never stops a claim (the item would be lost)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jr2_sources.capabilities.approvals.policy import Approval
from jr2_sources.kit.claims import Comment, Marker, render_marker
from jr2_sources.kit.comment_claims import CommentClaims

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Thread:
    """One issue's comments in memory, with a server clock and the parked mark."""

    def __init__(self, comments: list[Comment], parked: bool) -> None:
        self.comments = comments
        self.is_parked = parked
        self.now = T0 + timedelta(seconds=100)
        self.marked = False

    def post_comment(self, key: str, body: str) -> int | None:
        self.now += timedelta(seconds=1)
        cid = max((c.id for c in self.comments), default=0) + 1
        self.comments.append(Comment(cid, body, self.now, self.now, "bot"))
        return cid

    def list_comments(self, key: str) -> tuple[list[Comment], datetime]:
        return list(self.comments), self.now

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        return self.now

    def delete_comment(self, key: str, comment_id: int) -> None:
        self.comments = [c for c in self.comments if c.id != comment_id]

    def still_to_do(self, key: str, found: list[Marker]) -> bool:
        return True

    def parked(self, key: str) -> bool:
        return self.is_parked

    def mark_claimed(self, key: str) -> None:
        self.marked = True

    def unmark(self, key: str) -> None:
        self.marked = False


def gate_request(cid: int, t: float) -> Comment:
    """Another pool's claim comment, edited into a `jr2:gate` request at `t`."""
    body = render_marker("gate", {"holder": "other", "gate": "deploy", "reason": None}, "jr2: ..")
    return Comment(cid, body, T0, T0 + timedelta(seconds=t), "bot")


def test_a_request_made_after_the_snapshot_on_a_parked_item_loses_the_claim() -> None:
    thread = Thread([gate_request(1, 50)], parked=True)
    assert CommentClaims(thread).claim("o/r#1", "me", 60.0, 0, ()) is False
    assert [c.id for c in thread.comments] == [1] and not thread.marked  # ours deleted


def test_a_request_the_snapshot_knew_answered_does_not_stop_the_claim() -> None:
    thread = Thread([gate_request(1, 50)], parked=True)
    approved = (Approval("deploy", "approved", T0 + timedelta(seconds=70), None, "alice"),)
    assert CommentClaims(thread).claim("o/r#1", "me", 60.0, 0, approved) is True
    assert thread.marked


def test_asked_again_after_the_answer_the_snapshot_knew_loses() -> None:
    thread = Thread([gate_request(1, 80)], parked=True)
    approved = (Approval("deploy", "approved", T0 + timedelta(seconds=70), None, "alice"),)
    assert CommentClaims(thread).claim("o/r#1", "me", 60.0, 0, approved) is False


def test_an_old_request_on_an_item_no_longer_marked_parked_does_not_stop_the_claim() -> None:
    """Its approved attempt was released (the mark went), or a person took the mark off: the
    snapshot did not read the thread, and the item must not be lost."""
    thread = Thread([gate_request(1, 50)], parked=False)
    assert CommentClaims(thread).claim("o/r#1", "me", 60.0, 0, ()) is True
