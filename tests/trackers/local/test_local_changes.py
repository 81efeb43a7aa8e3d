"""The local source's deltas (trackers/local/changes.py): what a running pool reads per claim.

The promise: a pool reading `changes()` into an incremental Ready-set sees exactly what a full
snapshot shows, whoever wrote (this pool, another pool's connection, a person editing the
file), while a claim costs only the rows it touched.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jr2_core import Outcome
from jr2_core.failure import Failure
from jr2_sources.capabilities.deltas.incremental import Delta, IncrementalReadySet
from jr2_sources.readyset import Snapshot, SnapshotItem, compute_ready_set
from jr2_sources.registry import SourceEnv
from jr2_sources.trackers.local import saving
from jr2_sources.trackers.local.source import LocalConfig, LocalTracker
from jr2_sources.trackers.local.store import ClaimStore


def _backlog(path: Path, n: int, *, chain: bool = True, extra: str = "") -> None:
    lines = []
    for i in range(n):
        lines.append(f'[[items]]\nid = "T{i}"\ntitle = "item {i}"\n')
        if chain and i % 3:
            lines.append(f'needs = ["T{i - 1}"]\n')
        if i % 2:
            lines.append('labels = ["a"]\n')
    path.write_text("".join(lines) + extra)


def _adapter(tmp: Path, label: list[str] | None = None) -> LocalTracker:
    cfg = LocalConfig(target=str(tmp / "backlog.toml"), label=label or [])
    return LocalTracker(cfg, SourceEnv(tmp / "state"))


def test_a_claim_is_read_back_as_a_one_item_delta(tmp_path: Path) -> None:
    _backlog(tmp_path / "backlog.toml", 9)
    ad = _adapter(tmp_path)
    first = ad.changes()
    assert isinstance(first, Snapshot)
    assert ad.changes() == Delta(done_count=0)  # nothing changed: nothing to read
    item = next(it for it in first.items if it.id == "T0")
    assert ad.claim(item, "me", 60)
    delta = ad.changes()
    assert isinstance(delta, Delta)
    assert [it.id for it in delta.items] == ["T0"] and not delta.left
    assert delta.items[0].claim is not None and delta.items[0].claim.holder == "me"
    ad.settle("T0", "me", Outcome("done"))
    delta = ad.changes()
    assert isinstance(delta, Delta)
    assert delta.items == [] and delta.left == {"T0": "done"} and delta.done_count == 1
    ad.close()


def test_another_pools_write_is_seen_through_the_data_version(tmp_path: Path) -> None:
    _backlog(tmp_path / "backlog.toml", 9)
    ad = _adapter(tmp_path)
    ad.changes()
    with ClaimStore(ad.store_path) as other:  # another process's connection
        assert other.claim("T3", "them", 60)
    delta = ad.changes()
    assert isinstance(delta, Delta)
    assert [it.id for it in delta.items] == ["T3"]
    ad.close()


def test_an_edited_backlog_gives_a_full_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "backlog.toml"
    _backlog(path, 9)
    ad = _adapter(tmp_path)
    ad.changes()
    _backlog(path, 9, extra='[[items]]\nid = "NEW"\ntitle = "new"\n')
    got = ad.changes()
    assert isinstance(got, Snapshot) and "NEW" in {it.id for it in got.items}
    ad.close()


def test_a_same_size_rewrite_in_the_same_second_is_still_seen(tmp_path: Path) -> None:
    """An editor that saves by rename gives a new inode even when mtime and size match."""
    path = tmp_path / "backlog.toml"
    _backlog(path, 3)
    ad = _adapter(tmp_path)
    ad.changes()
    st = path.stat()
    tmp = tmp_path / "backlog.new"
    tmp.write_text(path.read_text().replace('"item 1"', '"ITEM 1"'))
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    got = ad.changes()
    assert isinstance(got, Snapshot)
    assert any(it.title == "ITEM 1" for it in got.items)
    ad.close()


_ops = st.lists(st.one_of(
    st.tuples(st.just("claim"), st.integers(0, 11)),
    st.tuples(st.just("done"), st.integers(0, 11)),
    st.tuples(st.just("fail"), st.integers(0, 11)),
    st.tuples(st.just("release"), st.integers(0, 11)),
    st.tuples(st.just("other"), st.integers(0, 11)),
    st.tuples(st.just("retry"), st.integers(0, 11)),
    st.tuples(st.just("edit"), st.integers(0, 11)),
), max_size=20)


def _settled(path: Path) -> None:
    """Date the file's last change a second back (to a time no other edit had, so every edit
    keeps its own file key): the source reads it at once instead of waiting `STABLE_AGE`."""
    then = time.time_ns() - 1_000_000_000
    os.utime(path, ns=(then, then))


class _Jumps:
    """The save guard's clock (`saving.py`'s `monotonic` and `sleep`), on which a wait passes at
    once: an edit that shortens the file is confirmed without a real second's wait each."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops, label=st.sampled_from([[], ["a"]]))
