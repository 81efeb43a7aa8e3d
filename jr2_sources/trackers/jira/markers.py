"""The claim marker on Jira Cloud: kept in a comment property, the body is for people.

The claim protocol reads `<!-- jr2:claim {...} -->` at the start of a body and needs its JSON
back byte for byte. Data Center keeps a body verbatim; Cloud converts it to ADF and back, which
promises nothing for an HTML comment, but keeps comment properties (read with `POST
/rest/api/2/comment/list?expand=properties`). So on Cloud `split` moves the marker into the
property `jr2` (`{"kind": ..., "fields": {...}}`), the body keeping the line for people, and
`join` puts it back in front of the body when reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, get_args

from jr2_sources.capabilities.limits.comment_locks import lock_fields, render_lock
from jr2_sources.kit.claims import Comment, Kind, parse_marker, render_marker

PROPERTY = "jr2"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def split(body: str) -> tuple[str, list[dict[str, Any]]]:
    """(body for people, comment properties) of a body that may begin with a jr2 marker."""
    mk = parse_marker(Comment(0, body, _EPOCH, _EPOCH))
    if mk is None:
        lock = lock_fields(body)  # a lock comment of `kit.comment_locks` (--control-issue)
        if lock is None:
            return body, []
        text = body.split("-->", 1)[1].lstrip("\n")
        return text, [{"key": PROPERTY, "value": {"kind": "lock", "fields": lock}}]
    text = body.split("-->", 1)[1].lstrip("\n") if "-->" in body else body
    return text, [{"key": PROPERTY, "value": {"kind": mk.kind, "fields": mk.fields}}]


def join(body: str, properties: Any) -> str:
    """The body with jr2's marker back in front when the comment carries the `jr2` property."""
    if not isinstance(properties, list):
        return body
    for prop in properties:
        if not isinstance(prop, Mapping) or prop.get("key") != PROPERTY:
            continue
        value = prop.get("value")
        if not isinstance(value, Mapping):
            continue
        kind, fields = value.get("kind"), value.get("fields")
        if kind in get_args(Kind) and isinstance(fields, dict):
            return render_marker(kind, fields, body)  # type: ignore[arg-type]
        if kind == "lock" and isinstance(fields, dict):
            return render_lock(fields, body)
    return body
