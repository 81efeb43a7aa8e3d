"""The claim marker on Jira Cloud: kept in a comment property, the body is for people.

Design note: the claim protocol (`jr2_sources.kit.claims`) reads a marker at the start of a comment
body, `<!-- jr2:claim {...} -->`, and needs its JSON back byte for byte. Jira Data Center
stores a comment body (wiki markup) verbatim, so the marker lives in the body there. Jira Cloud
stores every comment as an Atlassian Document Format document and converts a REST v2 body (wiki
markup) into it and back; ADF has no node for an HTML comment, and `{...}` is wiki-markup macro
syntax, so nothing promises that the marker comes back. What Atlassian's description does
promise (swagger-v3.v3.json, `Comment.properties`: "A list of comment properties. Optional on
create and update.") is comment properties, made for machine-readable data, read back with
`POST /rest/api/2/comment/list?expand=properties` (the same operation as `/rest/api/3/...`;
`GET .../comment` only expands `renderedBody`). So on Cloud:

* writing: the marker is split off the body (`split`): the body keeps only the line for people,
  the marker's kind and JSON go into the comment property `jr2` ({"kind": ..., "fields": {...}});
* reading: `join` puts the marker back in front of the body, so the protocol stays tracker-blind.

A property is not shown to people and survives any body conversion.
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
