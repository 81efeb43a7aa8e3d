"""Building the JQL jr2 sends: the user's filter, jr2's marked issues, open ones only.

Design note: the user's JQL is kept verbatim, split only at a top-level `ORDER BY` (outside
quoted strings), which stays at the end, where JQL requires it:

    ((<user filter>) OR labels in ("jr2:claimed", "jr2:failed")) AND statusCategory != Done
    ORDER BY <user order>

so an issue carrying jr2's claim or failure label is in the snapshot whatever the filter
(DESIGN.md §4), and done issues never are. Labels are quoted with `"` and `\\` escaped.
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


def scope_jql(user_jql: str, labels: tuple[str, ...]) -> str:
    """The JQL of a snapshot: the user's filter or jr2's labels, not done, user's order."""
    where, order = split_order_by(user_jql)
    marked = f"labels in ({', '.join(quote(lab) for lab in labels)})"
    text = (f"(({where}) OR {marked}) AND statusCategory != Done" if where
            else "statusCategory != Done")
    return f"{text} {order}" if order else text
