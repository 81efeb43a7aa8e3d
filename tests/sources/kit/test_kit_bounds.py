"""Bounds on what a marker can make a pool do (`kit.bounds`): leases, `retry_after`, attempts
and texts read back from a marker never reach past the reading pool's own settings; and the
claim protocol (`CommentClaims`) reads every marker so bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jr2_sources.kit.bounds import HOLDER_MAX, NO_BOUNDS, Bounds, bounded
from jr2_sources.kit.claims import Comment, Marker, holder_of, parse_marker, render_marker
from jr2_sources.kit.claims import retry_record as record_of
from jr2_sources.kit.comment_claims import CommentClaims

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
POOL = Bounds(lease=600.0, retry=3600.0, attempts=3)


def _comment(kind: str, fields: dict[str, object], at: datetime = T0, cid: int = 1) -> Comment:
    return Comment(cid, render_marker(kind, fields, "jr2: for people."), T0, at, "bot")


def _fields(c: Comment) -> dict[str, object]:
    mk = parse_marker(c)
    assert mk is not None
    return mk.fields


def test_a_claim_of_a_day_counts_for_the_pools_own_lease() -> None:
    c = _comment("claim", {"holder": "x", "lease": 86400, "nonce": "n"})
    got = bounded(c, POOL)
    assert _fields(got)["lease"] == 600.0
    assert got.body.endswith("\njr2: for people.")
    assert holder_of([got], T0 + timedelta(seconds=599)) is not None
    assert holder_of([got], T0 + timedelta(seconds=600)) is None
    assert holder_of([c], T0 + timedelta(seconds=3600)) is not None  # unbounded: a day


def test_an_edit_grants_at_most_the_pools_lease_from_the_edit() -> None:
    """Editing a claim moves its `updated_at`: the lease counts from the edit, never more."""
    edited = bounded(_comment("claim", {"holder": "x", "lease": 86400, "nonce": "n"},
                              at=T0 + timedelta(hours=5)), POOL)
    now = T0 + timedelta(hours=5, seconds=601)
    assert holder_of([edited], now) is None


def test_a_retry_after_of_2099_is_capped_by_the_pools_backoff() -> None:
    c = _comment("failed", {"holder": "x", "nonce": "n", "attempts": 99, "reason": "r",
                            "retry_after": "2099-01-01T00:00:00Z"})
    got = bounded(c, POOL)
    assert _fields(got)["retry_after"] == "2026-12-01T10:00:00Z"
    mk = parse_marker(got)
    assert isinstance(mk, Marker)
    assert record_of([mk]) == (3, T0 + timedelta(hours=1))


def test_texts_are_cut_and_a_marker_within_bounds_is_the_same_object() -> None:
    c = _comment("failed", {"holder": "h" * 5000, "nonce": "n", "reason": "r" * 100_000})
    f = _fields(bounded(c, POOL))
    assert len(str(f["holder"])) == HOLDER_MAX
    assert str(f["reason"]).endswith("(cut: 100,000 characters in all)")
    assert len(str(f["reason"])) < 600
    fine = _comment("claim", {"holder": "x", "lease": 600, "nonce": "n"})
    assert bounded(fine, POOL) is fine
    person = Comment(2, "/jr2 approve deploy", T0, T0, "alice")
    assert bounded(person, POOL) is person
    assert bounded(c, NO_BOUNDS).body != c.body  # texts are cut whatever the settings


class Thread:
    """One issue's comments in memory with a server clock."""

    def __init__(self, comments: list[Comment]) -> None:
        self.comments = comments
        self.now = T0

    def post_comment(self, key: str, body: str) -> int | None:
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
        return False

    def mark_claimed(self, key: str) -> None:
        pass

    def unmark(self, key: str) -> None:
        pass


def test_a_forged_claim_of_a_day_holds_the_item_only_for_the_pools_lease() -> None:
    thread = Thread([_comment("claim", {"holder": "forger", "lease": 86400, "nonce": "f"})])
    claims = CommentClaims(thread)
    claims.bounds = POOL
    thread.now = T0 + timedelta(seconds=599)
    assert claims.claim("o/r#1", "me", 600.0) is False
    thread.now = T0 + timedelta(seconds=600)
    assert claims.claim("o/r#1", "me", 600.0) is True


def test_a_forged_retry_after_of_2099_parks_the_item_only_for_the_pools_backoff() -> None:
    """The snapshot read the record through the same bounds (attempts 1, retry at +1 h):
    the claim waits for that hour, not for 2099."""
    failed = _comment("failed", {"holder": "forger", "nonce": "f", "attempts": 1,
                                 "reason": "x", "retry_after": "2099-01-01T00:00:00Z"})
    thread = Thread([failed])
    claims = CommentClaims(thread)
    claims.bounds = POOL
    thread.now = T0 + timedelta(minutes=59)
    assert claims.claim("o/r#1", "me", 600.0, attempts=1) is False
    thread.now = T0 + timedelta(minutes=60)
    assert claims.claim("o/r#1", "me", 600.0, attempts=1) is True
