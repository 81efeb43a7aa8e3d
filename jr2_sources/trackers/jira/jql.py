"""Building the JQL jr2 sends: exactly the user's filter, open issues only.

    (<user filter>) AND statusCategory != Done ORDER BY <user order>

The user's JQL is kept verbatim, split only at a top-level `ORDER BY`, and never widened. A
report's search for jr2's marked issues beside the filter is bounded to the projects the
filter's own results name (`marked_outside_jql`). Labels and keys are quoted, `"` and `\\` escaped.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo

_ORDER_BY = re.compile(r"(?<![\w])order\s+by\b", re.IGNORECASE)


def split_order_by(jql: str) -> tuple[str, str]:
    """(filter, order clause): the order clause starts with `ORDER BY`, or is empty."""
    found = _ORDER_BY.search(_parts(jql, "\0")[0])  # no keyword spans a quoted string
    if found is None:
        return jql.strip(), ""
    return jql[:found.start()].strip(), jql[found.start():].strip()


_KEYWORDS = frozenset({"and", "or", "not", "in", "is", "was", "by", "during", "before",
                       "after", "on", "from", "to", "changed", "empty", "null",
                       "currentuser"})  # the searching account: the same at every search
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_PERIOD = r"[-+]?\d+\s*[wdhm]"
_RELATIVE = re.compile(rf"\s*{_PERIOD}(?:\s+{_PERIOD})*\s*", re.IGNORECASE)
_RELATIVE_BARE = re.compile(rf"(?<![\w.]){_PERIOD}(?![\w.])", re.IGNORECASE)
# JQL's `filter` field and its aliases (Atlassian's JQL fields reference, "Filter"): what a
# saved filter selects, whose text is not here (it may move with time)
_SAVED = re.compile(r"(?<![\w.])(?:filter|request|savedfilter|searchrequest)"
                    r"\s*(?:!?=|(?:not\s+)?in\b)", re.IGNORECASE)


def _parts(jql: str, blank: str = " ") -> tuple[str, list[str]]:
    """(the text with each character of a quoted string, quotes included, made `blank`: the
    same length; the quoted strings, unescaped)."""
    outside = list(jql)
    quoted: list[str] = []
    quote_ch: str | None = None
    buf: list[str] = []
    i = 0
    while i < len(jql):
        ch = jql[i]
        if quote_ch is not None:
            outside[i] = blank
            if ch == "\\" and i + 1 < len(jql):
                outside[i + 1] = blank
                buf.append(jql[i + 1])
                i += 2
                continue
            if ch == quote_ch:
                quoted.append("".join(buf))
                buf, quote_ch = [], None
            else:
                buf.append(ch)
        elif ch in "\"'":
            quote_ch, outside[i] = ch, blank
        i += 1
    return "".join(outside), quoted


def moves_with_time(user_jql: str) -> bool:
    """Can the filter select other issues later without any change to them? True when it
    holds a function (`now()`, `startOfDay()`, `openSprints()`, `membersOf()`,
    `linkedIssues()`...: evaluated when the search runs), a date relative to now ("-1d",
    `-4w`, "4w 2d": Atlassian's JQL date formats) or a saved filter (`filter = 10001`: its
    JQL is not in the text). Such a scope can drop an issue whose
    `updated` never moves, which no `updated >= T` delta sees (`JiraTracker.claim` judges it
    again). Conservative by design: a word that only looks like one costs a search per claim."""
    where, _ = split_order_by(user_jql)
    outside, quoted = _parts(where)
    if any(m.group(1).lower() not in _KEYWORDS for m in _CALL.finditer(outside)):
        return True
    if _SAVED.search(outside):  # a saved filter's own JQL is not here: assume it moves
        return True
    return bool(_RELATIVE_BARE.search(outside)) or any(_RELATIVE.fullmatch(q) for q in quoted)


def quote(value: str) -> str:
    """A JQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scope_jql(user_jql: str) -> str:
    """The JQL of a snapshot: the user's filter, not done, in the user's order."""
    where, order = split_order_by(user_jql)
    text = f"({where}) AND statusCategory != Done" if where else "statusCategory != Done"
    return f"{text} {order}" if order else text


