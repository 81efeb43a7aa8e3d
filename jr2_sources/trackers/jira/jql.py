"""Building the JQL jr2 sends: exactly the user's filter, open issues only.

Design note: the user's JQL is kept verbatim, split only at a top-level `ORDER BY` (outside
quoted strings), which stays at the end, where JQL requires it:

    (<user filter>) AND statusCategory != Done ORDER BY <user order>

Only the user's filter selects work: jr2 never widens it (a label clause would cover the whole
site, and a pool would claim another team's issues). For a report, jr2's marked issues that
fell out of the filter may be shown read-only; that search is bounded to the projects the
filter's own results name (`marked_outside_jql`), never site-wide, and the JQL is not parsed.
Labels and project keys are quoted with `"` and `\\` escaped.
"""

from __future__ import annotations

import re

_ORDER_BY = re.compile(r"order\s+by\b", re.IGNORECASE)


def split_order_by(jql: str) -> tuple[str, str]:
    """(filter, order clause): the order clause starts with `ORDER BY`, or is empty."""
    quote: str | None = None
    i = 0
    while i < len(jql):
        ch = jql[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif (ch in "oO" and (i == 0 or not (jql[i - 1].isalnum() or jql[i - 1] == "_"))
              and _ORDER_BY.match(jql, i)):
            return jql[:i].strip(), jql[i:].strip()
        i += 1
    return jql.strip(), ""


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
