"""The mixins of the limits a tracker may keep: `KeepsLimits`, `ReadsBodies`, `LocksByComment`."""

from __future__ import annotations

from abc import ABC
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jr2_sources.kit.claims import Comment
    from jr2_sources.kit.markers import Ignored

__all__ = ["KeepsLimits", "LocksByComment", "ReadsBodies"]


class KeepsLimits(ABC):  # noqa: B024 (a declaration: the claim itself keeps the limits)
    """Declares limits kept in the claim itself: `claim` refuses, in one step safe against every
    pool, an item one of whose `SnapshotItem.groups` another live claim holds, or when
    `global_cap` (`--global-cap`, set by the WorkSource) live claims exist."""

    global_cap: int | None = None


class ReadsBodies(ABC):  # noqa: B024 (a declaration with one optional hook)
    """Declares that items carry their bodies (`SnapshotItem.extra["body"]`), so conflict
    groups can be read from a `Touches:` line (`--exclusive-by touches`)."""

    def want_bodies(self) -> None:  # noqa: B027 (optional: most trackers always read them)
        """`touches` is in use: a tracker that reads bodies only on request starts reading them."""


class LocksByComment(ABC):  # noqa: B024 (a declaration with one optional hook)
    """Declares limits kept by lock comments on a coordination issue (`--control-issue`): the
    tracker's claims are comments and it has the comment calls `CommentLocks` needs
    (`kit.comment_claims.Thread`). The run puts `LockedClaims` around its claims."""

    if TYPE_CHECKING:  # what the tracker it is mixed into has
        name: str

        def list_comments(self, key: str) -> tuple[list[Comment], datetime]: ...

        def ignored_markers(self, key: str) -> tuple[Ignored, ...]: ...

    def allow_control(self, key: str) -> None:  # noqa: B027 (optional: most write anywhere)
        """The user named `key` as the coordination issue: allow writes there (Jira guards its
        writes by the JQL's scope)."""
