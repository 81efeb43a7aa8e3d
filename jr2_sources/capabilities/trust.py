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
    `markers` (a `MarkerTrust`), each one left out shows on its item's entry
    (`SnapshotItem.ignored`), and the conformance kit checks that a stranger's change nothing."""

    if TYPE_CHECKING:  # what the tracker it is mixed into has
        markers: MarkerTrust
