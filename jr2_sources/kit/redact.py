"""Known secret values, and scrubbing them from text before it reaches a log or the screen.

Secrets are the values of environment variables whose names say they are secret (`*TOKEN*`,
`*SECRET*`, `*PASSWORD*`, `*_PAT`, `*API_KEY*`), plus any value a source registers. Values
shorter than 6 characters are ignored (they would scrub ordinary words).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|_PAT$|^PAT$|API_KEY|PRIVATE_KEY)", re.I)
MASK = "***"


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The secret values to scrub, longest first (so a secret inside another goes too)."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 6}
    values.update(v for v in extra if len(v) >= 6)
    return sorted(values, key=len, reverse=True)


class Redactor:
    """Replaces every known secret value in a string with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        vals = [s for s in secrets if s]
        self._re = re.compile("|".join(re.escape(s) for s in vals)) if vals else None

    def __call__(self, text: str) -> str:
        return self._re.sub(MASK, text) if self._re is not None else text
