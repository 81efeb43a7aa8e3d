"""ADF documents as jr2 sends and counts them (compact JSON, UTF-16 sizes) and the keys of the
boxes it draws: shared by the layout (`adf`) and its renderer (`adfrender`), which import it and
not each other."""

from __future__ import annotations

import json
from typing import Any

from .body import TickKind


def dumps(value: Any) -> str:
    """Compact JSON, as jr2 sends it and counts it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def size(text: str) -> int:
    """`text`'s length in UTF-16 code units (how Java, and so Jira, counts characters)."""
    return len(text.encode("utf-16-le")) // 2


def key_of(kind: TickKind, item_id: str, gate: str | None = None) -> str:
    """The `localId` of a box jr2 draws."""
    parts = ["jr2", kind, item_id.encode().hex()]
    if gate is not None:
        parts.append(gate.encode().hex())
    return "-".join(parts)
