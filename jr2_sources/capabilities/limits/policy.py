"""Global caps and conflict groups: limits shared by every pool on the same tracker.

`--global-cap N` limits how many items every pool on the tracker holds at once (for `local:` the
pools of one backlog file; elsewhere those naming one `--control-issue`); `--exclusive-by` puts
items into conflict groups, two items of one group never running at once anywhere. Groups:
`label:GLOB` (each matching label) and `touches` (each name on a `Touches: a, b` line of the
body, which needs `ReadsBodies`), one lower-case namespace, written into `SnapshotItem.groups`
by `Limits.tag`. The Ready-set blocks an item of a held group (`group_busy`) and, at the cap,
every would-be-ready item (`global_cap`). The claim is the lock: a group or a slot shares the
item's lease (`KeepsLimits`: in one transaction; a comment tracker: `comment_locks.py`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jr2_core.errors import UsageError
from jr2_sources.capabilities import readings

from .mixin import ReadsBodies

if TYPE_CHECKING:
    from jr2_sources.capabilities.deltas.incremental import Delta
    from jr2_sources.capabilities.deltas.reader import ChangesFn
    from jr2_sources.readyset import Snapshot, SnapshotItem

__all__ = ["GroupRule", "Limits", "parse_exclusive_by"]

# emphasis and code marks around a group name, as people write it in markdown (`db`, *db*) or as
# Jira returns a rich-text description in wiki markup (_db_, {{db}}): the same group
_MARKS = "*_`~{}+"
_TOUCHES = re.compile(r"^[ \t>*#-]*touches[ \t*_]*:[ \t*_]*(.*)$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class GroupRule:
    """One `--exclusive-by`: a label glob (`label:area/*`), or `touches` (glob None)."""

    glob: str | None

    def groups(self, labels: Iterable[str], body: str | None) -> Iterable[str]:
        """The groups this rule puts an item with these labels and this body in."""
        if self.glob is None:
            for line in _TOUCHES.findall(body or ""):
                for part in line.split(","):
                    name = part.strip().strip(_MARKS).strip().casefold()
                    if name:
                        yield name
            return
        pattern = self.glob.casefold()
        yield from (label.casefold() for label in labels
                    if fnmatch.fnmatchcase(label.casefold(), pattern))

    def __str__(self) -> str:
        return "touches" if self.glob is None else f"label:{self.glob}"


def parse_exclusive_by(spec: str) -> GroupRule:
    """`label:GLOB` or `touches`; anything else is a one-line usage error."""
    text = spec.strip()
    if text.casefold() == "touches":
        return GroupRule(None)
    kind, sep, glob = text.partition(":")
    if sep and kind.casefold() == "label" and glob.strip():
        return GroupRule(glob.strip())
    raise UsageError(f"--exclusive-by {spec!r}: expected label:GLOB (e.g. label:area/*) or "
                     "touches (a 'Touches: a, b' line in the item's body)")


@dataclass(frozen=True, slots=True)
class Limits:
    """`--global-cap` and `--exclusive-by` of one pool (see the module notes)."""

    global_cap: int | None = None
    rules: tuple[GroupRule, ...] = ()

    @classmethod
    def parse(cls, global_cap: int | None, exclusive_by: Sequence[str]) -> Limits:
        """The options as given on the command line; bad input is a one-line usage error."""
        if global_cap is not None and global_cap < 1:
            raise UsageError(f"--global-cap {global_cap}: expected a number of items, 1 or more")
        rules = tuple(dict.fromkeys(parse_exclusive_by(s) for s in exclusive_by))
        return cls(global_cap, rules)

    @property
    def active(self) -> bool:
        """True when this pool has any limit to keep."""
        return self.global_cap is not None or bool(self.rules)

    def prepare(self, tracker: Any) -> None:
        """Before the first reading: with `touches`, ask `tracker` to read the items' bodies (a
        source whose items carry none is refused in one line)."""
        if not any(rule.glob is None for rule in self.rules):
            return
        if isinstance(tracker, ReadsBodies):
            tracker.want_bodies()
        else:
            raise UsageError(f"{tracker.name}: this source does not read the items' bodies, so "
                             "it cannot see 'Touches:' lines (use --exclusive-by label:GLOB)")

    def groups_of(self, labels: Iterable[str], body: str | None) -> tuple[str, ...]:
        """The sorted, distinct groups of an item with these labels and this body."""
        if not self.rules:
            return ()
        labels = list(labels)
        return tuple(sorted({g for rule in self.rules for g in rule.groups(labels, body)}))

    def tag_item(self, item: SnapshotItem) -> SnapshotItem:
        """`item` with its `groups` set from its labels and body (`extra["body"]`)."""
        body = item.extra.get("body")
        item.groups = self.groups_of(item.labels, body if isinstance(body, str) else None)
        return item

    def tag(self, got: Snapshot | Delta) -> None:
        """Set the groups of every item of a snapshot or a delta (in place)."""
        if self.rules:
            for item in got.items:
                self.tag_item(item)

    def tagging(self, snapshot: Callable[[], Snapshot], changes: ChangesFn | None
                ) -> tuple[Callable[[], Snapshot], ChangesFn | None]:
        """A tracker's `snapshot` and `changes` (if any), each tagging what it reads."""
        return readings(snapshot, changes, after=self.tag)
