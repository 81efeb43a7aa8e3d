"""The kit's since-reader: a tracker gives its queries, the reader pages, reads marks directly,
judges leaves, builds the `Delta`, and answers None on any sign of a gap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.deltas.since import SinceReader
from jr2_sources.capabilities.deltas.sincewindow import Page, SinceWindow, WindowGap
from jr2_sources.readyset import BlockerState, SnapshotItem

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _issue(n: int, minute: int, state: str = "open", **extra: Any) -> dict[str, Any]:
    return {"n": n, "updated": T0 + timedelta(minutes=minute), "state": state, **extra}


class Fake(SinceReader[int]):
    """A tracker of numbered issues: `issues` is the server; `pages` records each `since`."""

    def __init__(self, issues: dict[int, dict[str, Any]]) -> None:
        super().__init__()
        self.issues = issues
        self.pages: list[datetime] = []
        self.direct_reads: list[int] = []
        self.dropped_ids: list[tuple[str, bool]] = []
        self.refuse = False

    def page(self, since: datetime) -> Page:
        self.pages.append(since)
        if self.refuse:
            raise WindowGap("refused")
        listed = sorted((i for i in self.issues.values()
                         if i["updated"] >= since and not i.get("unlisted")),
                        key=lambda i: i["updated"])
        return listed[:100], T0 + timedelta(hours=1)

    def direct(self, key: int) -> Any:
        self.direct_reads.append(key)
        if key not in self.issues:
            raise WindowGap(f"#{key} is gone")
        return self.issues[key]

    def leaves(self, key: int, obj: Any, skip: set[str]) -> BlockerState | None:
        if obj["state"] == "closed":
            return "done"
        return "open" if self.ident(key) in skip or obj.get("outside") else None

    def key_of(self, obj: Any) -> int:
        return int(obj["n"])

    def updated_of(self, obj: Any) -> datetime | None:
        return obj["updated"]  # type: ignore[no-any-return]

    def ident(self, key: int) -> str:
        return f"#{key}"

    def marks(self) -> list[int]:
        return sorted(k for k in self.window.take_marks() if isinstance(k, int))

    def item_of(self, key: int, obj: Any, delta: object) -> SnapshotItem | None:
        return None if obj.get("batch") else SnapshotItem(id=self.ident(key), title="one")

    def items_of(self, objs: dict[int, Any], fresh: dict[int, Any],
                 skip: set[str]) -> list[SnapshotItem]:
        return [SnapshotItem(id=self.ident(k), title="batch") for k in sorted(objs)]

    def dropped(self, ident: str, *, settled: bool) -> None:
        self.dropped_ids.append((ident, settled))


def _started(issues: dict[int, dict[str, Any]]) -> Fake:
    fake = Fake(issues)
    fake.start(T0 + timedelta(minutes=30), issues.items(),
               [SnapshotItem(id=f"#{n}", title="x") for n in issues])
    return fake


def test_no_delta_before_a_full_reading_nor_after_one_without_a_time() -> None:
    fake = Fake({1: _issue(1, 0)})
    assert fake.read(set()) is None and fake.pages == []
    fake.start(None, [], [])
    assert fake.read(set()) is None and fake.pages == []


def test_an_unchanged_poll_is_one_page_and_an_empty_delta() -> None:
    fake = _started({1: _issue(1, 0), 2: _issue(2, 29)})
    delta = fake.read(set())
    assert delta is not None and not delta
    assert len(fake.pages) == 1


def test_changed_issues_become_items_or_leave_with_their_state() -> None:
    issues = {1: _issue(1, 0), 2: _issue(2, 0), 3: _issue(3, 0)}
    fake = _started(dict(issues))
    fake.issues[1] = _issue(1, 40, title="edited")
    fake.issues[2] = _issue(2, 41, "closed")
    fake.issues[3] = _issue(3, 42, outside=True)
    fake.issues[4] = _issue(4, 43, batch=True)
    delta = fake.read(set())
    assert delta is not None
    assert [(it.id, it.title) for it in delta.items] == [("#1", "one"), ("#4", "batch")]
    assert delta.left == {"#2": "done", "#3": "open"}
    assert fake.in_set == {"#1", "#4"}
    assert fake.dropped_ids == [("#2", False), ("#3", False)]


def test_items_this_process_settled_leave_as_open() -> None:
    fake = _started({1: _issue(1, 0), 2: _issue(2, 0)})
    delta = fake.read({"#2"})
    assert delta is not None and delta.left == {"#2": "open"}
    assert fake.in_set == {"#1"} and fake.dropped_ids == [("#2", True)]


def test_a_marked_issue_is_read_directly_and_rebuilt_even_unchanged() -> None:
    fake = _started({1: _issue(1, 0), 2: _issue(2, 0), 3: _issue(3, 0)})
    fake.issues[3] = _issue(3, 50, unlisted=True)  # newer than the list shows (a slow list)
    fake.window.mark([3, 2, "not-a-key"])
    delta = fake.read(set())
    assert delta is not None and [it.id for it in delta.items] == ["#2", "#3"]
    assert fake.direct_reads == [2, 3]
    assert fake.window.watermark == T0 + timedelta(minutes=30)  # a direct read does not move it


def test_a_marked_issue_that_is_gone_is_a_gap_and_the_next_reading_full() -> None:
    fake = _started({1: _issue(1, 0)})
    fake.window.mark([9])
    assert fake.read(set()) is None
    assert fake.window.last_gap == "#9 is gone"
    fake.window.mark([1])
    assert fake.read(set()) is None  # broken until a full reading
    assert len(fake.pages) == 1


def test_a_refused_listing_is_a_gap() -> None:
    fake = _started({1: _issue(1, 0)})
    fake.refuse = True
    assert fake.read(set()) is None and fake.window.last_gap == "refused"


def test_pages_are_walked_by_time_and_too_many_are_a_gap() -> None:
    issues = {n: {"n": n, "updated": T0 + timedelta(minutes=31, seconds=n), "state": "open"}
              for n in range(1, 251)}  # three pages of 100
    fake = _started({})
    fake.issues = dict(issues)
    delta = fake.read(set())
    assert delta is not None and len(delta.items) == 250 and len(fake.pages) == 3
    assert fake.pages[1] == issues[100]["updated"]  # the next page starts at the last time seen
    fake = _started({})
    fake.issues = dict(issues)
    fake.window.max_pages = 2
    assert fake.read(set()) is None
    assert fake.window.last_gap == "more than 2 pages of changes"


def test_an_error_half_way_leaves_the_reader_broken() -> None:
    fake = _started({1: _issue(1, 0)})

    def boom(fresh: dict[int, Any], marked: set[int], skip: set[str]) -> None:
        raise RuntimeError("network")
    fake.follow = boom  # type: ignore[method-assign]
    try:
        fake.read(set())
    except RuntimeError:
        pass
    else:
        raise AssertionError("the error was swallowed")
    del fake.follow
    assert fake.read(set()) is None  # the next reading is full


class Scoped(Fake):
    """A tracker whose `page` lists only its scope; `outside` is what left it, `date` the
    server's time of each answer (the window is not `paged`)."""

    def __init__(self, issues: dict[int, dict[str, Any]]) -> None:
        super().__init__(issues)
        self.window = SinceWindow(overlap=120.0, paged=False)
        self.outside: dict[int, dict[str, Any]] = {}
        self.date: datetime | None = T0 + timedelta(hours=1)
        self.fail: Exception | None = None

    def page(self, since: datetime) -> Page:
        self.pages.append(since)
        if self.fail is not None:
            raise self.fail
        listed = [i for i in self.issues.values() if i["updated"] >= since]
        return listed, self.date

    def leave_page(self, since: datetime) -> list[Any]:
        return [i for i in self.outside.values() if i["updated"] >= since]

    def leaves(self, key: int, obj: Any, skip: set[str]) -> BlockerState | None:
        return "done" if key in self.leaving else super().leaves(key, obj, skip)


