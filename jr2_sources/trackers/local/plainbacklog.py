"""A well-formed backlog checked by hand, into plain slotted records (no pydantic).

`jr2 work local:FILE` reads its backlog at start and again whenever the file changes. The
pydantic models (`backlogmodel.py`) are the reference, but importing pydantic and building them
costs about 0.1 s of CPU at every start, most of what a 100-item drain adds to its commands.
`quick_backlog` accepts a decoded document only when every part of it is plainly valid (the
exact types the models accept strictly, no key they do not know, none of the cross-item problems
of `backlog._rule_problems`), and answers None for anything else: the models then validate it
and word the error. What it accepts, it reads exactly as the models do (a zone-less `created` is
UTC); tests/trackers/local/test_local_quick.py checks that over generated documents, valid and
not.

A `PlainItem` has the fields of `BacklogItem` and a `PlainBacklog` the methods of `Backlog` the
source uses (`items`, `by_id`, `children`), so the rest of `local:` reads either alike.
"""

from __future__ import annotations

from dataclasses import field
from datetime import UTC, datetime
from typing import Any

from jr2_core.records import record

from .backlog import _rule_problems, children_of

_STR_LISTS = ("needs", "labels")
_OPT_STRS = ("body", "parent", "branch")
FIELDS = frozenset({"id", "title", "priority", "status", "created", *_STR_LISTS, *_OPT_STRS})


@record(frozen=True, slots=True)
class PlainItem:
    """One backlog item (`BacklogItem`'s fields and defaults)."""

    id: str
    title: str
    needs: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    priority: int | None = None
    status: str = "open"
    body: str | None = None
    parent: str | None = None
    branch: str | None = None
    created: datetime | None = None


@record(frozen=True, slots=True)
class PlainBacklog:
    """The backlog's items in file order (`Backlog`'s reading methods)."""

    items: list[PlainItem] = field(default_factory=list)

    def by_id(self) -> dict[str, PlainItem]:
        """Map each id to its item (O(n): call once per snapshot)."""
        return {item.id: item for item in self.items}

    def children(self) -> dict[str, list[str]]:
        """Map each parent id to its children's ids, in file order, derived from `parent`."""
        return children_of(self.items)


def _str_list(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _item(raw: Any) -> PlainItem | None:
    """One item, or None when any of it is not plainly valid."""
    if type(raw) is not dict or not FIELDS.issuperset(raw):
        return None
    iid, title = raw.get("id"), raw.get("title")
    if type(iid) is not str or type(title) is not str:
        return None
    for name in _STR_LISTS:
        if name in raw and not _str_list(raw[name]):
            return None
    for name in _OPT_STRS:
        if raw.get(name) is not None and type(raw[name]) is not str:
            return None
    priority = raw.get("priority")
    if priority is not None and type(priority) is not int:
        return None
    status = raw.get("status", "open")
    if status not in ("open", "done") or type(status) is not str:
        return None
    created = raw.get("created")
    if created is not None:
        if type(created) is not datetime:  # an ISO string: the models parse it
            return None
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
    return PlainItem(iid, title, list(raw.get("needs", ())), list(raw.get("labels", ())),
                     priority, status, raw.get("body"), raw.get("parent"), raw.get("branch"),
                     created)


def quick_backlog(data: Any) -> PlainBacklog | None:
    """The decoded document as a `PlainBacklog`, or None for the models to judge."""
    if type(data) is not dict or not {"items"}.issuperset(data):
        return None
    raw = data.get("items", [])
    if type(raw) is not list:
        return None
    items: list[PlainItem] = []
    for entry in raw:
        item = _item(entry)
        if item is None:
            return None
        items.append(item)
    if _rule_problems(items):
        return None
    return PlainBacklog(items)
