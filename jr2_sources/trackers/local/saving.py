"""A backlog being saved: when a reading of the file that lost something may be trusted.

A save is not always atomic: for a moment the file can be empty or cut short and still valid
TOML, its mtime no proof of stillness. A reading that lost something since the last good one (an
item id, or bytes) is suspect (`SaveGuard`), trusted only once this process has seen the same
key (mtime, size, inode) and bytes (a BLAKE2 digest) in readings at least `CONFIRM_AGE` apart by
its monotonic clock; a reading that only added needs no confirmation. A suspect reading waits
looking at the key every `STEP`; the caller (`LocalTracker.backlog`) tries a few times, then keeps
the last good backlog.
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