def _scoped(issues: dict[int, dict[str, Any]]) -> Scoped:
    fake = Scoped(issues)
    fake.start(T0 + timedelta(minutes=30), issues.items(),
               [SnapshotItem(id=f"#{n}", title="x") for n in issues])
    return fake


def test_a_window_that_is_not_paged_reaches_back_the_overlap_from_the_servers_time() -> None:
    fake = _scoped({n: _issue(n, 29) for n in range(150)})  # more than a page: one answer
    assert fake.read(set()) == Delta()
    assert fake.pages == [T0 + timedelta(minutes=28)]
    assert fake.window.watermark == T0 + timedelta(hours=1)
    fake.date = None  # no `Date`: a gap
    assert fake.read(set()) is None and fake.window.last_gap


def test_the_newer_of_the_scope_and_the_leave_answer_wins() -> None:
    fake = _scoped({1: _issue(1, 0), 2: _issue(2, 0)})
    fake.issues[1] = _issue(1, 70, title="edited")
    fake.outside[1] = _issue(1, 65)  # older: the scope's answer stands
    fake.issues[2] = _issue(2, 70, title="edited")
    fake.outside[2] = _issue(2, 75)  # newer: it left
    delta = fake.read(set())
    assert delta is not None
    assert [it.id for it in delta.items] == ["#1"] and delta.left == {"#2": "done"}


def test_a_delta_that_fails_before_it_took_anything_in_keeps_its_marks() -> None:
    fake = _scoped({1: _issue(1, 0)})
    fake.window.mark([1])
    fake.fail = OSError("network")
    try:
        fake.read(set())
    except OSError:
        pass
    else:
        raise AssertionError("the error was swallowed")
    fake.fail = None
    delta = fake.read(set())  # a delta still, and the mark is read
    assert delta is not None and [it.id for it in delta.items] == ["#1"]
    assert fake.direct_reads == [1]
