"""Issue ids (`owner/repo#12`) and the blockers people write in issue bodies.

A keyword (`depends on`, `blocked by`, `needs`; any case, an optional colon) followed by
references (`#12`, `owner/repo#12`, an issue or PR URL on any host) separated by commas, `and`,
`&` or spaces names blockers. Code and HTML comments are skipped (an unclosed `<!--` hides the
rest, as GitHub renders it), self-references and duplicates dropped, order kept; every pattern
is linear in the body. Repository names compare case-insensitively, spelled as the target is.
"""

from __future__ import annotations

import re
from datetime import datetime

_KEYWORD = re.compile(r"\b(?:depends\s+on|blocked\s+by|needs)\s*:?", re.IGNORECASE)
# Owners and repositories are bounded by GitHub's own limits (a user or organisation name is at
# most 39 characters, a repository name at most 100), and a host by DNS's 253: with `+` a body
# like `needs-needs-needs-...` rescanned the whole run after every keyword (8 s for 65,536
# characters).
_OWNER, _NAME, _HOST = r"[\w.-]{1,39}", r"[\w.-]{1,100}", r"[^\s/]{1,253}"
_REF = (rf"(?:https?://{_HOST}/(?P<uo>{_OWNER})/(?P<ur>{_NAME})/(?:issues|pull)/(?P<un>\d+)"
        rf"|(?:(?P<o>{_OWNER})/(?P<r>{_NAME}))?#(?P<n>\d+))")
_NEXT_REF = re.compile(r"\s*(?:(?:,|&|\band\b)\s*)*" + _REF + r"(?![\w/])", re.IGNORECASE)
_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_INLINE = re.compile(r"`[^`\n]*`")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # unclosed: to the end (linear)
_REPO_URL = re.compile(r"/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)$")
_REPO_API = re.compile(r"/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/?$")


def parse_time(value: str) -> datetime:
    """GitHub's ISO-8601 timestamps (`2024-01-02T03:04:05Z`), timezone-aware."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def item_id(repo: str, number: int) -> str:
    """`owner/repo#N`."""
    return f"{repo}#{number}"


def split_id(iid: str) -> tuple[str, int]:
    """`owner/repo#N` -> ("owner/repo", N); ValueError for anything else."""
    repo, sep, num = iid.rpartition("#")
    if not sep or "/" not in repo or not num.isdigit():
        raise ValueError(f"not an issue id: {iid!r}")
    return repo, int(num)


def same_repo(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def repo_of_api_url(url: str | None) -> str | None:
    """`owner/repo` from an issue's `repository_url` (`.../repos/owner/repo`)."""
    if not url:
        return None
    m = _REPO_API.search(url)
    return f"{m['o']}/{m['r']}" if m else None


def id_of_issue_url(url: str | None) -> str | None:
    """`owner/repo#N` from an API issue URL (`.../repos/owner/repo/issues/N`), e.g. the
    documented `parent_issue_url`."""
    if not url:
        return None
    m = _REPO_URL.search(url)
    return f"{m['o']}/{m['r']}#{m['n']}" if m else None


def _strip_code(body: str) -> str:
    return _INLINE.sub(" ", _FENCE.sub(" ", _COMMENT.sub(" ", body)))


def body_refs(body: str | None, repo: str, self_number: int | None = None) -> list[str]:
    """The issue ids a body says it waits for, in order, without duplicates or itself."""
    if not body:
        return []
    text = _strip_code(body)
    out: list[str] = []
    seen: set[str] = set()
    me = item_id(repo, self_number).lower() if self_number is not None else None
    for kw in _KEYWORD.finditer(text):
        pos = kw.end()
        while True:
            m = _NEXT_REF.match(text, pos)
            if m is None:
                break
            pos = m.end()
            if m["un"]:
                ref_repo, num = f"{m['uo']}/{m['ur']}", int(m["un"])
            else:
                ref_repo = f"{m['o']}/{m['r']}" if m["o"] else repo
                num = int(m["n"])
            if same_repo(ref_repo, repo):
                ref_repo = repo
            iid = item_id(ref_repo, num)
            key = iid.lower()
            if key == me or key in seen:
                continue
            seen.add(key)
            out.append(iid)
    return out
