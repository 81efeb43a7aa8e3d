"""What a worker gets of its item's feedback: `JR2_FEEDBACK_JSON` and `JR2_FEEDBACK_TEXT`.

`Feedback` holds what a tracker read on one head SHA: failing checks, reviews requesting
changes and their comments (nothing secret). Its `key` (the SHA and a digest of what was found)
is the same for the same feedback read twice (a restart, a second pool). Each file is at most
`LIMIT` bytes, the longest bodies cut first, each cut saying so.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LIMIT", "Check", "Feedback", "Note", "write"]

LIMIT = 256 << 10
CUT = "\n[cut: the rest of this text was left out to keep the feedback under 256 KiB]"


@dataclass(frozen=True, slots=True)
class Check:
    """One failing check run or commit status on the head."""

    name: str
    conclusion: str
    summary: str | None = None
    details_url: str | None = None
    ref: str = ""  # the tracker's id of it (a check run id, a status context)


@dataclass(frozen=True, slots=True)
class Note:
    """A review that requests changes (`path` None) or one of its review comments."""

    author: str
    body: str
    path: str | None = None
    line: int | None = None
    ref: str = ""


@dataclass(slots=True)
class Feedback:
    """The feedback on one head SHA of an item's pull request."""

    head_sha: str
    pr: str | None = None
    checks: list[Check] = field(default_factory=list)
    reviews: list[Note] = field(default_factory=list)
    comments: list[Note] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.checks or self.reviews)

    @property
    def key(self) -> str:
        """The head SHA and a digest of what was found (see the module notes)."""
        refs = sorted([f"c:{c.ref or c.name}:{c.conclusion}" for c in self.checks]
                      + [f"r:{r.ref}" for r in self.reviews])
        digest = hashlib.sha256("\n".join(refs).encode()).hexdigest()[:16]
        return f"{self.head_sha}:{digest}"

    def reason(self) -> str:
        """One line: what the feedback is (a failure reason when attempts are spent)."""
        parts = [f"check {c.name} {c.conclusion}" for c in self.checks]
        parts += [f"changes requested by {r.author}" for r in self.reviews]
        return f"feedback on {self.head_sha[:12]}: " + ", ".join(parts)

    def to_json(self, cut: int | None = None) -> dict[str, Any]:
        """The JSON of `JR2_FEEDBACK_JSON`; `cut`: the longest text kept per body."""
        def text(value: str | None) -> str | None:
            return value if value is None or cut is None or len(value) <= cut else (
                value[:cut] + CUT)

        return {"head_sha": self.head_sha, "pr": self.pr,
                "checks": [{"name": c.name, "conclusion": c.conclusion,
                            "summary": text(c.summary), "details_url": c.details_url}
                           for c in self.checks],
                "reviews": [{"author": r.author, "state": "CHANGES_REQUESTED",
                             "body": text(r.body)} for r in self.reviews],
                "comments": [{"author": n.author, "body": text(n.body), "path": n.path,
                              "line": n.line} for n in self.comments]}

    def to_text(self, cut: int | None = None) -> str:
        """The same as plain text (`JR2_FEEDBACK_TEXT`)."""
        data = self.to_json(cut)
        out = [f"Feedback on {data['head_sha']}" + (f" ({data['pr']})" if data["pr"] else "")]
        for c in data["checks"]:
            out.append(f"\nFailing check: {c['name']} ({c['conclusion']})"
                       + (f"\n  {c['details_url']}" if c["details_url"] else ""))
            if c["summary"]:
                out.append(c["summary"])
        for r in data["reviews"]:
            out.append(f"\nChanges requested by {r['author']}:")
            if r["body"]:
                out.append(r["body"])
        for n in data["comments"]:
            where = f"{n['path']}:{n['line']}" if n["line"] is not None else str(n["path"])
            out.append(f"\nReview comment by {n['author']} on {where}:\n{n['body']}")
        return "\n".join(out) + "\n"

    def bounded(self) -> tuple[str, str]:
        """The JSON and the text, each at most `LIMIT` bytes (bodies cut, with a note)."""
        cut: int | None = None
        while True:
            js = json.dumps(self.to_json(cut), indent=2, ensure_ascii=False)
            tx = self.to_text(cut)
            if max(len(js.encode()), len(tx.encode())) <= LIMIT or cut == 0:
                return js, tx
            cut = LIMIT // 4 if cut is None else cut // 2

    @classmethod
    def of_json(cls, data: dict[str, Any]) -> Feedback:
        """A `Feedback` back from `to_json` (the item's `extra["feedback"]`)."""
        return cls(str(data.get("head_sha") or ""), data.get("pr"),
                   [Check(str(c.get("name")), str(c.get("conclusion")), c.get("summary"),
                          c.get("details_url")) for c in data.get("checks") or []],
                   [Note(str(r.get("author")), str(r.get("body") or ""))
                    for r in data.get("reviews") or []],
                   [Note(str(n.get("author")), str(n.get("body") or ""), n.get("path"),
                         n.get("line")) for n in data.get("comments") or []])


def write(data: Any, item_file: Path) -> dict[str, str]:
    """`JR2_FEEDBACK_JSON` and `JR2_FEEDBACK_TEXT` for an item whose `extra["feedback"]` is
    `data`, written beside `item_file` (mode 0600); nothing when `data` is no feedback."""
    if not isinstance(data, dict):
        return {}
    js, tx = Feedback.of_json(data).bounded()
    out = {}
    for name, suffix, text in (("JR2_FEEDBACK_JSON", ".feedback.json", js),
                               ("JR2_FEEDBACK_TEXT", ".feedback.txt", tx)):
        path = item_file.with_name(item_file.stem + suffix)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(text)
        out[name] = str(path.resolve())
    return out
