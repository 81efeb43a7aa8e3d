"""A backlog saved non-atomically (trackers/local/saving.py): the mtime alone never proves that a
file is still.

The editor here truncates the file in place and writes part of it, then puts the mtime back
where it was (`os.utime(ns=...)`): what a pool saw on ext4, where an emptied file kept the mtime
of the write before it. The rest of the save lands while the source waits to confirm the
reading (`saving.sleep` and `saving.monotonic` are a clock the editor moves), so each test is
deterministic and quick: before the rule, every one of them read the cut file as the backlog.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.cli.compose import work
from jr2_sources.readyset import Snapshot, SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.tracker import GONE
from jr2_sources.trackers.local import saving
from jr2_sources.trackers.local.config import LocalConfig
from jr2_sources.trackers.local.source import CONFIRM_AGE, WATCH_AGE, LocalTracker

ENTRIES = [f'[[items]]\nid = "I-{i:02}"\ntitle = "item {i}"\n' for i in range(30)]
FULL = "".join(ENTRIES)


def _still(path: Path, text: str) -> int:
    """Write `text`, dated 10 s ago (a file nobody is saving); its mtime_ns."""
    path.write_text(text)
    old = time.time() - 10
    os.utime(path, (old, old))
    return path.stat().st_mtime_ns


def _cut(path: Path, text: str, mtime_ns: int) -> None:
    """Half a save: truncate in place, write `text`, and leave the mtime where it was."""
    ino = path.stat().st_ino
    with open(path, "w") as fh:
        fh.write(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))
    assert path.stat().st_ino == ino


def _adapter(tmp: Path) -> LocalTracker:
    return LocalTracker(LocalConfig(target=str(tmp / "b.toml")), SourceEnv(tmp / "state"))


def _ids(got: Snapshot | Delta) -> set[str]:
    assert isinstance(got, Snapshot)
    return {it.id for it in got.items}


class Editor:
    """The source's clock (`saving.monotonic`, `saving.sleep`), made deterministic: a wait
    moves the clock on at once and lets the editor take its next step, if any."""

    def __init__(self, path: Path, steps: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.path, self.steps = path, steps
        self.now = 1000.0
        self.waits: list[float] = []
        monkeypatch.setattr(saving, "monotonic", lambda: self.now)
        monkeypatch.setattr(saving, "sleep", self.sleep)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        if self.steps:  # the rest of the save, the mtime unmoved again
            _cut(self.path, self.steps.pop(0), self.path.stat().st_mtime_ns)


def test_a_truncation_that_keeps_the_mtime_is_not_read_as_the_backlog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.toml"
    mtime = _still(path, FULL)
    ad = _adapter(tmp_path)
    assert len(_ids(ad.changes())) == 30
    _cut(path, "".join(ENTRIES[:3]), mtime)  # 3 items for a moment, the mtime unmoved
    editor = Editor(path, [FULL], monkeypatch)
    got = ad.changes()
    assert got == Delta(done_count=0) or len(_ids(got)) == 30  # never the 3-item reading
    assert len(_ids(ad.snapshot())) == 30
    assert editor.waits and 0 < editor.waits[0] <= CONFIRM_AGE  # it waited by its own clock
    ad.close()


def test_a_backlog_a_person_really_cut_is_read_once_it_stayed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of the rule: a person who deletes items (or empties the file) is
    believed once the file stayed so for `CONFIRM_AGE` by the pool's own clock."""
    path = tmp_path / "b.toml"
    mtime = _still(path, FULL)
    ad = _adapter(tmp_path)
    ad.changes()
    clock = Editor(path, [], monkeypatch)
    for text in ("".join(ENTRIES[:3]), ""):
        _cut(path, text, mtime)
        t0 = clock.now
        got = ad.changes()
        assert clock.now - t0 >= CONFIRM_AGE
        assert _ids(got) == {f"I-{i:02}" for i in range(3 if text else 0)}
    t0 = clock.now
    assert isinstance(ad.changes(), Delta)  # confirmed once: no more waiting
    assert clock.now == t0
    ad.close()


