"""Known secret values, and scrubbing them from text before it reaches a log or the screen.

Secrets are the values of environment variables whose names say so (`*TOKEN*`, `*SECRET*`,
`*PASSWORD*`, `*_PAT`, `*API_KEY*`, `*PRIVATE_KEY*`, `*MARKER_KEY*`, `*_AUTH`), passwords in URLs
of any variable, and values a source registers; values under 6 characters are ignored. Scrubbed:
the value, each line of a multi-line one, and every base64 form of it at each of the three
alignments (standard and URL-safe: the whole base64 run around it goes), so `Basic
base64(email:token)` is scrubbed for any email. Redact before shortening text.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Mapping

_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|_PAT$|^PAT$|API_KEY|PRIVATE_KEY|MARKER_KEY|_AUTH$)", re.I)
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#@]+)@")
"""A URL's `scheme://user:password@`: group 1 is the password."""
MASK = "***"
MIN_SECRET = 6
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return _SECRET_NAME.search(name) is not None


def url_passwords(value: str) -> list[str]:
    """The passwords of the URLs in `value` (`http://user:pass@proxy` gives `pass`)."""
    return _URL_PASSWORD.findall(value)


def is_credential(name: str, value: str) -> bool:
    """Whether an environment variable holds a credential: its name says so, or its value holds
    a URL with a password."""
    return is_secret_name(name) or bool(url_passwords(value))


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The secret values to scrub, longest first (so a secret inside another goes too)."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET}
    values.update(p for v in env.values() if "://" in v for p in url_passwords(v)
                  if len(p) >= MIN_SECRET)
    values.update(v for v in extra if len(v) >= MIN_SECRET)
    return sorted(values, key=len, reverse=True)


def _pieces(secret: str) -> set[str]:
    """The secret, and each line of a multi-line secret."""
    out = {secret}
    if "\n" in secret or "\r" in secret:
        out.update(line.strip() for line in secret.splitlines())
    return {p for p in out if len(p) >= MIN_SECRET}


def base64_cores(secret: str) -> set[str]:
    """The base64 text that `secret` produces inside any encoded byte string, at each of the
    three byte alignments, in the standard and the URL-safe alphabet: only the characters that
    depend on the secret's bytes alone (not on its neighbours)."""
    raw = secret.encode("utf-8", "surrogateescape")
    cores: set[str] = set()
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + raw).decode("ascii")
        start, end = -(-8 * k // 6), 8 * (k + len(raw)) // 6
        core = enc[start:end]
        if len(core) >= MIN_SECRET:
            cores.update((core, core.translate(str.maketrans("+/", "-_"))))
    return cores


class Redactor:
    """Replaces every known secret value (and its lines and base64 forms) with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        plain: set[str] = set()
        self._cores: set[str] = set()
        for s in secrets:
            if s:
                plain.update(_pieces(s) if len(s) >= MIN_SECRET else {s})
                self._cores.update(base64_cores(s))
        alts = sorted(plain | self._cores, key=len, reverse=True)
        self._re = re.compile("|".join(map(re.escape, alts))) if alts else None

    def __call__(self, text: str) -> str:
        if self._re is None:
            return text
        spans: list[tuple[int, int]] = []
        for m in self._re.finditer(text):
            start, end = m.span()
            if m.group() in self._cores:  # the whole base64 run around it goes
                while start > 0 and text[start - 1] in _B64_CHARS:
                    start -= 1
                while end < len(text) and text[end] in _B64_CHARS:
                    end += 1
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        if not spans:
            return text
        out, at = [], 0
        for start, end in spans:
            out += [text[at:start], MASK]
            at = end
        out.append(text[at:])
        return "".join(out)
