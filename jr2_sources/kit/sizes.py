"""Sizes on the command line: `1048576`, `512K`, `10MiB`, `2G` -> bytes.

K, M and G (with or without `i` and `B`: `10M`, `10MB`, `10MiB`) all count in 1024s, as `du`,
`ulimit` and most log tools read them; a plain number is bytes."""

from __future__ import annotations

import re

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmg]?)(i?b?)", re.I)
_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(value: str | int) -> int:
    """Bytes from a number or text like `10MiB`; raises ValueError with a hint."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        m = _SIZE.fullmatch(str(value).strip())
        if m is None or (m.group(3) and not m.group(2) and m.group(3).lower() != "b"):
            raise ValueError(f"{value!r} is not a size like 512K, 10MiB or 1G")
        size = int(float(m.group(1)) * _UNIT[m.group(2).lower()])
    if size <= 0:
        raise ValueError("a size must be more than 0 bytes")
    return size


def format_size(size: int) -> str:
    """`10485760` -> `10 MiB`, `1500` -> `1,500 bytes`: short, for log lines."""
    for unit, step in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= step and size % step == 0:
            return f"{size // step} {unit}"
    return f"{size:,} bytes"
