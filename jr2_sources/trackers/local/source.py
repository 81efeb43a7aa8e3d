"""The local Work Source (`local:PATH`): a backlog file people write, claims in SQLite.

jr2 never rewrites the backlog file, so human edits are never lost. Claims, leases and outcomes
live in `<state>/local/<slug-hash of the backlog's absolute path>.sqlite`, never beside the
backlog. A dry run (`env.read_only`) opens that store read-only if it exists and otherwise
creates nothing. The parsed backlog is cached on the file's (mtime, size), so a poll that finds
nothing changed costs one `stat` and one SQL read.

Scope: `--label` selects items; an item outside it that carries a claim or an outcome in the
store is listed with `in_scope=False` (to show the mark in `jr2 ready`), and the WorkSource never
offers it. People win (`watch`): an item marked done or removed from the backlog while a worker
holds it is taken back, judged only from a backlog file whose last change is at least
`STABLE_AGE` old, so a half-saved file never stops a worker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ConfigDict, Field

from jr2_core import Outcome
from jr2_core.paths import safe_name
from jr2_sources.kit.durations import Duration
from jr2_sources.readyset import BlockerRef, Claim, Snapshot, SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.tracker import Tracker

from .backlog import Backlog, load_backlog
from .store import ClaimStore

STABLE_AGE = 0.2
"""Seconds since the backlog file last changed before `watch` trusts it (ISSUE-NOTES 12)."""


class LocalConfig(Tracker.Options):
    """Options of `local:PATH`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=1, description="the backlog file (TOML, or JSON)")
    label: list[str] = Field(default_factory=list,
                             description="only items with this label (repeat: all of them)")
    children_block: bool = Field(default=True,
                                 description="a parent waits until its children are done")
    poll_every: Duration = Field(default=0.5,
                                 description="how often a waiting pool looks for changes")


def _ts(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


class LocalAdapter(Tracker):
    """A `Tracker` over a backlog file and a SQLite claim store."""

    def __init__(self, config: LocalConfig, env: SourceEnv) -> None:
        self.config = config
        self.path = Path(config.target)
        self.name = f"local:{config.target}"
        self.store_path = env.state_dir / "local" / f"{safe_name(str(self.path.resolve()))}.sqlite"
        self.read_only = env.read_only
        self._store: ClaimStore | None = None
        self._cache: tuple[tuple[int, int], Backlog] | None = None
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------------------

    def backlog(self) -> Backlog:
        """The parsed backlog, re-read only when the file changed."""
        try:
            st = self.path.stat()
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            key = (-1, -1)
        with self._lock:
            if self._cache is None or self._cache[0] != key:
                self._cache = (key, load_backlog(self.path))
            return self._cache[1]

    def _open_store(self) -> ClaimStore | None:
        if self._store is None:
            if self.read_only:
                self._store = ClaimStore.open_readonly(self.store_path)
            else:
                self._store = ClaimStore(self.store_path)
        return self._store

    def _writable(self) -> ClaimStore:
        if self.read_only:
            raise RuntimeError("a read-only local source cannot write")
        store = self._open_store()
        assert store is not None
        return store

    def snapshot(self) -> Snapshot:
        backlog = self.backlog()
        store = self._open_store()
        state = store.state() if store is not None else None
        claims = state.claims if state else {}
        outcomes = state.outcomes if state else {}

        done_ids = {it.id for it in backlog.items if it.status == "done"}
        done_ids.update(i for i, o in outcomes.items() if o.status == "done")
        done = done_ids.__contains__
        by_id = backlog.by_id()
        kids = backlog.children()
        wanted = set(self.config.label)
        items: list[SnapshotItem] = []
        done_count = 0
        for it in backlog.items:
            if done(it.id):
                if not wanted or wanted.issubset(it.labels):  # done, and in this scope
                    done_count += 1
                continue
            claim = claims.get(it.id)
            out = outcomes.get(it.id)
            in_scope = not wanted or wanted.issubset(it.labels)
            if not in_scope and claim is None and out is None:
                continue
            blockers = [
                BlockerRef(n, "missing" if n not in by_id else "done" if done(n) else "open")
                for n in it.needs
            ]
            children = [BlockerRef(c, "done" if done(c) else "open") for c in kids.get(it.id, ())]
            extra = {"body": it.body} if it.body else {}
            items.append(SnapshotItem(
                id=it.id, title=it.title, labels=list(it.labels), priority=it.priority,
                created=it.created, parent=it.parent, children=children, blockers=blockers,
                failed=(out.reason or "failed") if out is not None and out.status == "failed"
                else None,
                claim=Claim(claim.holder, _ts(claim.since), _ts(claim.lease_expires))
                if claim is not None else None,
                branch=it.branch, extra=extra, in_scope=in_scope,
            ))
        return Snapshot(source=self.name, items=items, done_count=done_count)

    # -- claims --------------------------------------------------------------------------------

    def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
        return self._writable().claim(item.id, holder, lease)

    def renew(self, item_id: str, holder: str, lease: float) -> bool:
        return self._writable().renew(item_id, holder, lease)

    def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
        if outcome.status == "cancelled":
            self._writable().release(item_id, holder)
            return
        reason = outcome.failure.reason if outcome.failure is not None else None
        self._writable().settle(item_id, holder, outcome.status, reason)

    def watch(self, item_ids: Sequence[str], holder: str) -> dict[str, str]:
        """People win, from a backlog file that has been still for `STABLE_AGE` (raises
        otherwise: the WorkSource looks again later)."""
        try:
            age = time.time() - self.path.stat().st_mtime
        except OSError:
            age = STABLE_AGE  # gone: a deleted backlog is a decision too, once it stays gone
        if age < STABLE_AGE:
            raise BlockingIOError(f"{self.path} changed {age:.2f}s ago; looking again later")
        return super().watch(item_ids, holder)

    def retry(self, item_id: str) -> bool:
        """Clear a failed outcome so the item is offered again (`jr2 local retry`)."""
        if item_id not in self.backlog().by_id():
            from jr2_core.errors import UsageError

            raise UsageError(f"{self.config.target}: no item {item_id!r}")
        return self._writable().clear(item_id)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
