"""The conformance kit: the promises every tracker keeps, as tests a plugin runs on itself.

A plugin subclasses `SourceConformance` in its tests (as `Test...`) and implements
`make_target`: seed its tracker (or a fake) with the reference backlog and return a `Target`
(the tracker, the tracker ids of the reference keys, a counter of writes). The kit checks,
against the tracker alone, the `test_conformance_*` promises: the reference Ready-set, exclusive
claims (sequential and concurrent), no write from a dry run, settle outcomes, leases that expire
and are taken over, `watch`, `ReadOnly`, and for a `TrustsMarkers` tracker that a stranger's
markers (`Target.stranger`) change nothing and show as ignored. Leases are short real ones
(`lease` seconds, default 1.0): the kit sleeps past them.
"""

from __future__ import annotations

import json
import threading
import time
import unittest
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from jr2_core import Failure, Outcome
from jr2_sources.capabilities.approvals.mixin import KeepsApprovals
from jr2_sources.capabilities.approvals.policy import ApprovalRequest
from jr2_sources.capabilities.limits.comment_locks import LockedClaims
from jr2_sources.capabilities.limits.mixin import LocksByComment
from jr2_sources.capabilities.trust import TrustsMarkers
from jr2_sources.readyset import ReadySet, compute_ready_set
from jr2_sources.tracker import ReadOnly, ReadOnlyError, Tracker, as_tracker

from .publicapi import PUBLIC_MODULES as PUBLIC_MODULES
from .publicapi import private_imports as private_imports

MISSING = "MISSING"
"""The key a reference item needs that is never seeded: `Target.ids` maps it to an id that
does not exist in the tracker (`{..., MISSING: "o/r#999"}`)."""


@dataclass(frozen=True)
class RefItem:
    """An item of the reference backlog, by tracker-neutral key: its `title`, the keys it
    `needs` (blockers), its `parent`'s key, and whether it is `done` already."""

    key: str
    title: str
    needs: tuple[str, ...] = ()
    parent: str | None = None
    done: bool = False


REFERENCE: tuple[RefItem, ...] = (
    RefItem("A", "Ready, nothing blocks it."),
    RefItem("B", "Ready too."),
    RefItem("C", "Needs A and B.", needs=("A", "B")),
    RefItem("D", "Needs a blocker that does not exist.", needs=(MISSING,)),
    RefItem("E", "Needs F (done), so ready.", needs=("F",)),
    RefItem("F", "Already done.", done=True),
    RefItem("P", "A parent with an open child."),
    RefItem("K", "The open child of P.", parent="P"),
    RefItem("X", "In a cycle with Y.", needs=("Y",)),
    RefItem("Y", "In a cycle with X.", needs=("X",)),
)
"""The reference backlog. `MISSING` is never seeded: map it to an id that does not exist."""


@dataclass(frozen=True)
class Forged:
    """A jr2 marker as someone else writes it: its `kind` (`claim`, `failed`, `gate`, `answer`,
    `lock`) and `fields`; `body` is the comment text jr2 writes for it."""

    kind: str
    fields: dict[str, Any]

    @property
    def body(self) -> str:
        return f"<!-- jr2:{self.kind} {json.dumps(self.fields, sort_keys=True)} -->\njr2: forged"


class Stranger(Protocol):
    """How an account the pool does not trust writes on the tracker, for the kit's trust check.
    `account` is that account as the tracker names comment authors (`Ignored.author`)."""

    account: str

    def post(self, item_id: str, marker: Forged) -> None:
        """Write `marker` on the item's thread as that account, in the tracker's own form (a
        comment with `marker.body`; Jira Cloud: the comment property). For a `claim` or
        `failed` marker, also give the item jr2's claim label where the tracker reads a thread
        only for items it marked (anyone with triage rights can)."""
        ...


@dataclass
class Target:
    """What a plugin hands the kit: `tracker`; `ids` maps each reference key (and `MISSING`) to
    the tracker's id; `writes()` counts write requests made to the tracker so far; `stranger`
    writes markers as an untrusted account (required when the tracker declares
    `TrustsMarkers`)."""

    tracker: Any
    ids: dict[str, str]
    writes: Callable[[], int]
    close: Callable[[], None] = field(default=lambda: None)
    stranger: Stranger | None = None


def _ready_set(tracker: Any) -> ReadySet:
    return compute_ready_set(tracker.snapshot(), now=datetime.now(UTC))


