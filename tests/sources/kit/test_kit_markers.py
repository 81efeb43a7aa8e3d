"""The one marker reader (`jr2_sources.kit.markers`): authorship, signatures, replays."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from jr2_sources.capabilities.limits.comment_locks import render_lock
from jr2_sources.kit.claims import Comment, claim_of, markers, render_marker, retry_record
from jr2_sources.kit.markers import MarkerTrust, distinct, request_ref

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ITEM = "o/r#1"


def comment(cid: int, body: str, author: str | None, at: datetime = T0) -> Comment:
    return Comment(cid, body, at, at, author)


def claim_body(holder: str, nonce: str, trust: MarkerTrust | None = None,
               item: str = ITEM) -> str:
    fields = {"holder": holder, "lease": 600, "nonce": nonce}
    if trust is not None:
        fields = trust.sign(item, "claim", fields)
    return render_marker("claim", fields, "jr2: claimed.")


def trust(key: str | None = None, also: tuple[str, ...] = (),
          calls: list[int] | None = None) -> MarkerTrust:
    def identity() -> list[str]:
        if calls is not None:
            calls.append(1)
        return ["jr2-bot"]

    return MarkerTrust("github:o/r", identity, also=also, key=key)


def test_a_strangers_claim_is_ignored_and_named() -> None:
    t = trust()
    read = t.read(ITEM, [comment(1, claim_body("mallory@x", "n1"), "mallory"),
                         comment(2, "a plain comment", "mallory")])
    assert [c.id for c in read.comments] == [2]
    assert [(i.marker, i.author, i.why) for i in read.ignored] == [("claim", "mallory", "author")]
    assert claim_of(read.comments, T0) is None


def test_own_and_named_accounts_count_case_blind() -> None:
    t = trust(also=("Fleet-Bot",))
    read = t.read(ITEM, [comment(1, claim_body("a@h", "n1"), "JR2-Bot"),
                         comment(2, claim_body("b@h", "n2"), "fleet-bot")])
    assert [c.id for c in read.comments] == [1, 2] and not read.ignored
    assert claim_of(read.comments, T0) is not None


def test_a_comment_with_no_author_counts_as_nobodys() -> None:
    read = trust().read(ITEM, [comment(1, claim_body("a@h", "n1"), None)])
    assert read.comments == [] and read.ignored[0].author == "?"


def test_identity_is_asked_once_and_only_when_a_marker_is_met() -> None:
    calls: list[int] = []
    t = trust(calls=calls)
    t.read(ITEM, [comment(1, "hello", "x")])
    assert calls == []
    for _ in range(3):
        t.read(ITEM, [comment(1, claim_body("a@h", "n1"), "jr2-bot")])
    assert calls == [1]


def test_locks_by_strangers_are_ignored() -> None:
    body = render_lock({"item": ITEM, "groups": ["db"], "holder": "m", "lease": 600,
                        "nonce": "z"}, "jr2: held.")
    read = trust().read("o/r#99", [comment(1, body, "mallory")])
    assert read.comments == [] and read.ignored[0].marker == "lock"


def test_with_a_key_unsigned_grants_are_ignored_even_from_the_bot() -> None:
    t = trust(key="k1")
    retry = render_marker("failed", {"holder": "a", "nonce": "n9", "attempts": 1,
                                     "retry_after": "2099-01-01T00:00:00Z"}, "jr2: failed")
    read = t.read(ITEM, [comment(1, claim_body("a@h", "n1"), "jr2-bot"),
                         comment(2, retry, "jr2-bot")])
    assert read.comments == []
    assert {(i.marker, i.why) for i in read.ignored} == {("claim", "unsigned"),
                                                         ("failed", "unsigned")}
    assert retry_record(markers(read.comments)) == (0, None)


def test_with_a_key_done_and_final_failed_marks_count_unsigned() -> None:
    t = trust(key="k1")
    done = render_marker("done", {"holder": "a", "nonce": "n1"}, "jr2: done by a.")
    failed = render_marker("failed", {"holder": "a", "nonce": "n2", "reason": "x"}, "jr2: f")
    read = t.read(ITEM, [comment(1, done, "jr2-bot"), comment(2, failed, "jr2-bot")])
    assert [c.id for c in read.comments] == [1, 2] and not read.ignored


def test_a_signed_claim_counts_and_does_not_verify_elsewhere() -> None:
    t = trust(key="k1")
    body = claim_body("a@h", "n1", t)
    assert claim_of(t.read(ITEM, [comment(1, body, "jr2-bot")]).comments, T0) is not None
    other_item = t.read("o/r#2", [comment(1, body, "jr2-bot")])
    assert other_item.comments == [] and other_item.ignored[0].why == "signature"
    other_tracker = MarkerTrust("github:o/other", lambda: ["jr2-bot"], key="k1")
    assert other_tracker.read(ITEM, [comment(1, body, "jr2-bot")]).comments == []
    other_key = trust(key="k2")
    assert other_key.read(ITEM, [comment(1, body, "jr2-bot")]).ignored[0].why == "signature"


def test_an_edited_signed_field_does_not_verify() -> None:
    t = trust(key="k1")
    body = claim_body("a@h", "n1", t).replace('"lease": 600', '"lease": 86400')
    assert t.read(ITEM, [comment(1, body, "jr2-bot")]).ignored[0].why == "signature"


def test_a_copied_claim_of_a_settled_nonce_is_not_live() -> None:
    t = trust(key="k1")
    signed = claim_body("a@h", "n1", t)
    done = render_marker("done", {"holder": "a@h", "nonce": "n1"}, "jr2: done.")
    later = T0 + timedelta(seconds=5)
    read = t.read(ITEM, [comment(1, done, "jr2-bot"), comment(2, signed, "jr2-bot", later)])
    assert claim_of(read.comments, later) is None
    assert read.ignored[0].why == "replayed"


def test_a_second_copy_of_a_live_claim_counts_once() -> None:
    t = trust()
    body = claim_body("a@h", "n1")
    read = t.read(ITEM, [comment(1, body, "jr2-bot"), comment(2, body, "jr2-bot")])
    assert [c.id for c in read.comments] == [1]


def test_gate_request_names_its_comment_and_time() -> None:
    body = render_marker("gate", {"gate": "deploy", "holder": "a", "nonce": "n"}, "asked")
    mk = markers([comment(7, body, "jr2-bot")])[0]
    assert request_ref(mk) == f"7@{T0.isoformat()}"


def test_the_key_is_never_in_a_repr() -> None:
    assert "k-secret" not in repr(trust(key="k-secret"))


def test_warns_once_per_author(caplog: pytest.LogCaptureFixture) -> None:
    t = trust()
    read = t.read(ITEM, [comment(1, claim_body("m", "n1"), "mallory"),
                         comment(2, claim_body("m", "n2"), "mallory"),
                         comment(3, claim_body("e", "n3"), "eve")])
    with caplog.at_level(logging.WARNING, logger="jr2.markers"):
        t.warn_once("github:o/r", read.ignored)
        t.warn_once("github:o/r", read.ignored)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "mallory" in lines[0] and "eve" in lines[1]
    assert len(distinct(read.ignored)) == 2
