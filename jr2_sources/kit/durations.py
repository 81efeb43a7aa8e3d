"""Durations on the command line: `90`, `90s`, `10m`, `1h30m`, `1.5h` -> seconds.

`parse_duration` and `format_duration` are plain functions; `Duration` is the pydantic field type
(`parse_duration` as its `BeforeValidator`: seconds, from a number or `10m`-style text)."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BeforeValidator

from jr2_sources.optionhint import OptionHint

_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
MAX_DURATION = 3650 * 86400.0
"""Ten years: longer is a typo (or `inf`), and would overflow the clocks claims are kept in."""


def parse_duration(value: Any) -> float:
    """Seconds from a number or a string like `10m`; raises ValueError with a hint."""
    if isinstance(value, bool):
        raise ValueError("expected a duration like 30s, 10m or 1h")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = str(value).strip().lower().replace(" ", "")
        try:
            seconds = float(text)
        except ValueError:
            parts = _PART.findall(text)
            if not parts or "".join(n + u for n, u in parts) != text:
                raise ValueError(f"{value!r} is not a duration like 30s, 10m or 1h") from None
            seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    if math.isnan(seconds) or not seconds > 0:
        raise ValueError("a duration must be more than 0 seconds")
    if seconds > MAX_DURATION:
        raise ValueError(f"{value!r} is longer than the longest duration jr2 takes (3650d)")
    return seconds


def format_duration(seconds: float) -> str:
    """`600` -> `10m`, `90` -> `1m30s`, `0.5` -> `0.5s`: the words `parse_duration` reads."""
    if seconds != int(seconds) or seconds < 1:
        return f"{seconds:g}s"
    rest, out = int(seconds), ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if rest >= size:
            out += f"{rest // size}{unit}"
            rest %= size
    return out


Duration = Annotated[float, BeforeValidator(parse_duration),
                     OptionHint("DURATION", lambda v: format_duration(float(v)))]
"""A pydantic field type: seconds, accepting `10m`-style strings (`parse_duration`)."""