def marked_outside_jql(user_jql: str, labels: tuple[str, ...],
                       projects: set[str] | frozenset[str]) -> str | None:
    """The open issues of `projects` that carry one of jr2's `labels` and that the user's filter
    does not select (None when there is no project to look in, or no filter to step out of)."""
    where, _ = split_order_by(user_jql)
    if not projects or not where:
        return None
    return (f"project in ({', '.join(quote(p) for p in sorted(projects))}) AND "
            f"labels in ({', '.join(quote(lab) for lab in labels)}) AND NOT ({where}) "
            "AND statusCategory != Done")


# -- deltas: what changed since a moment ---------------------------------------------------------

MAX_KEYS = 200
"""Most issue keys a delta search names (`key in (...)`); beyond them a full reading is due."""

_WIDEST_NEGATIVE_OFFSET = timedelta(hours=12)  # UTC-12:00, the most negative zone offset


def jql_time(at: datetime, zone: tzinfo | None) -> str:
    """`at` as a JQL date-time literal ("yyyy/MM/dd HH:mm", Atlassian's JQL date-time format,
    minute precision) that Jira reads, in `zone` (the searching account's time zone), as `at`
    or earlier, never later: the minute is floored; a wall time a clock passes twice (the hour
    it goes back) is taken before that hour, whichever of the two Jira picks; with no known
    zone the literal is moved 12 hours back, so that read in any zone it is not later."""
    if zone is None:
        at, zone = at - _WIDEST_NEGATIVE_OFFSET, UTC
    local = at.astimezone(zone)
    other = local.replace(fold=1 - local.fold)
    if local.fold == 0 and (other.utcoffset() or timedelta()) < (local.utcoffset() or timedelta()):
        # an ambiguous wall time on its first pass: Jira may read the second, an hour later
        local = (at - ((local.utcoffset() or timedelta()) - (other.utcoffset() or timedelta()))
                 ).astimezone(zone)
    return local.strftime("%Y/%m/%d %H:%M")


def keys_clause(keys: set[str] | frozenset[str]) -> str:
    """`key in ("A-1", "B-2")` (issue keys or numeric ids; JQL's `key` takes both)."""
    return f"key in ({', '.join(quote(k) for k in sorted(keys))})"


def scope_where(user_jql: str) -> str:
    """The filter part of `scope_jql` (no ORDER BY): the user's filter, open issues only."""
    where, _ = split_order_by(user_jql)
    return f"({where}) AND statusCategory != Done" if where else "statusCategory != Done"


def changed_jql(user_jql: str, since: str, keys: set[str] | frozenset[str]) -> str:
    """The open issues in scope updated at or after `since` (a `jql_time` literal), and the
    issues `keys` names (read again whatever their time) that are in scope."""
    changed = f"updated >= {quote(since)}"
    if keys:
        changed = f"({changed} OR {keys_clause(keys)})"
    return f"{scope_where(user_jql)} AND {changed}"


def left_jql(user_jql: str, since: str, projects: set[str] | frozenset[str],
             keys: set[str] | frozenset[str]) -> str | None:
    """The issues NOT in scope (any more) that were updated at or after `since` in `projects`
    (the projects the scope's own results named, never parsed from the JQL), or that `keys`
    names: items that left the scope (done, moved, edited out of the filter) and outside
    blockers whose state changed. None when there is nothing to look in."""
    parts = []
    if projects:
        parts.append(f"project in ({', '.join(quote(p) for p in sorted(projects))}) AND "
                     f"updated >= {quote(since)}")
    if keys:
        parts.append(keys_clause(keys))
    if not parts:
        return None
    where = parts[0] if len(parts) == 1 else " OR ".join(f"({p})" for p in parts)
    return f"({where}) AND NOT ({scope_where(user_jql)})"