def test_a_rewrite_that_keeps_the_key_while_it_is_confirmed_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same mtime, same size, same inode, other bytes during the wait: the digest tells."""
    path = tmp_path / "b.toml"
    mtime = _still(path, FULL)
    ad = _adapter(tmp_path)
    ad.changes()
    first = "".join(ENTRIES[:3])
    other = first.replace('"I-02"', '"X-02"')  # the same length
    assert len(other) == len(first)
    _cut(path, first, mtime)
    editor = Editor(path, [other], monkeypatch)  # the key stays: only the bytes tell
    got = ad.changes()
    assert _ids(got) == {"I-00", "I-01", "X-02"}
    assert editor.now - 1000.0 >= 2 * CONFIRM_AGE  # `other` was confirmed from scratch
    ad.close()


def test_people_win_never_takes_an_item_back_from_half_a_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.toml"
    mtime = _still(path, FULL)
    ad = _adapter(tmp_path)
    ad.changes()
    assert ad.claim(SnapshotItem("I-20"), "me", 60)
    _cut(path, "".join(ENTRIES[:3]), mtime)  # I-20 missing for a moment
    Editor(path, [FULL], monkeypatch)
    assert ad.watch(["I-20"], "me") == {}
    ad.close()


def test_people_win_takes_an_item_a_person_deleted_back_once_the_loss_is_old(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.toml"
    mtime = _still(path, FULL)
    ad = _adapter(tmp_path)
    ad.changes()
    assert ad.claim(SnapshotItem("I-20"), "me", 60)
    _cut(path, "".join(ENTRIES[:3]), mtime)  # a person deleted I-3 .. I-29 (the mtime is old)
    clock = Editor(path, [], monkeypatch)
    assert ad.watch(["I-20"], "me") == {"I-20": GONE}
    assert clock.now - 1000.0 >= WATCH_AGE  # not from a reading younger than people win trusts
    ad.close()


def test_a_pool_does_not_end_drained_from_half_a_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first item's command cuts the backlog to that item alone, the mtime unmoved (an
    editor's truncation); the save completes while the pool confirms what it read. Before the
    rule, the pool read one done item and ended `drained` after running one of 30."""
    path, ran = tmp_path / "b.toml", tmp_path / "ran"
    mtime = _still(path, FULL)
    cut = tmp_path / "cut.py"
    cut.write_text("import os, sys\n"
                   f"p = {str(path)!r}\n"
                   "with open(p, 'w') as fh:\n"
                   f"    fh.write({ENTRIES[0]!r})\n"
                   f"os.utime(p, ns=({mtime}, {mtime}))\n")
    script = (f'echo "$JR2_ITEM_ID" >> {ran}; '
              f'if [ "$JR2_ITEM_ID" = I-00 ]; then {sys.executable} {cut}; fi')
    editor = Editor(path, [FULL], monkeypatch)
    result = work(f"local:{path}", ["sh", "-c", script], options=["--poll-every", "0.05"],
                  state=tmp_path / ".jr2", cap=1, timeout=60)
    assert result.exit_code == 0
    done = ran.read_text().split()
    assert sorted(done) == [f"I-{i:02}" for i in range(30)]  # all of them, each once
    assert result.tally.done_ids == set(done)
    assert editor.waits  # the pool did read the cut file, and waited to confirm it


def test_a_pool_started_on_an_emptied_backlog_waits_for_the_rest_of_the_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first reading has nothing to compare with; the emptied file (a truncation's size
    lands before its time stamp) is the half of a save that looks old. Before, the pool ended
    `drained` at once, having run nothing."""
    path, ran = tmp_path / "b.toml", tmp_path / "ran"
    mtime = _still(path, FULL)
    _cut(path, "", mtime)
    editor = Editor(path, [FULL], monkeypatch)
    result = work(f"local:{path}", ["sh", "-c", f'echo "$JR2_ITEM_ID" >> {ran}'],
                  state=tmp_path / ".jr2", cap=4, timeout=60)
    assert result.exit_code == 0
    assert sorted(ran.read_text().split()) == [f"I-{i:02}" for i in range(30)]
    assert editor.waits


def test_an_empty_backlog_is_drained_once_it_stayed_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.toml"
    _still(path, "")
    clock = Editor(path, [], monkeypatch)
    result = work(f"local:{path}", ["true"], state=tmp_path / ".jr2", timeout=60)
    assert result.exit_code == 0 and not result.tally.done_ids
    assert clock.now - 1000.0 >= CONFIRM_AGE


def test_items_that_left_the_backlog_are_named_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A run whose backlog lost items (a person cut them) says which left, one line."""
    path = tmp_path / "b.toml"
    mtime = _still(path, "".join(ENTRIES[:3]))
    ad = _adapter(tmp_path)
    ad.changes()
    Editor(path, [], monkeypatch)
    _cut(path, ENTRIES[0], mtime)
    with caplog.at_level("WARNING", logger="jr2"):
        assert _ids(ad.changes()) == {"I-00"}
        ad.changes()
    said = [r.getMessage() for r in caplog.records if "left the backlog" in r.getMessage()]
    assert said == [f"local:{path}: 2 items left the backlog (no longer in the file): "
                    "I-01, I-02"]
    ad.close()