def _watch(tracker: Tracker, ids: list[str], holder: str = "p@h") -> dict[str, str]:
    """`watch`, asked again while the tracker says it cannot tell yet (raises), for up to 5 s."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            return tracker.watch(ids, holder)
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class SourceConformance:
    """Subclass as `TestMySourceConformance` and implement `make_target`."""

    lease: float = 1.0
    supports_cycles: bool = True
    supports_children: bool = True

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        """Seed the tracker with `items` and return a Target. With `read_only`, return an
        tracker over the SAME tracker state (`state` is the `Target` your first call returned),
        built the way a dry-run report builds it."""
        raise NotImplementedError

    def _items(self) -> tuple[RefItem, ...]:
        return tuple(
            i for i in REFERENCE
            if (self.supports_cycles or i.key not in ("X", "Y"))
            and (self.supports_children or i.key not in ("P", "K"))
        )

    # -- the promises -----------------------------------------------------------------------

    def test_conformance_ready_set_of_the_reference_backlog(self) -> None:
        t = self.make_target(self._items())
        ids = t.ids
        rs = _ready_set(t.tracker)
        ready = {e.item.id for e in rs.ready}
        expect_ready = {ids["A"], ids["B"], ids["E"]} | (
            {ids["K"]} if self.supports_children else set())
        assert ready == expect_ready, f"ready: {sorted(ready)} != {sorted(expect_ready)}"
        blocked = {e.item.id: {(r.kind, r.ref) for r in e.reasons} for e in rs.blocked}
        assert ("open_blocker", ids["A"]) in blocked[ids["C"]]
        assert ("open_blocker", ids["B"]) in blocked[ids["C"]]
        assert any(k == "missing_blocker" for k, _ in blocked[ids["D"]])
        if self.supports_children:
            assert any(k == "open_children" for k, _ in blocked[ids["P"]])
        if self.supports_cycles:
            assert [sorted(c) for c in rs.cycles] == [sorted([ids["X"], ids["Y"]])]
            assert any(k == "cycle" for k, _ in blocked[ids["X"]])
        assert ids["F"] not in ready | set(blocked)
        t.close()

    def test_conformance_claims_are_exclusive_for_sequential_claimers(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.tracker).ready if e.item.id == t.ids["A"])
        assert t.tracker.claim(item, "pool-1@h", self.lease * 30) is True
        assert t.tracker.claim(item, "pool-2@h", self.lease * 30) is False
        rs = _ready_set(t.tracker)
        claimed = {e.item.id: e.claim.holder for e in rs.claimed}
        assert t.ids["A"] in claimed
        t.close()

    def test_conformance_claims_are_exclusive_for_concurrent_claimers(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.tracker).ready if e.item.id == t.ids["B"])
        wins: list[str] = []
        barrier = threading.Barrier(6)

        def contend(n: int) -> None:
            barrier.wait()
            if t.tracker.claim(item, f"pool-{n}@h", self.lease * 30):
                wins.append(f"pool-{n}@h")

        threads = [threading.Thread(target=contend, args=(n,)) for n in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(wins) == 1, f"winners: {wins}"
        t.close()

    def test_conformance_a_dry_run_writes_nothing(self) -> None:
        t = self.make_target(self._items())
        before = t.writes()
        ro = self.make_target(self._items(), read_only=True, state=t)
        rs = _ready_set(ro.tracker)
        assert rs.ready
        assert t.writes() == before, "a read-only snapshot wrote to the tracker"
        ro.close()
        t.close()

    def test_conformance_record_done_unblocks_and_failed_marks(self) -> None:
        t = self.make_target(self._items())
        ids = t.ids
        rs = _ready_set(t.tracker)
        a = next(e.item for e in rs.ready if e.item.id == ids["A"])
        b = next(e.item for e in rs.ready if e.item.id == ids["B"])
        tr = as_tracker(t.tracker)
        assert tr.claim(a, "p@h", self.lease * 30)
        tr.settle(ids["A"], "p@h", Outcome("done", output="ok"))
        assert tr.claim(b, "p@h", self.lease * 30)
        tr.settle(ids["B"], "p@h", Outcome("failed", failure=Failure("it broke")))
        rs = _ready_set(t.tracker)
        listed = ({e.item.id for e in rs.ready} | {e.item.id for e in rs.blocked}
                  | {e.item.id for e in rs.claimed})
        assert ids["A"] not in listed, "a done item is still listed"
        blocked = {e.item.id: e.reasons for e in rs.blocked}
        assert any(r.kind == "failed" for r in blocked[ids["B"]]), "B is not marked failed"
        c = blocked[ids["C"]]
        assert {r.ref for r in c if r.kind == "open_blocker"} == {ids["B"]}
        t.close()

    def test_conformance_a_lease_expires_and_is_taken_over(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.tracker).ready if e.item.id == t.ids["E"])
        assert t.tracker.claim(item, "dead@h", self.lease)
        assert t.tracker.claim(item, "alive@h", self.lease) is False
        time.sleep(self.lease * 1.5 + 0.2)
        rs = _ready_set(t.tracker)
        assert t.ids["E"] in {e.item.id for e in rs.ready}, "an expired claim still holds"
        assert t.tracker.claim(item, "alive@h", self.lease * 30) is True
        assert t.tracker.renew(t.ids["E"], "dead@h", self.lease) is False
        t.close()

    def test_conformance_release_makes_an_item_ready_again(self) -> None:
        t = self.make_target(self._items())
        item = next(e.item for e in _ready_set(t.tracker).ready if e.item.id == t.ids["A"])
        tr = as_tracker(t.tracker)
        assert tr.claim(item, "p@h", self.lease * 30)
        tr.settle(t.ids["A"], "p@h", Outcome("cancelled"))
        rs = _ready_set(t.tracker)
        assert t.ids["A"] in {e.item.id for e in rs.ready}, "a released item is not ready"
        t.close()

    def test_conformance_watch_names_only_items_no_longer_held(self) -> None:
        t = self.make_target(self._items())
        tr = as_tracker(t.tracker)
        rs = _ready_set(t.tracker)
        a = next(e.item for e in rs.ready if e.item.id == t.ids["A"])
        assert tr.claim(a, "p@h", self.lease * 30)
        assert _watch(tr, [t.ids["A"]]) == {}, "watch stopped an item its holder holds"
        tr.settle(t.ids["A"], "p@h", Outcome("done", output="ok"))
        assert t.ids["A"] in _watch(tr, [t.ids["A"]]), "watch missed a settled item"
        t.close()

    def test_conformance_read_only_refuses_every_write_before_the_tracker(self) -> None:
        t = self.make_target(self._items())
        before = t.writes()
        ro = ReadOnly(self.make_target(self._items(), read_only=True, state=t).tracker)
        item = next(e.item for e in _ready_set(ro).ready if e.item.id == t.ids["A"])
        calls: list[Callable[[], object]] = [
            lambda: ro.claim(item, "p@h", 30.0), lambda: ro.renew(item.id, "p@h", 30.0),
            lambda: ro.settle(item.id, "p@h", Outcome("done"))]
        for call in calls:
            try:
                call()
            except ReadOnlyError:
                pass
            else:
                raise AssertionError("a read-only tracker accepted a write")
        assert t.writes() == before, "a read-only tracker wrote"
        t.close()

    def test_conformance_a_strangers_markers_change_nothing(self) -> None:
        t = self.make_target(self._items())
        tracker, ids, stranger = t.tracker, t.ids, t.stranger
        if not isinstance(tracker, TrustsMarkers):
            t.close()
            raise unittest.SkipTest(f"{type(tracker).__name__} does not declare TrustsMarkers: "
                                    "its state has no authors, so there is no marker to forge")
        assert stranger is not None, "a TrustsMarkers tracker's Target must give `stranger`"
        who = stranger.account.lower()
        far = "2099-01-01T00:00:00+00:00"
        stranger.post(ids["A"], Forged("claim", {"holder": "evil@x", "lease": 86400,
                                                 "nonce": "kit-n1"}))
        stranger.post(ids["B"], Forged("failed", {"holder": "evil@x", "nonce": "kit-n2",
                                                  "reason": "exit 75", "attempt": 1,
                                                  "retry_after": far}))
        rs = _ready_set(tracker)
        ready = {e.item.id: e.item for e in rs.ready}
        for key, kind in (("A", "claim"), ("B", "failed")):
            assert ids[key] in ready, f"a stranger's {kind} marker took {ids[key]} off ready"
            it = ready[ids[key]]
            assert it.claim is None and it.retry_after is None and it.attempts == 0, it
            shown = {(ig.marker, ig.author.lower()) for ig in it.ignored}
            assert (kind, who) in shown, f"{ids[key]}: the {kind} marker is not shown: {shown}"
        tr = as_tracker(tracker)
        assert tr.claim(ready[ids["A"]], "pool@h", self.lease * 30), "the forged claim held A"
        if isinstance(tracker, KeepsApprovals):
            e = ready[ids["E"]]
            assert tr.claim(e, "pool@h", self.lease * 30)
            tracker.park(ids["E"], "pool@h", ApprovalRequest("deploy"))
            stranger.post(ids["E"], Forged("answer", {"gate": "deploy", "status": "approved",
                                                      "reason": None, "by": stranger.account}))
            entry = next(x for x in _ready_set(tracker).blocked if x.item.id == ids["E"])
            assert [(g.name, g.status) for g in entry.item.gates] == [("deploy", "awaiting")]
            assert ("answer", who) in {(ig.marker, ig.author.lower()) for ig in entry.item.ignored}
        if isinstance(tracker, LocksByComment):
            control = ids["D"]
            for n, key in enumerate(("C", "D")):
                stranger.post(control, Forged("lock", {
                    "item": ids[key], "holder": "evil@x", "groups": [], "lease": 86400,
                    "nonce": f"kit-l{n}"}))
            locked = LockedClaims(tr, control)
            locked.global_cap = 2
            b = next(x.item for x in _ready_set(tracker).ready if x.item.id == ids["B"])
            assert locked.claim(b, "pool@h", self.lease * 30), "a stranger's locks filled the cap"
            assert ("lock", who) in {(ig.marker, ig.author.lower())
                                     for ig in tracker.ignored_markers(control)}
        t.close()
