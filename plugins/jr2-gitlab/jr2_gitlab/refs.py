"""Item ids (`group/project#iid`), GitLab times, issue web URLs, and blockers written in text.

Ids: `group/project#12`. Blockers may also be written in an issue's description, as
`Depends on #12`, `Blocked by #3, #4` or `blocked by other/project#7` (GitLab's own reference
syntax for issues); links (`link_type` `is_blocked_by`) are the native way.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

_ID = re.compile(r"^(?P<project>[^#\s]+/[^#\s]+)#(?P<iid>\d+)$")
_PHRASE = re.compile(r"(?i)\b(?:depends\s+on|blocked\s+by)\b[:\s]*")
_REF = re.compile(r"\s*(?:,|and)?\s*(?P<project>[A-Za-z0-9_][\w.-]*(?:/[\w.-]+)+)?#(?P<iid>\d+)\b")
_WEB = re.compile(r"^/(?P<project>.+?)(?:/-)?/(?:issues|work_items)/(?P<iid>\d+)/?$")


def item_id(project: str, iid: int) -> str:
    return f"{project}#{iid}"


def split_id(value: str) -> tuple[str, int]:
    """`group/project#12` -> ("group/project", 12); ValueError otherwise."""
    m = _ID.match(value.strip())
    if m is None:
        raise ValueError(f"expected group/project#IID, not {value!r}")
    return m["project"], int(m["iid"])


def same_project(a: str, b: str) -> bool:
    """GitLab paths compare case-insensitively."""
    return a.strip("/").lower() == b.strip("/").lower()


def encode_project(project: str) -> str:
    """The URL-encoded path GitLab's REST API takes as `:id` (`group%2Fproject`)."""
    return quote(project, safe="")


def parse_time(value: str) -> datetime:
    """GitLab's ISO-8601 times (`2016-01-07T12:44:33.959Z`, or with an offset) in UTC."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def project_of_web_url(url: str | None) -> tuple[str, int] | None:
    """(project path, iid) of an issue's `web_url` (`https://host/g/p/-/issues/14`)."""
    if not url:
        return None
    m = _WEB.match(urlsplit(url).path)
    if m is None:
        return None
    return m["project"], int(m["iid"])


def body_refs(text: str | None, project: str, own_iid: int) -> list[str]:
    """Blockers named in a description (`Depends on #12, other/p#3`), as ids, in order."""
    if not text:
        return []
    found: list[str] = []
    for m in _PHRASE.finditer(text):
        pos = m.end()
        while True:
            r = _REF.match(text, pos)
            if r is None:
                break
            proj = r["project"] or project
            iid = int(r["iid"])
            ref = item_id(proj, iid)
            if not (same_project(proj, project) and iid == own_iid) and ref not in found:
                found.append(ref)
            pos = r.end()
    return found
