"""jr2's markers on a Linear issue: attachments, seen by the claim protocol as comments.

Design notes
------------
* Where (Linear's attachments page, https://linear.app/developers/attachments):
  attachments are "designed with API developers in mind", carry a `metadata` JSON object that
  Linear stores as given (comments are Markdown that Linear's editor rewrites, so a hidden
  `<!-- -->` marker need not survive a person's edit), show in the issue as a link with a title
  (people see "jr2: claimed by ..."), and have a `creator`, the user whose key created them, so
  their author can be checked. A marker is one attachment whose URL is the issue's URL plus
  `#jr2-<nonce>`: unique per issue, since Linear updates instead of creating when the same URL
  is attached to the same issue again. Its `metadata` is `{"jr2": KIND, ...fields}`.
* Order: the protocol of `jr2_sources.kit.claims` needs comment ids that grow with time. An
  attachment id is a UUID, so `comment_id` packs the server's `createdAt` (microseconds) above
  the UUID's 128 bits: ids compare as (createdAt, id), and a later claimer never wins because of
  a lower random id. `attachment_id` unpacks it.
* Trust: a marker's author is its creator's email (its id when Linear gives no email). Every
  reading passes through the kit's marker reader (`jr2_sources.kit.markers.MarkerTrust`), as on
  every other tracker: only markers by the key's own user (Linear's `viewer`) and the accounts
  `--trust` names count, and with `JR2_MARKER_KEY` set only signed ones (jr2 signs the
  `metadata` it writes); the others are returned apart (`Ignored`), with their author.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from jr2_sources.kit import claims
from jr2_sources.kit.markers import Ignored, MarkerTrust

MARKER_KEY = "jr2"


def parse_time(text: str) -> datetime:
    """Linear's ISO-8601 `DateTime` as an aware datetime."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def comment_id(created: datetime, attachment: str) -> int:
    """The protocol's id of an attachment: (createdAt, id) packed in one growing integer."""
    micros = int(created.timestamp() * 1_000_000)
    try:
        low = uuid.UUID(attachment).int
    except ValueError:
        low = uuid.uuid5(uuid.NAMESPACE_URL, attachment).int
    return (micros << 128) | low


def to_comment(node: dict[str, Any]) -> tuple[claims.Comment, str] | None:
    """An attachment node as the protocol's `Comment` (its body the marker the kit reads) and
    its Linear id; None when it is not one of jr2's markers."""
    meta = node.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get(MARKER_KEY), str):
        return None
    kind = meta[MARKER_KEY]
    fields = {k: v for k, v in meta.items() if k != MARKER_KEY}
    created = parse_time(str(node["createdAt"]))
    creator = node.get("creator") or {}
    body = claims.render_marker(kind, fields, "")
    comment = claims.Comment(id=comment_id(created, str(node["id"])), body=body,
                             created_at=created, updated_at=parse_time(str(node["updatedAt"])),
                             author=str(creator.get("email") or creator.get("id") or "") or None)
    return comment, str(node["id"])


def split(nodes: Iterable[dict[str, Any]], markers: MarkerTrust, item: str
          ) -> tuple[list[claims.Comment], dict[int, str], list[Ignored]]:
    """The markers among the attachment nodes of `item` that count (`markers.read`), their
    Linear ids by protocol id, and the markers that were ignored (with their authors)."""
    found: dict[int, str] = {}
    comments: list[claims.Comment] = []
    for node in nodes:
        got = to_comment(node)
        if got is not None:
            comments.append(got[0])
            found[got[0].id] = got[1]
    reading = markers.read(item, comments)
    kept = sorted(reading.comments, key=lambda c: c.id)
    return kept, {c.id: found[c.id] for c in kept}, reading.ignored


def from_body(body: str) -> tuple[str, dict[str, Any], str]:
    """What a protocol comment body says: its kind, its fields, and the line for people."""
    parsed = claims.parse_marker(claims.Comment(0, body, datetime.now(UTC), datetime.now(UTC)))
    if parsed is None:
        raise ValueError("not a jr2 marker")
    text = body.split("-->", 1)[1].strip() if "-->" in body else ""
    return parsed.kind, dict(parsed.fields), text.splitlines()[0] if text else f"jr2: {parsed.kind}"


def metadata(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The attachment `metadata` of a marker."""
    return {MARKER_KEY: kind, **fields}
