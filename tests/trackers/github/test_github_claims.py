"""The claim protocol's rules (`jr2_sources.kit.claims`) as the GitHub source uses them: markers,
the lowest live comment id holds, leases judged in server time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jr2_sources.kit import claims

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def comment(cid: int, kind: str, holder: str, lease: float = 60, *, updated: int = 0,
            nonce: str | None = None, **extra: Any) -> claims.Comment:
    fields = {"holder": holder, "lease": lease, "attempt": 1, "nonce": nonce or holder, **extra}
    body = claims.render_marker(kind, fields, "text")  # type: ignore[arg-type]
    return claims.Comment(cid, body, T0, T0 + timedelta(seconds=updated))


def test_render_and_parse_round_trip() -> None:
    c = comment(5, "claim", "r-1@host", 600)
    mk = claims.parse_marker(c)
    assert mk is not None and mk.kind == "claim" and mk.holder == "r-1@host"
    assert mk.lease == 600 and mk.comment_id == 5 and mk.expires == T0 + timedelta(seconds=600)
    assert c.body.startswith('<!-- jr2:claim {"attempt": 1, "holder": "r-1@host"')
    assert claims.parse_marker(claims.Comment(1, "LGTM", T0, T0)) is None
    assert claims.parse_marker(claims.Comment(1, "<!-- jr2:claim not json -->", T0, T0)) is None
    assert claims.parse_marker(claims.Comment(1, "see <!-- jr2:claim {} -->", T0, T0)) is None


def test_lowest_live_claim_holds() -> None:
    cs = [comment(12, "claim", "b"), comment(11, "claim", "a"), comment(13, "claim", "c")]
    assert claims.holder_of(cs, T0 + timedelta(seconds=1)).holder == "a"  # type: ignore[union-attr]


def test_expired_and_settled_claims_do_not_hold() -> None:
    cs = [comment(10, "claim", "dead", 60), comment(11, "released", "gone"),
          comment(12, "done", "finished"), comment(13, "claim", "alive", 60, updated=30)]
    now = T0 + timedelta(seconds=60)  # 10 expires exactly now: `now < updated + lease` fails
    assert claims.holder_of(cs, now).holder == "alive"  # type: ignore[union-attr]
    assert claims.holder_of(cs, T0 + timedelta(seconds=59)).holder == "dead"  # type: ignore[union-attr]
    assert claims.holder_of(cs, T0 + timedelta(seconds=90)) is None


def test_a_forged_endless_lease_is_capped() -> None:
    forged = comment(1, "claim", "troll", 10**12)
    assert claims.holder_of([forged], T0 + timedelta(days=2)) is None


def test_last_failure_reason() -> None:
    cs = [comment(1, "failed", "a", reason="exit 1"), comment(2, "failed", "b", reason="exit 2")]
    assert claims.last_failure(cs) == "exit 2"
    assert claims.last_failure([comment(3, "done", "a")]) is None


def test_claim_of_moves_the_lease_end_onto_the_local_clock() -> None:
    """The server says 20 s of the lease are left; a machine whose clock runs an hour ahead
    sees the lease end 20 s after its own now, not an hour early."""
    cs = [comment(7, "claim", "r-1@host", 60, updated=10), comment(8, "claim", "r-2@host")]
    server_now = T0 + timedelta(seconds=50)
    local_now = server_now + timedelta(hours=1)
    claim = claims.claim_of(cs, server_now, local_now)
    assert claim is not None and claim.holder == "r-1@host" and claim.since == T0
    assert claim.lease_expires == local_now + timedelta(seconds=20)
    assert claims.claim_of(cs, T0 + timedelta(seconds=200), local_now) is None
