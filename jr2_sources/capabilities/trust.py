"""`TrustsMarkers`: the declaration of a tracker whose coordination state is markers that
anyone able to write on the tracker could forge (comments, comment properties, attachments),
so they count only from accounts the pool trusts (`jr2_sources.kit.markers`)."""

from __future__ import annotations

from abc import ABC
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jr2_sources.kit.markers import MarkerTrust

__all__ = ["TrustsMarkers"]


class TrustsMarkers(ABC):  # noqa: B024 (a declaration: the tracker reads through `markers`)
    """Declares markers judged by authorship: every marker the tracker reads passes through
    `markers` (a `MarkerTrust`: the pool's own account, the ones `--trust` names, and with
    `JR2_MARKER_KEY` signatures), and each one it leaves out shows on its item's entry
    (`SnapshotItem.ignored`). The conformance kit then checks that a stranger's markers change
    nothing. A tracker whose state has no authors to judge (`local:`) does not declare it."""

    if TYPE_CHECKING:  # what the tracker it is mixed into has
        markers: MarkerTrust
