"""Global caps and conflict groups: limits shared by every pool on the same tracker.

Design notes
------------
`--cap` limits one process. `jr2 work --global-cap N` limits how many items are held at once by
every pool on the same tracker, and `--exclusive-by` puts items into conflict groups, two items
of one group never running at once anywhere. Like the attempt record of bounded retries
(`jr2_sources.capabilities.retries`), neither lives in a pool's memory: both are decided by the
claim itself, in the tracker, so pools on other machines and restarted pools honour them.

* **The same tracker.** What the claims of one tracker's pools have in common. For `local:`,
  the claim store of one backlog file: every claim in it counts (every pool of that file,
  whatever its `--label`, with the options or without); a pool started without the options is
  not limited itself and records no groups, so give every pool the same options. On GitHub,
  Jira and GitLab, the coordination issue every pool names (`--control-issue`), normally one
  per repository or project: the locks posted there count, so only pools given the options
  take part.
* **Groups.** `--exclusive-by label:GLOB` (repeatable): every label of the item matching the
  glob (`fnmatch`, case-insensitive) is a group, named by the label (`area/db`).
  `--exclusive-by touches`: every name on a `Touches: a, b` line of the item's body is a group.
  Names are compared case-insensitively (kept lower-case) and share one namespace, so
  `Touches: area/db` joins the label's group. `Limits.tag` writes each item's groups into
  `SnapshotItem.groups` as it is read, so the Ready-set rules and the claim see the same groups.
  The line may sit in a list or a quote, or carry bold marks (`**Touches:**` in Markdown,
  `*Touches:*` in Jira's wiki markup). A tracker that reads bodies only on request (Jira: its
  description costs bytes on every search) has a `want_bodies()` method; `Limits.prepare`
  calls it when `touches` is in use, and refuses `touches` on a source that reads no bodies.
* **The Ready-set.** An unclaimed item of a group held by a live claim of another item is
  blocked with `group_busy` (the group and the holding item); while live claims number
  `global_cap` or more, every item that would otherwise be ready is blocked with `global_cap`
  (the count and the cap). Both come and go with the claims and their leases, never with a
  write: a pool whose ready items all wait for a group or the cap counts them as held elsewhere
  and polls instead of ending `deadlocked`.
* **The claim is the lock.** A group or a cap slot is not a separate lock to forget: it is held
  by the item's claim and shares its lease, renewed with it and released with it, so a pool
  killed with `kill -9` holds nothing past its lease. A tracker that can decide the claim, its
  groups and the cap together sets `Tracker.limits`; the WorkSource refuses the options on any
  other at start, in one line. `local:` does it in one SQLite write transaction
  (`trackers/local/store.py`): count the live claims, look for a live claim sharing a group,
  insert; writers queue on one lock, so a race between any number of pools can never exceed a
  limit.
* **Comment trackers.** The per-item comment protocol cannot see a conflicting claim on another
  issue posted in the same instant: "post, then read" is safe only when every claimer posts to
  and reads the same thread. So on GitHub the limits live on one coordination issue every pool
  names (`--control-issue`): `capabilities/limits/comment_locks.py` posts a lock comment there
  before the item's claim, reads the thread back, and yields if an earlier live lock shares a group
  or
  `global_cap` earlier live locks exist (comment ids are the order every pool agrees on); the
  lock shares the item's lease. It costs one more comment creation per item, one edit per
  renewal and one deletion. GitLab (the plugin) and Jira use it too (Jira Cloud keeps the lock
  marker in a comment property, `trackers/jira/markers.py`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jr2_core.errors import UsageError

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

    def prepare(self, adapter: Any) -> None:
        """Before the first reading: with `touches`, ask `adapter` to read the items' bodies
        (`want_bodies()`, where reading them costs and is done only on request); a source
        that reads no bodies (`reads_bodies = False`) is refused in one line."""
        if not any(rule.glob is None for rule in self.rules):
            return
        want = getattr(adapter, "want_bodies", None)
        if callable(want):
            want()
        elif not getattr(adapter, "reads_bodies", True):
            raise UsageError(f"{adapter.name}: this source does not read the items' bodies, so "
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
        def read() -> Snapshot:
            got = snapshot()
            self.tag(got)
            return got

        if changes is None:
            return read, None
        fn = changes

        def delta(*, full: bool = False) -> Snapshot | Delta:
            got = fn(full=full)
            self.tag(got)
            return got

        return read, delta
