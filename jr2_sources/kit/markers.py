"""The one reader of jr2's markers: whose markers count, and (with a key) which are genuine.

Every listing of a thread passes through `MarkerTrust.read` before any protocol looks at it. A
marker counts only when its author is trusted (the pool's own account, `identity`, plus those
`--trust` names, case-insensitively); a comment with no marker is kept. With `JR2_MARKER_KEY`
every marker jr2 writes carries `sig` (HMAC-SHA256 over its kind, fields, item and tracker), and
markers that grant something (a claim, a lock, an answer, an attempt record) count only signed;
a copy elsewhere does not verify, and a nonce a settled marker carries is spent. What was
ignored is said (`Ignored`: `ignored_marker` in the report, one warning per author per run).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .claims import Comment, Kind, Marker, render_marker, split_marker

__all__ = ["KEY_VAR", "TRUST_HELP", "Ignored", "MarkerTrust", "Reading", "distinct", "marker_key",
           "request_ref", "signed_fields"]

log = logging.getLogger("jr2.markers")

KEY_VAR = "JR2_MARKER_KEY"  # the environment variable holding the fleet's marker key
TRUST_HELP = ("another account whose jr2 markers count, besides this pool's own (repeatable: "
              "a fleet whose pools use different accounts names the others)")
"""The help of a comment tracker's `trust` option (`--trust ACCOUNT`, `trust = [...]`)."""

Why = Literal["author", "unsigned", "signature", "replayed"]
_SETTLED = frozenset({"done", "failed", "released", "gate"})


@dataclass(frozen=True, slots=True)
class Ignored:
    """A marker that changed nothing: its kind, its comment's author, and why (`author`: not
    trusted; `unsigned` / `signature`: it grants something without a valid signature with a
    key set; `replayed`: a spent nonce); `about`: the item a lock marker names."""

    marker: str
    author: str
    why: Why = "author"
    comment_id: int = 0
    about: str | None = None

    def to_json_obj(self) -> dict[str, Any]:
        """The `ignored_marker` reason as the JSON contract spells it."""
        return {"kind": "ignored_marker", "marker": self.marker, "author": self.author,
                "why": self.why}


@dataclass(slots=True)
class Reading:
    """One thread as the protocols may see it (`comments`), and the markers left out."""

    comments: list[Comment]
    ignored: list[Ignored] = field(default_factory=list)


def marker_key(env: Mapping[str, str] | None = None) -> str | None:
    """The fleet's marker key (`JR2_MARKER_KEY`), or None when it is not set or empty."""
    value = (os.environ if env is None else env).get(KEY_VAR, "")
    return value if value.strip() else None


def request_ref(mk: Marker) -> str:
    """The name of one gate request (its comment and time), as an answer's `request` names it."""
    return f"{mk.comment_id}@{mk.updated_at.isoformat()}"


def _grants(kind: str, fields: dict[str, Any]) -> bool:
    """Whether a marker grants something: it must be signed when a key is set."""
    return (kind in ("claim", "lock", "answer") or (kind == "failed" and "retry_after" in fields)
            or (kind == "feedback" and "rerun" in fields))  # a rerun: an attempt record


