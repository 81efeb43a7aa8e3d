"""`jr2_sources.capabilities.approvals.policy`: the ask line, answers, names and the variables of
the next attempt, and the `awaiting_approval` reason of the Ready-set."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jr2_sources.capabilities.approvals.policy import (
    Approval,
    ApprovalRequest,
    answer_command,
    check_name,
    env_for,
    parse_ask,
)
from jr2_sources.readyset import Snapshot, SnapshotItem, compute_ready_set
from jr2_sources.report import describe_reasons

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_the_ask_line_names_the_gate_and_an_optional_reason() -> None:
    assert parse_ask("jr2: await-approval Deploy") == ApprovalRequest("deploy", None)
    assert parse_ask("  jr2: await-approval deploy ship it now?  ") == ApprovalRequest(
        "deploy", "ship it now?")
    assert parse_ask("jr2: await-approval") is None
    assert parse_ask("I said jr2: await-approval deploy") is None


def test_answers_are_read_from_the_first_line_only() -> None:
    assert answer_command("/jr2 approve deploy") == ("approved", "deploy", None)
    assert answer_command("/JR2 Reject Deploy not on a Friday\nmore") == (
        "rejected", "deploy", "not on a Friday")
    assert answer_command("please /jr2 approve deploy") is None
    assert answer_command("<!-- jr2:gate {} -->\n/jr2 approve deploy") is None
    assert answer_command("/jr2 approve") is None


def test_answers_and_asks_parse_in_linear_time_on_adversarial_text() -> None:
    """Anyone can comment (65,536 characters on GitHub) and every poll reads the comments: a run
    of spaces after the gate's name made the answer pattern backtrack (50 s for one comment)."""
    import time

    n = 65_536
    texts = ["/jr2 approve deploy" + " " * n, "/jr2 reject deploy" + " \t" * (n // 2) + "\nx",
             "/jr2 approve deploy " + "a " * (n // 2)]
    for text in texts:
        start = time.perf_counter()
        answer_command(text)
        assert time.perf_counter() - start < n * 5e-6  # 0.33 s; the old pattern: 50 s
    start = time.perf_counter()
    assert parse_ask("jr2: await-approval deploy" + " " * n) == ApprovalRequest("deploy", None)
    assert time.perf_counter() - start < n * 5e-6
    assert answer_command("/jr2 reject deploy   not  now  ") == ("rejected", "deploy", "not  now")


def test_names_are_checked_and_the_variables_follow_them() -> None:
    assert check_name("Deploy-Prod") == "deploy-prod"
    for bad in ("", "-x", "a b", "x" * 64, "a/b"):
        with pytest.raises(ValueError):
            check_name(bad)
    env = env_for({"deploy-prod": {"status": "rejected", "reason": "no"},
                   "spend": {"status": "approved", "reason": None},
                   "odd": {"status": "awaiting", "reason": None}})
    assert env == {"JR2_GATE_DEPLOY_PROD": "rejected", "JR2_GATE_DEPLOY_PROD_REASON": "no",
                   "JR2_GATE_SPEND": "approved"}


def test_an_item_awaiting_a_gate_is_blocked_with_its_reason() -> None:
    waiting = SnapshotItem("A", gates=(Approval("deploy", "awaiting", T0, "ship?", None,
                                            ("mallory",)),))
    answered = SnapshotItem("B", gates=(Approval("deploy", "approved", T0, None, "alice"),))
    rs = compute_ready_set(Snapshot("s", [waiting, answered]), now=T0)
    assert [e.item.id for e in rs.ready] == ["B"]
    [entry] = rs.blocked
    [reason] = entry.reasons
    assert reason.to_json_obj() == {"kind": "awaiting_approval", "gate": "deploy",
                                    "since": "2026-12-01T09:00:00Z", "reason": "ship?",
                                    "ignored_answers_by": ["mallory"]}
    text = describe_reasons(entry.reasons)
    assert "awaits approval of gate deploy since 2026-12-01T09:00:00Z: ship?" in text
    assert "ignored answers by mallory" in text
