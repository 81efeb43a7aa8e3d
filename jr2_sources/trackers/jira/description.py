"""An issue's description as plain text, for `--exclusive-by touches`, asked for only while it is
in use (`JiraTracker.want_bodies`). REST v2 answers wiki markup, kept as written; a v3 Atlassian
Document Format tree is walked in order by `description_text`, one line per block (a `hardBreak`
starts one), marks ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["description_text"]


def description_text(value: Any) -> str | None:
    """The description's text, lines separated by `\\n`: a string as it is (REST v2, wiki
    markup), an ADF document walked block by block (REST v3), None when there is none."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        return None
    lines: list[str] = []
    _walk(value, lines, [])
    return "\n".join(lines)


def _walk(node: Mapping[str, Any], lines: list[str], line: list[str]) -> None:
    """Append `node`'s text to `lines`; `line` gathers the inline text of the current block."""
    kind = node.get("type")
    if kind == "text":
        text = node.get("text")
        line.append(text if isinstance(text, str) else "")
        return
    if kind == "hardBreak":
        lines.append("".join(line))
        line.clear()
        return
    content = node.get("content")
    if not isinstance(content, list):
        return
    children = [c for c in content if isinstance(c, Mapping)]
    inline = any(c.get("type") in ("text", "hardBreak") for c in children)
    if not inline:
        for child in children:
            _walk(child, lines, [])
        return
    own: list[str] = []
    for child in children:
        _walk(child, lines, own)
    lines.append("".join(own))
