"""The dashboard of a `local:` backlog: a markdown file of its own (`--issue PATH.md`), holding the
same marked section as GitHub's, text outside the markers kept byte for byte (a missing file is an
empty body). Written atomically (a synced temporary file, `os.replace`; a symbolic link is
followed, permission bits kept, a new file 0644), and only if its bytes are still those read
last (else `BodyChanged`). Ticks act as `jr2 local retry` and `jr2 local approve` do, through a
writable claim store opened on the first. Limits (`LOCAL`): 1,048,576 characters, 1 s. No
webhooks.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from jr2_core.errors import SourceError, UsageError
from jr2_sources.capabilities.dashboard.sync import BodyChanged
from jr2_sources.capabilities.dashboard.target import Target

if TYPE_CHECKING:
    from .source import LocalTracker

__all__ = ["LOCAL", "LocalBoard"]

LOCAL = Target(
    limit=1_048_576, min_interval=1.0,
    limit_words="jr2's bound for a local dashboard file",
    interval_words="a local file costs no request, but a person editing it needs a moment")

_NEW_MODE = 0o644


class LocalBoard:
    """A markdown file used as the dashboard of a local backlog (see the module notes)."""

    target = LOCAL

    def __init__(self, tracker: LocalTracker, path: str | int) -> None:
        self.tracker = tracker
        text = str(path).strip()
        if not text:
            raise UsageError("--issue: name the markdown file that shows the dashboard, e.g. "
                             "dashboard.md")
        self.path = Path(text).expanduser()
        self.name = text
        # never an id of the backlog: a NUL cannot be typed into a backlog id by accident
        self.item_id = f"\0dashboard:{self.path}"
        self._seen: bytes | None = None  # the bytes `read` returned last (None: no file)
        self._writer: LocalTracker | None = None

    # -- reading -----------------------------------------------------------------------------

    def _real(self) -> Path:
        """The file itself (a symbolic link followed)."""
        return Path(os.path.realpath(self.path))

    def _bytes(self) -> bytes | None:
        try:
            return self._real().read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SourceError(f"{self.name}: cannot read the dashboard file "
                              f"({exc.strerror or exc})") from None

    def _text(self, data: bytes | None) -> str:
        if data is None:
            return ""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise SourceError(f"{self.name}: the dashboard file is not UTF-8 text; jr2 writes "
                              "nothing to it") from None

    def check(self) -> None:
        """Refuse (one `UsageError` line) a path that cannot be the dashboard: the backlog
        itself, a directory, a file in a directory that does not exist, or one that is not
        UTF-8 text."""
        real = self._real()
        if real == Path(os.path.realpath(self.tracker.path)):
            raise UsageError(f"{self.name} is the backlog file itself; jr2 never writes to it: "
                             "name another file, e.g. dashboard.md")
        if real.is_dir():
            raise UsageError(f"{self.name} is a directory; name a markdown file, e.g. "
                             f"{self.name.rstrip('/')}/dashboard.md")
        if not real.parent.is_dir():
            raise UsageError(f"{self.name}: the directory {real.parent} does not exist")
        try:
            self.read()
        except SourceError as exc:
            raise UsageError(str(exc)) from None

    def read(self) -> str:
        data = self._bytes()
        self._seen = data
        return self._text(data)

    # -- writing -----------------------------------------------------------------------------

    def write(self, body: str) -> None:
        """Replace the file atomically with `body`, unless it changed since it was read last
        (`BodyChanged`, nothing written): see the module notes."""
        real = self._real()
        try:
            mode = real.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = _NEW_MODE
        except OSError as exc:
            raise SourceError(f"{self.name}: {exc.strerror or exc}") from None
        try:
            fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.",
                                       suffix=".jr2-tmp")
        except OSError as exc:
            raise SourceError(f"{self.name}: cannot write beside the dashboard file "
                              f"({exc.strerror or exc})") from None
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body.encode("utf-8"))
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, mode)
            now = self._bytes()
            if now != self._seen:  # a person saved since it was read: start over from it
                self._seen = now
                raise BodyChanged(self._text(now))
            os.replace(tmp, real)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise SourceError(f"{self.name}: cannot write the dashboard file "
                                  f"({exc.strerror or exc})") from None
            raise
        self._seen = body.encode("utf-8")
        _sync_dir(real.parent)

    # -- acting on ticks -----------------------------------------------------------------------

    def retry(self, item_id: str) -> None:
        """Clear the item's failure in the claim store, as `jr2 local retry` does."""
        self._writable().retry(item_id)

    def _writable(self) -> LocalTracker:
        if not self.tracker.read_only:
            return self.tracker
        if self._writer is None:
            self._writer = self.tracker.writer()
        return self._writer

    def about(self, headers: Mapping[str, str], body: bytes) -> Literal["own", "person"] | None:
        """Never: a local backlog takes no webhooks."""
        return None

    def close(self) -> None:
        """Close the claim store opened for a retry tick, if one was."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _sync_dir(directory: Path) -> None:
    """Make the rename durable (best effort: not every system can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

