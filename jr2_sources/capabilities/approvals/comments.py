"""Approval gates read from an issue's comment thread (trackers whose claims are comments).

Parking edits jr2's claim comment into a `jr2:gate` marker; the edit's time is when the gate was
asked, and a later request of the same gate starts over. The first answer after it by someone
`can_answer` accepts (write access, the tracker's check) decides: a comment whose first line is
`/jr2 approve NAME` or `/jr2 reject NAME [reason]`, an answer given another way (`others`: a
label on GitHub), or a `jr2:answer` marker jr2 posted for an answer given through it
(`answer_marker`; it names the request it answers, so a copy answers no later one). Others'
answers are ignored and named (`Approval.ignored`); jr2's own comments never answer as comments.
The thread has been read through `kit.markers` already. Pure: no I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from jr2_sources.kit.claims import Comment, Marker, markers, parse_marker, render_marker
from jr2_sources.kit.markers import request_ref

from .policy import Approval, ApprovalStatus, answer_command, cut_reason

__all__ = ["Answer", "answer_marker", "approvals_of", "record_answer"]

Answer = tuple[datetime, ApprovalStatus, str, str | None, str | None]
"""An answer (a label on GitHub, a comment): when, its status, the gate, who, why."""

TRUSTED = "\0jr2:"  # before the person an `answer_marker` names: jr2 checked them already


def answer_marker(name: str, status: ApprovalStatus, reason: str | None,
                  by: str | None, request: str | None = None) -> str:
    """The comment jr2 posts to record an answer given through it (who gave it was checked):
    a `jr2:answer` marker naming the gate request it answers, and one line for people."""
    why = f": {reason}" if reason else ""
    who = f" by {by}" if by else ""
    fields = {"gate": name, "status": status, "reason": reason, "by": by}
    if request is not None:
        fields["request"] = request
    return render_marker("answer", fields, f"jr2: gate `{name}` {status}{who}{why}.")


def _answers(thread: list[Comment], requests: dict[str, Marker]) -> list[Answer]:
    out: list[Answer] = []
    for c in thread:
        mk = parse_marker(c)
        if mk is not None:  # jr2's own comment: only its `answer` marker answers
            f = mk.fields
            asked = requests.get(str(f.get("gate")).lower())
            if (mk.kind == "answer" and isinstance(f.get("gate"), str)
                    and f.get("status") in ("approved", "rejected")
                    and ("request" not in f or (asked is not None
                                                and f["request"] == request_ref(asked)))):
                reason, by = f.get("reason"), f.get("by")
                out.append((c.created_at, f["status"], f["gate"].lower(),
                            TRUSTED + (by if isinstance(by, str) else ""),
                            cut_reason(reason) if isinstance(reason, str) else None))
            continue
        said = answer_command(c.body)
        if said is not None:
            out.append((c.created_at, said[0], said[1], c.author, said[2]))
    return out


def _requests(thread: list[Comment]) -> dict[str, Marker]:
    """The newest request of each gate in `thread` (by lower-case name)."""
    requests = {}
    for mk in markers(thread):
        name = mk.fields.get("gate")
        if mk.kind == "gate" and isinstance(name, str):
            requests[name.lower()] = mk
    return requests


def approvals_of(comments: Iterable[Comment], can_answer: Callable[[str], bool | None],
             others: Iterable[Answer] = ()) -> tuple[Approval, ...]:
    """The gates recorded in a comment thread: each gate's newest request and its first answer
    after it (`/jr2` comments and `others`, in time order). `can_answer(who)`: True may
    answer, False may not (ignored and named), None is jr2's own account (skipped)."""
    thread = sorted(comments, key=lambda c: c.id)
    requests = _requests(thread)
    answers = sorted([*_answers(thread, requests), *others], key=lambda a: a[0])
    out: list[Approval] = []
    for name, mk in sorted(requests.items()):
        reason = mk.fields.get("reason")
        asked = Approval(name, "awaiting", mk.updated_at,
                     cut_reason(reason) if isinstance(reason, str) else None)
        ignored: list[str] = []
        for at, status, gate, who, why in answers:
            if gate != name or at < mk.updated_at:
                continue
            trusted = who is not None and who.startswith(TRUSTED)
            ok = trusted or (who is not None and can_answer(who))
            if ok is None:
                continue
            if not ok:
                ignored.append(who or "?")
                continue
            by = who[len(TRUSTED):] or None if trusted and who is not None else who
            asked = Approval(name, status, at, why, by)
            break
        out.append(asked if asked.status != "awaiting" or not ignored
                   else Approval(name, "awaiting", asked.at, asked.reason, None, tuple(ignored)))
    return tuple(out)


def record_answer(thread: Any, key: str, name: str, status: ApprovalStatus, reason: str | None,
                  by: str | None, can_answer: Callable[[str], bool | None]) -> bool:
    """Answer the gate `name` of `key` through jr2: when it awaits an answer now, post an
    `answer_marker` comment on `thread` (a `CommentThread`) and say True; else False."""
    comments, _ = thread.list_comments(key)
    now = {g.name: g for g in approvals_of(comments, can_answer)}
    if name not in now or now[name].status != "awaiting":
        return False
    asked = _requests(sorted(comments, key=lambda c: c.id))[name]
    thread.post_comment(key, answer_marker(name, status, reason, by, request_ref(asked)))
    return True
