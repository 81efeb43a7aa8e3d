"""A backlog being saved: when a reading of the file that lost something may be trusted.

Design notes
------------
Editors and scripts do not always save atomically: `open(path, "w")` empties the file, the new
text arrives in pieces, and for a moment the file is empty or cut short, which is still valid
TOML. The local source (`LocalAdapter.backlog`) reads a changed file only once its modification
time is `STABLE_AGE` old and throws a reading away when the file's key (mtime, size, inode)
moved while it was read. That catches an ordinary save, but the mtime alone never proves that
a file is still: on this ext4 a pool saw an emptied file keep the mtime of the write before
it (`(same mtime_ns, size 0, same inode)`, 0.38 s after that write: the truncation's time stamp
landed late, or in the same tick of the kernel's coarse clock), so half a save looked old and
still, and the pool ended `drained` with work left.

The rule (`SaveGuard`): a reading that LOST something since the last good reading (an item id
that reading had is missing, or the file is shorter) is suspect. It is trusted only once this
process has seen the same file, the same key and the same bytes (a BLAKE2 digest), in readings
at least `age` apart by its own monotonic clock, never by the file's mtime (`age` is the
source's `CONFIRM_AGE`, 1 s: 0.2 s let a save stalled on a loaded machine through). Until then
the source keeps waiting, so nothing downstream (the Ready-set, a pool's `drained` or
`deadlocked`, people win, the dashboard) ever sees a suspect reading. A reading that only added
(items, bytes) needs no confirmation: acting on it early loses nothing, and a later reading
that takes it back is suspect in its turn.

Cost: nothing while the file is unchanged; for a changed file, one pass over the two readings'
ids, next to parsing it. A suspect reading waits, looking at the file's key every `STEP` (a
stat, not a read), and stops as soon as the key moves: half a save holds a pool up for about as
long as the save lasts, then the file is read again. Only a loss that stays costs the whole
`age` and one more read of the bytes: a person deleting items (or emptying the file) sees the
pool act on it `age` later. The caller (`LocalAdapter.backlog`, on the pool's loop like every
local read) tries a few times, then keeps the last good backlog; a reading seen before counts
from its first sighting, so a later look confirms it without waiting again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from time import monotonic, sleep
from typing import TYPE_CHECKING

from .backlog import BacklogError, read_bytes
from .changes import FileKey, file_key

if TYPE_CHECKING:
    from .backlog import Backlog


def digest(data: bytes) -> bytes:
    """A fingerprint of the file's bytes (BLAKE2b, 16 bytes: compared, never trusted alone)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def lost(good_key: FileKey, good: Backlog, key: FileKey, new: Backlog) -> bool:
    """Whether the reading `new` (file key `key`) lost something since the last good reading
    `good` (key `good_key`): the file is shorter, or an item id of `good` is missing."""
    if key[1] < good_key[1]:
        return True
    ids = {item.id for item in new.items}
    return any(item.id not in ids for item in good.items)


STEP = 0.02
"""How often a suspect reading's wait looks at the file's key (a stat): the wait ends as soon as
the rest of the save arrives, so half a save holds a pool up for about as long as it lasts."""


@dataclass(frozen=True, slots=True)
class _Suspect:
    key: FileKey
    digest: bytes
    since: float  # when this process first read these bytes under this key (its own clock)


class SaveGuard:
    """Confirms suspect readings of one backlog file (see the module notes). It waits with this
    module's `sleep` and reads the time from its `monotonic` (tests replace them)."""

    def __init__(self, path: Path, age: float) -> None:
        self.path = path
        self.age = age
        self._suspect: _Suspect | None = None

    def confirmed(self, key: FileKey, data: bytes) -> bool:
        """Whether the suspect reading `data`, read under file key `key`, is the file as it
        stays: the same key and bytes seen again at least `age` after this process first read
        them. Waits for what is left of `age` (at most `age`), looking at the file's key every
        `STEP` and answering False as soon as it moves (the rest of a save arrived: the caller
        reads the file again), then reads the bytes again."""
        mark = digest(data)
        now = monotonic()
        seen = self._suspect
        if seen is None or seen.key != key or seen.digest != mark:
            seen = self._suspect = _Suspect(key, mark, now)
        end = seen.since + self.age
        if end > now:
            while (left := end - monotonic()) > 0:
                sleep(min(left, STEP))
                if file_key(self.path) != key:
                    return False
            try:
                again = read_bytes(self.path)
            except BacklogError:
                return False
            if digest(again) != mark or file_key(self.path) != key:
                return False
        self._suspect = None
        return True
