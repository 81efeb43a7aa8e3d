"""Approval gates read from an issue's comment thread (trackers whose claims are comments).

Design note: parking an item (`jr2 work --gate`, `jr2_sources.gates`) edits jr2's claim comment
into a `jr2:gate` marker (`{"gate": NAME, "reason": ...}`); the edit's server time is when the
gate was asked. A person answers with a comment whose first line is `/jr2 approve NAME` or
`/jr2 reject NAME [reason]`, created at or after that time (or an answer given another way, a
label on GitHub, passed in as `others`). The first such answer by someone
`can_answer` accepts (write access, checked by the tracker) decides the gate; answers by others
are ignored and named (`Gate`'s `ignored`), so a report can say why the item still waits.
jr2's own comments never answer: they start with its hidden marker, never with `/jr2`. A later
`jr2:gate` marker for the same gate (the worker asked again) starts over.

This module is pure: `can_answer` is the tracker's permission check (cached there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from jr2_sources.gates import Gate, GateStatus, answer_command

from .claims import Comment, markers

__all__ = ["Answer", "gates_of"]

Answer = tuple[datetime, GateStatus, str, str | None, str | None]
"""An answer given another way than a comment (a label, on GitHub): when, approved or rejected,
the gate, who, why."""


def _answers(thread: list[Comment]) -> list[Answer]:
    out: list[Answer] = []
    for c in thread:
        said = answer_command(c.body)
        if said is not None:
            out.append((c.created_at, said[0], said[1], c.author, said[2]))
    return out


def gates_of(comments: Iterable[Comment], can_answer: Callable[[str], bool],
             others: Iterable[Answer] = ()) -> tuple[Gate, ...]:
    """The gates recorded in a comment thread: each gate's newest request and its first answer
    after it, among the thread's `/jr2` comments and `others` (label answers), in time order."""
    thread = sorted(comments, key=lambda c: c.id)
    requests = {}
    for mk in markers(thread):
        name = mk.fields.get("gate")
        if mk.kind == "gate" and isinstance(name, str):
            requests[name.lower()] = mk
    answers = sorted([*_answers(thread), *others], key=lambda a: a[0])
    out: list[Gate] = []
    for name, mk in sorted(requests.items()):
        reason = mk.fields.get("reason")
        asked = Gate(name, "awaiting", mk.updated_at, reason if isinstance(reason, str) else None)
        ignored: list[str] = []
        for at, status, gate, who, why in answers:
            if gate != name or at < mk.updated_at:
                continue
            if who is None or not can_answer(who):
                ignored.append(who or "?")
                continue
            asked = Gate(name, status, at, why, who)
            break
        out.append(asked if asked.status != "awaiting" or not ignored
                   else Gate(name, "awaiting", asked.at, asked.reason, None, tuple(ignored)))
    return tuple(out)
