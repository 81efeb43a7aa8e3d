"""The tracker: jr2's four questions, answered by a small JSON-over-HTTP backlog.

The backlog (see `server.py` for a reference one) serves:

    GET  /items                  -> {"items": [...], "now": <unix time>}
    GET  /me                     -> {"account": the caller's account}
    POST /items/{id}/claim       {"holder", "lease", "trust"}   -> {"won": bool}
    POST /items/{id}/renew       {"holder", "lease"}            -> {"ok": bool}
    POST /items/{id}/release     {"holder"}                     -> {"ok": bool}
    POST /items/{id}/record      {"holder", "status", "reason"} -> {"ok": bool}

Each item: id, title, needs, labels, priority, status ("open"/"done"), parent, claim
({holder, since, expires, by} or null), failed (a reason or null) and failed_by. The backlog
makes a claim atomic (one lock around check-and-set), which is what makes this protocol safe
across pools. Whoever can write to the backlog can claim or fail an item, so the tracker
declares `TrustsMarkers`: a claim or failure counts only when its `by` is an account the pool
trusts (`markers`: its own, `GET /me`, and `--trust`); a claim sends those accounts as
`trust`, so the backlog treats anyone else's live claim as free. `HTTPBACKLOG_TOKEN`, when
set, is sent as the bearer token.
Claim times come from the backlog's clock (`now`), never this machine's. Everything else (scope,
re-offers, read-only, people win) is jr2's WorkSource layer: this module only asks and tells.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import Any

from pydantic import ConfigDict, Field

from jr2_core import Outcome, SourceError
from jr2_sources import (
    BlockerRef,
    Claim,
    Snapshot,
    SnapshotItem,
    SourceEnv,
    Tracker,
    TrustsMarkers,
)
from jr2_sources.kit.markers import TRUST_HELP, Ignored, MarkerTrust


class HttpBacklogConfig(Tracker.Options):
    """Options of `httpbacklog:URL` (`target`, `children_block` and `poll_every` come from
    `Tracker.Options`)."""

    model_config = ConfigDict(extra="forbid")

    label: list[str] = Field(default_factory=list, description="only items with all these labels")
    request_timeout: float = Field(default=10.0, gt=0, description="seconds per request")
    trust: list[str] = Field(default_factory=list, description=TRUST_HELP)


class HttpBacklogTracker(TrustsMarkers, Tracker):
    """A `jr2_sources.Tracker` over the HTTP backlog: the four required methods and one
    capability, `trust` (`jr2 plugins`). To add another, inherit its mixin before `Tracker`
    (e.g. `KeepsAttempts` once `settle` keeps the `Attempt`); docs/guides/write-a-source-plugin.md
    has the table."""

    def __init__(self, config: HttpBacklogConfig, env: SourceEnv) -> None:
        self.config = config
        self.base = config.target.rstrip("/")
        self.name = f"httpbacklog:{config.target}"
        self._token = os.environ.get("HTTPBACKLOG_TOKEN", "").strip()
        self.markers = MarkerTrust(self.name, lambda: [self._call("GET", "/me")["account"]],
                                   also=config.trust)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.config.request_timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise SourceError(f"{self.name}: {method} {path}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise SourceError(f"{self.name}: {method} {path}: {exc}") from None

    def _post(self, item_id: str, verb: str, **body: Any) -> Any:
        return self._call("POST", f"/items/{urllib.parse.quote(item_id, safe='')}/{verb}", body)

    def snapshot(self) -> Snapshot:
        data = self._call("GET", "/items")
        now, raw = float(data["now"]), data["items"]
        state = {i["id"]: i["status"] for i in raw}

        def ref(iid: str) -> BlockerRef:
            st = state.get(iid)
            return BlockerRef(iid, "missing" if st is None else "done" if st == "done" else "open")

        kids: dict[str, list[str]] = {}
        for i in raw:
            if i.get("parent"):
                kids.setdefault(i["parent"], []).append(i["id"])
        wanted = set(self.config.label)
        items: list[SnapshotItem] = []
        for i in raw:
            c, failed, ignored = i.get("claim"), i.get("failed"), []
            if c is not None and not self.markers.trusts(c.get("by")):
                ignored.append(Ignored("claim", str(c.get("by") or "?")))
                c = None  # a stranger's claim holds nothing
            if failed and not self.markers.trusts(i.get("failed_by")):
                ignored.append(Ignored("failed", str(i.get("failed_by") or "?")))
                failed = None
            live = c is not None and c["expires"] > now
            in_scope = wanted.issubset(i.get("labels", []))
            if i["status"] == "done" or not (in_scope or live or failed):
                continue  # outside the filter: listed only to show jr2's marks
            items.append(SnapshotItem(
                id=i["id"], title=i["title"], labels=list(i.get("labels", [])),
                priority=i.get("priority"), parent=i.get("parent"), in_scope=in_scope,
                blockers=[ref(n) for n in i.get("needs", [])],
                children=[ref(k) for k in kids.get(i["id"], [])], failed=failed,
                claim=Claim(c["holder"], datetime.fromtimestamp(c["since"], UTC),
                            datetime.fromtimestamp(c["expires"], UTC)) if live and c else None,
                ignored=tuple(ignored),
            ))
        done = sum(1 for s in state.values() if s == "done")
        return Snapshot(source=self.name, items=items, done_count=done)

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        trust = sorted(self.markers.accounts())
        return bool(self._post(item.id, "claim", holder=holder, lease=lease, trust=trust)["won"])

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        return bool(self._post(item_id, "renew", holder=holder, lease=lease)["ok"])

    def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
        if outcome.status == "cancelled":
            self._post(item_id, "release", holder=holder)
            return
        reason = outcome.failure.reason if outcome.failure is not None else None
        self._post(item_id, "record", holder=holder, status=outcome.status, reason=reason)