def signed_fields(key: bytes, tracker: str, item: str, kind: str,
                  fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` with `sig`: the HMAC-SHA256 under `key` of the kind, the fields (less `sig`),
    the item and the tracker (`kind:target`)."""
    body = {k: v for k, v in fields.items() if k != "sig"}
    payload = json.dumps({"kind": kind, "fields": body, "item": item, "tracker": tracker},
                         sort_keys=True, separators=(",", ":"), default=str)
    sig = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    return {**body, "sig": sig}


class MarkerTrust:
    """Whom one tracker's pool (`tracker`: `kind:target`) trusts: `identity()` the accounts of
    its own credentials (asked once, when first needed), `also` those a fleet names; `key`:
    the marker key (None: markers are not signed)."""

    def __init__(self, tracker: str, identity: Callable[[], Iterable[str]], *,
                 also: Iterable[str] = (), key: str | bytes | None = None,
                 warn: bool = False) -> None:
        self.tracker = tracker
        self._identity = identity
        self._also = frozenset(a.strip().lower() for a in also if a.strip())
        self._key = key.encode() if isinstance(key, str) else key
        self._warn = warn
        self._own: frozenset[str] | None = None
        self._seen: set[str] = set()  # accounts that wrote what this pool wrote (`posted_by`)
        self._ignored: dict[str, tuple[Ignored, ...]] = {}
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"MarkerTrust({self.tracker!r}, signed={self._key is not None})"

    @property
    def signing(self) -> bool:
        """Whether a marker key is set."""
        return self._key is not None

    def own(self) -> frozenset[str]:
        """The accounts of the pool's own credentials (lower case), asked once."""
        with self._lock:
            if self._own is None:
                self._own = frozenset(str(a).strip().lower() for a in self._identity()
                                      if a and str(a).strip())
            return self._own

    def accounts(self) -> frozenset[str]:
        """Every account whose markers count: the pool's own and the ones a fleet names."""
        with self._lock:
            seen = frozenset(self._seen)
        return self.own() | self._also | seen

    def posted_by(self, author: str | None) -> None:
        """The author of a comment this pool just posted: its own account, whatever `identity`
        guessed, so trusted from now on."""
        if author and author.strip():
            with self._lock:
                self._seen.add(author.strip().lower())

    def trusts(self, author: str | None) -> bool:
        """Whether `author` (a comment's author id) is a trusted account."""
        if not author:
            return False
        key = author.strip().lower()
        with self._lock:
            if key in self._also or key in self._seen:
                return True
        return key in self.own()

    def sign(self, item: str, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        """`fields` as jr2 writes them on `item`'s thread: signed when a key is set."""
        if self._key is None:
            return fields
        return signed_fields(self._key, self.tracker, item, kind, fields)

    def seal(self, item: str, body: str) -> str:
        """A body jr2 writes on `item`'s thread, its marker signed when a key is set."""
        found = split_marker(body) if self._key is not None else None
        if found is None:
            return body
        kind, fields, text = found
        return render_marker(kind, self.sign(item, kind, fields), text.removeprefix("\n"))

    def verify(self, item: str, kind: str, fields: dict[str, Any]) -> Why | None:
        """None when the marker may count as far as signing goes; else why it may not."""
        if self._key is None or not _grants(kind, fields):
            return None
        given = fields.get("sig")
        if not isinstance(given, str):
            return "unsigned"
        want = signed_fields(self._key, self.tracker, item, kind, fields)["sig"]
        return None if hmac.compare_digest(given, want) else "signature"

    def read(self, item: str, comments: Iterable[Comment]) -> Reading:
        """The thread of `item` as the protocols may see it (see the module notes)."""
        kept: list[Comment] = []
        ignored: list[Ignored] = []
        spent: set[str] = set()
        copies: list[tuple[Comment, Kind, str]] = []
        for c in sorted(comments, key=lambda c: c.id):
            found = split_marker(c.body)
            if found is None:
                kept.append(c)
                continue
            kind, fields, _ = found
            why: Why | None = None if self.trusts(c.author) else "author"
            if why is None:
                why = self.verify(item, kind, fields)
            if why is not None:
                about = fields.get("item") if kind == "lock" else None
                ignored.append(Ignored(kind, c.author or "?", why, c.id,
                                       about if isinstance(about, str) else None))
                continue
            nonce = fields.get("nonce")
            if kind in _SETTLED and isinstance(nonce, str):
                spent.add(nonce)
            if kind in ("claim", "lock") and isinstance(nonce, str):
                copies.append((c, kind, nonce))
            kept.append(c)
        seen: set[str] = set()
        for c, kind, nonce in copies:  # a copy shares its original's nonce: the first counts
            if (kind == "claim" and nonce in spent) or nonce in seen:
                kept.remove(c)
                ignored.append(Ignored(kind, c.author or "?", "replayed", c.id))
            seen.add(nonce)
        once = distinct(ignored)
        with self._lock:
            if once:
                self._ignored[item] = once
            else:
                self._ignored.pop(item, None)
        if self._warn and once:
            self.warn_once(self.tracker, once)
        return Reading(kept, ignored)

    def ignored_on(self, item: str) -> tuple[Ignored, ...]:
        """The markers the latest reading of `item`'s thread ignored, for the report."""
        with self._lock:
            return self._ignored.get(item, ())

    def warn_once(self, source: str, ignored: Iterable[Ignored]) -> None:
        """One warning line per author per run: whose markers this pool ignores."""
        for ig in ignored:
            who = ig.author if ig.why == "author" else f"{ig.author} ({ig.why})"
            with self._lock:
                if who in self._warned:
                    continue
                self._warned.add(who)
            shown = "".join(ch if ch.isprintable() else "?" for ch in ig.author)[:80]
            if ig.why == "author":
                log.warning("jr2: %s: ignoring jr2 markers by %s (not an account this pool "
                            "trusts; see --trust)", source, shown)
            else:
                log.warning("jr2: %s: ignoring jr2 markers by %s that grant something "
                            "without a valid JR2_MARKER_KEY signature (%s)", source, shown,
                            ig.why)


def distinct(found: Iterable[Ignored]) -> tuple[Ignored, ...]:
    """The ignored markers once per (marker, author, why, item named), in comment order."""
    out: dict[tuple[str, str, str, str | None], Ignored] = {}
    for ig in sorted(found, key=lambda i: i.comment_id):
        out.setdefault((ig.marker, ig.author, ig.why, ig.about), ig)
    return tuple(out.values())
