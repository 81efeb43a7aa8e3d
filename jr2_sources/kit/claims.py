"""Claims by comment history: a lease protocol for trackers with no compare-and-set.

A claim is a comment whose body starts with a hidden marker

    <!-- jr2:claim {"holder": "run@host", "lease": 600, "nonce": "..."} -->

Post the claim, list the comments, and hold the item only if yours is the LIVE claim with the
LOWEST id; otherwise delete yours. A claim is live while `now < updated_at + lease`, `now` the
server's clock (the listing's `Date`). Renewing edits the comment; a renewal that lands after
the lease ended has lost. Settling or releasing edits it into `jr2:done`, `jr2:failed` or
`jr2:released`; a failure to retry is a `jr2:failed` marker with `attempts` and `retry_after`
(the newest settled marker carries the attempt record, `retry_record`). A lease read from a
comment is capped at `MAX_LEASE`; `nonce` tells a pool's own comments apart (a retried POST may
leave two). The other protocols' markers (`gate`, `answer`, `feedback`, `lock`) share the form
(`split_marker`). Pure: each tracker turns its comment objects into `Comment`s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from jr2_sources.readyset import Claim

MAX_LEASE = 86400.0
Kind = Literal["claim", "done", "failed", "released", "gate", "answer", "feedback", "lock"]
_MARKER = re.compile(
    r"\A\s*<!--\s*jr2:(claim|done|failed|released|gate|answer|feedback|lock)\s+(\{.*?\})\s*-->",
    re.DOTALL)


@dataclass(frozen=True, slots=True)
class Comment:
    """A tracker comment, as the protocol needs it."""

    id: int
    body: str
    created_at: datetime
    updated_at: datetime
    author: str | None = None  # the tracker's login of who wrote it, where the reader keeps it


@dataclass(slots=True)
class Marker:
    """One jr2 comment: its kind, the fields of its JSON, and the comment's id and times."""

    kind: Kind
    fields: dict[str, Any]
    comment_id: int
    created_at: datetime
    updated_at: datetime

    @property
    def holder(self) -> str:
        return str(self.fields.get("holder", "?"))

    @property
    def nonce(self) -> str | None:
        n = self.fields.get("nonce")
        return str(n) if n is not None else None

    @property
    def lease(self) -> float:
        try:
            value = float(self.fields.get("lease", 0))
        except (TypeError, ValueError):
            return 0.0
        return min(max(value, 0.0), MAX_LEASE)

    @property
    def expires(self) -> datetime:
        return self.updated_at + timedelta(seconds=self.lease)

    def is_live(self, now: datetime) -> bool:
        return self.kind == "claim" and now < self.expires


def render_marker(kind: Kind, fields: dict[str, Any], text: str) -> str:
    """A comment body: the hidden marker, then one line for people."""
    return f"<!-- jr2:{kind} {json.dumps(fields, sort_keys=True)} -->\n{text}"


def split_marker(body: str) -> tuple[Kind, dict[str, Any], str] | None:
    """A body's jr2 marker: its kind, its JSON fields and the text after it (None: none)."""
    m = _MARKER.match(body or "")
    if m is None:
        return None
    try:
        fields = json.loads(m.group(2))
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    kind: Kind = m.group(1)  # type: ignore[assignment]
    return kind, fields, body[m.end():]


def parse_marker(comment: Comment) -> Marker | None:
    """The jr2 marker of a comment, or None when it is not one of jr2's."""
    found = split_marker(comment.body)
    if found is None:
        return None
    return Marker(found[0], found[1], comment.id, comment.created_at, comment.updated_at)


def markers(comments: Iterable[Comment]) -> list[Marker]:
    """jr2's markers among `comments`, in ascending comment id."""
    found = [mk for c in comments if (mk := parse_marker(c)) is not None]
    found.sort(key=lambda mk: mk.comment_id)
    return found


def holder_of(comments: Iterable[Comment], now: datetime) -> Marker | None:
    """The claim that holds the item at server time `now` (the live one of lowest id), or None."""
    return next((mk for mk in markers(comments) if mk.is_live(now)), None)


def claim_of(comments: Iterable[Comment], now: datetime,
             local_now: datetime | None = None) -> Claim | None:
    """The claim that holds the item at server time `now`, as the Ready-set's `Claim`, its
    lease end moved onto this machine's clock (`local_now`), which the Ready-set compares with."""
    mk = holder_of(comments, now)
    if mk is None:
        return None
    local = datetime.now(UTC) if local_now is None else local_now
    return Claim(holder=mk.holder, since=mk.created_at, lease_expires=local + (mk.expires - now))


def last_failure(comments: Iterable[Comment]) -> str | None:
    """The reason of the newest `jr2:failed` marker, if any."""
    failed = [mk for mk in markers(comments) if mk.kind == "failed"]
    if not failed:
        return None
    reason = failed[-1].fields.get("reason")
    return str(reason) if reason else "failed"


def iso_time(value: Any) -> datetime | None:
    """An ISO-8601 time read from a marker (UTC when it names no offset), or None."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def retry_record(found: Iterable[Marker]) -> tuple[int, datetime | None]:
    """The attempt record among `found` (ascending id): the attempts spent and the earliest next
    attempt, from the newest done or failed marker when it is a failure to retry; else (0,
    None), so a person's retry after a final failure starts a fresh count."""
    for mk in reversed(list(found)):
        if mk.kind not in ("done", "failed"):
            continue
        when, attempts = iso_time(mk.fields.get("retry_after")), mk.fields.get("attempts")
        if mk.kind != "failed" or when is None or not isinstance(attempts, int):
            return 0, None
        return max(0, attempts), when
    return 0, None