def test_deltas_agree_with_a_full_snapshot(tmp_path_factory: Any, ops: list[tuple[str, int]],
                                           label: list[str]) -> None:
    clock = _Jumps()
    with (mock.patch.object(saving, "monotonic", clock.monotonic),
          mock.patch.object(saving, "sleep", clock.sleep)):
        _deltas_agree(tmp_path_factory.mktemp("changes"), ops, label)


def _deltas_agree(tmp: Path, ops: list[tuple[str, int]], label: list[str]) -> None:
    path = tmp / "backlog.toml"
    _backlog(path, 12)
    _settled(path)
    ad = _adapter(tmp, label)
    other = ClaimStore(ad.store_path)
    first = ad.changes()
    assert isinstance(first, Snapshot)
    inc = IncrementalReadySet(first, now=_now())
    edits = 0
    for op, i in ops:
        iid = f"T{i}"
        it = SnapshotItem(iid)
        if op == "claim":
            ad.claim(it, "me", 60)
        elif op == "done":
            ad.settle(iid, "me", Outcome("done"))
        elif op == "fail":
            ad.settle(iid, "me", Outcome("failed", failure=Failure("boom")))
        elif op == "release":
            ad.settle(iid, "me", Outcome("cancelled"))
        elif op == "other":
            other.claim(iid, "them", 60)
            other.settle(iid, "them", "done")
        elif op == "retry":
            other.clear(iid, include_done=True)
        else:
            edits += 1
            _backlog(path, 12, chain=bool(i % 2), extra=f"# edit {edits}\n")
            _settled(path)
        got = ad.changes()
        now = _now()
        if isinstance(got, Snapshot):
            inc.reset(got, now=now)
        else:
            inc.apply(got, now=now)
        ref = compute_ready_set(ad.snapshot(), now=now)
        assert inc.ready_set().to_json_obj() | {"generated_at": 0} == \
            ref.to_json_obj() | {"generated_at": 0}
    other.close()
    ad.close()


def _now() -> datetime:
    return datetime.now(UTC)


def test_watching_held_items_reads_only_them(tmp_path: Path, monkeypatch: Any) -> None:
    """People win is checked before every settle: the watch must cost what the held items
    number, not the backlog's size (a full snapshot there made a 100,000-item drain take 2 s
    a claim). Its answer is still the default's, from a full snapshot."""
    import time

    from jr2_sources.tracker import CLAIM_REMOVED, GONE, Tracker
    from jr2_sources.trackers.local.backlog import Backlog
    from jr2_sources.trackers.local.items import ItemView

    path = tmp_path / "backlog.toml"
    _backlog(path, 3000)
    still = time.time() - 10  # a backlog nobody is saving (watching waits for stillness)
    os.utime(path, (still, still))
    ad = _adapter(tmp_path)
    by_id = {it.id: it for it in ad.changes().items}  # type: ignore[union-attr]
    for iid in ("T0", "T1", "T2"):
        assert ad.claim(by_id[iid], "me", 60)
    with ClaimStore(ad.store_path) as person:
        assert person.release("T1", "me")  # a person removed jr2's claim
        assert person.settle("T2", "me", "failed", "by hand")
    held = ["T0", "T1", "T2", "T-gone"]
    expected = Tracker.watch(ad, held, "me")  # the default: one full snapshot
    assert expected == {"T1": CLAIM_REMOVED, "T2": "it was marked failed", "T-gone": GONE}
    calls = {"by_id": 0, "item": 0}
    real_by_id, real_item = Backlog.by_id, ItemView.item

    def by_id_counted(self: Backlog) -> Any:
        calls["by_id"] += 1
        return real_by_id(self)

    def item_counted(self: ItemView, iid: str) -> Any:
        calls["item"] += 1
        return real_item(self, iid)

    monkeypatch.setattr(Backlog, "by_id", by_id_counted)
    monkeypatch.setattr(ItemView, "item", item_counted)
    assert ad.watch(held, "me") == expected
    assert calls == {"by_id": 0, "item": len(held)}
    ad.close()
