"""Group and slot locks on a coordination issue's comment thread (`kit.comment_locks`), against
an in-memory thread with a tracker's guarantees (ids that only grow, server timestamps)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from jr2_sources.capabilities.limits.comment_locks import CommentLocks
from jr2_sources.kit.claims import Comment


class Thread:
    """One issue's comments, as a tracker keeps them: growing ids, server times, a lock."""

    def __init__(self) -> None:
        self.comments: dict[int, Comment] = {}
        self.next_id = 1
        self.now = 1000.0
        self.lock = threading.Lock()
        self.pause = 0.0  # a gap between a POST and the listing, so claimers interleave

    def _t(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)

    def post_comment(self, key: str, body: str) -> int:
        with self.lock:
            cid, self.next_id = self.next_id, self.next_id + 1
            self.comments[cid] = Comment(cid, body, self._t(), self._t())
        time.sleep(self.pause)
        return cid

    def list_comments(self, key: str) -> tuple[list[Comment], datetime]:
        with self.lock:
            return sorted(self.comments.values(), key=lambda c: c.id), self._t()

    def edit_comment(self, key: str, comment_id: int, body: str) -> datetime | None:
        with self.lock:
            old = self.comments.get(comment_id)
            if old is None:
                return None
            self.comments[comment_id] = Comment(comment_id, body, old.created_at, self._t())
            return self._t()

    def delete_comment(self, key: str, comment_id: int) -> None:
        with self.lock:
            self.comments.pop(comment_id, None)


def test_an_earlier_live_lock_of_a_group_wins_and_the_loser_leaves_no_comment() -> None:
    th = Thread()
    locks = CommentLocks(th, "o/r#1", global_cap=None)
    held = locks.acquire("o/r#2", ("db",), "p1", 10)
    assert held is not None
    assert locks.acquire("o/r#3", ("db", "ui"), "p2", 10) is None
    assert list(th.comments) == [held.comment_id]
    assert locks.acquire("o/r#4", ("ui",), "p2", 10) is not None


def test_an_expired_lock_is_ignored_and_its_late_renewal_loses() -> None:
    th = Thread()
    locks = CommentLocks(th, "o/r#1", global_cap=1)
    held = locks.acquire("o/r#2", ("db",), "p1", 10)
    assert held is not None
    th.now += 9.9
    assert locks.acquire("o/r#3", (), "p2", 10) is None  # the one slot is held
    th.now += 0.2
    taken = locks.acquire("o/r#3", ("db",), "p2", 10)
    assert taken is not None
    assert not locks.renew(held, 10)  # it lands after the lease: lost, and deleted
    assert list(th.comments) == [taken.comment_id]
    th.now += 5
    assert locks.renew(taken, 10)
    th.now += 9
    assert locks.acquire("o/r#4", (), "p3", 10) is None  # renewed: still held


@pytest.mark.parametrize(("claim", "winners"), [({"groups": ("db",)}, 1),
                                                ({"cap": 3}, 3)])
def test_eight_racing_claimers_never_exceed_the_limit(claim: dict[str, object],
                                                      winners: int) -> None:
    for _ in range(5):
        th = Thread()
        th.pause = 0.002
        barrier = threading.Barrier(8)
        won: list[str] = []

        def one(i: int, th: Thread = th, barrier: threading.Barrier = barrier,
                won: list[str] = won) -> None:
            locks = CommentLocks(th, "o/r#1", global_cap=claim.get("cap"))  # type: ignore[arg-type]
            barrier.wait()
            if locks.acquire(f"o/r#{i + 2}", claim.get("groups", ()), f"p{i}",  # type: ignore[arg-type]
                             60) is not None:
                won.append(f"o/r#{i + 2}")

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert 1 <= len(won) <= winners
        assert len(th.comments) == len(won)  # every loser deleted its comment


def test_dead_locks_of_killed_pools_are_deleted_a_few_per_acquire_and_nothing_else() -> None:
    from jr2_sources.capabilities.limits.comment_locks import GRACE, SWEEP

    th = Thread()
    killed = CommentLocks(th, "o/r#1", global_cap=None)
    for i in range(SWEEP + 2):  # a pool killed holding five locks: never renewed, never deleted
        assert killed.acquire(f"o/r#{i + 10}", (f"g{i}",), "dead", 10) is not None
    person = th.post_comment("o/r#1", "a person's note about <!-- jr2:lock {} --> locks")
    forged = th.post_comment("o/r#1", '<!-- jr2:lock {"nonce": "x", "lease": 1} -->\nhi')
    dead = sorted(set(th.comments) - {person, forged})
    live = CommentLocks(th, "o/r#1", global_cap=None)
    th.now += 10 + min(10, GRACE) - 1  # expired, but within the grace: kept
    first = live.acquire("o/r#2", ("g0",), "p2", 10)
    assert first is not None
    assert set(dead) <= set(th.comments)
    live.release(first)
    th.now += 1
    second = live.acquire("o/r#3", (), "p2", 10)  # past the grace: the oldest SWEEP go
    assert second is not None
    assert sorted(set(th.comments) - {person, forged, second.comment_id}) == dead[SWEEP:]
    third = live.acquire("o/r#4", (), "p2", 10)
    assert third is not None
    assert set(th.comments) == {person, forged, second.comment_id, third.comment_id}
    th.now += 10_000  # our own locks, dead too, are swept by the next claimer like any other
    CommentLocks(th, "o/r#1", global_cap=None).acquire("o/r#5", (), "p3", 10)
    assert person in th.comments and forged in th.comments


def test_two_pools_sweeping_the_same_dead_locks_at_once_both_claim() -> None:
    """Two claimers delete the same dead lock: the second deletion finds it gone, which is fine
    (a comment already gone counts as deleted, as every adapter's `delete_comment` does)."""
    from jr2_sources.capabilities.limits.comment_locks import GRACE

    class Racing(Thread):
        def __init__(self) -> None:
            super().__init__()
            self.deletes: list[int] = []

        def delete_comment(self, key: str, comment_id: int) -> None:
            with self.lock:
                self.deletes.append(comment_id)
            time.sleep(0.005)
            super().delete_comment(key, comment_id)

    th = Racing()
    old = CommentLocks(th, "o/r#1", global_cap=None)
    dead = [old.acquire(f"o/r#{i + 10}", (), "dead", 10) for i in range(2)]
    th.now += 10 + min(10, GRACE)
    th.pause = 0.005
    barrier = threading.Barrier(2)
    got: list[object] = []

    def one(i: int) -> None:
        barrier.wait()
        got.append(CommentLocks(th, "o/r#1", global_cap=None).acquire(f"o/r#{i}", (f"g{i}",),
                                                                      f"p{i}", 10))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g is not None for g in got)
    assert not {d.comment_id for d in dead if d is not None} & set(th.comments)
    assert len(th.comments) == 2


class Counting(Thread):
    """A thread that counts the comments posted to it."""

    def __init__(self) -> None:
        super().__init__()
        self.posts = 0
        self.listings = 0

    def post_comment(self, key: str, body: str) -> int:
        self.posts += 1
        return super().post_comment(key, body)

    def list_comments(self, key: str) -> tuple[list[Comment], datetime]:
        self.listings += 1
        return super().list_comments(key)


def test_a_claimer_that_reads_no_room_posts_nothing() -> None:
    """Look before you post: with the cap full, the same item locked elsewhere, or a group
    held, acquire lists the thread and posts no comment at all."""
    th = Counting()
    holder = CommentLocks(th, "o/r#1", global_cap=2)
    assert holder.acquire("o/r#2", ("db",), "p1", 60) is not None
    assert th.posts == 1
    other = CommentLocks(th, "o/r#1", global_cap=2)
    assert other.acquire("o/r#2", (), "p2", 60) is None  # that item is locked already
    assert other.acquire("o/r#3", ("db",), "p2", 60) is None  # its group is held
    assert th.posts == 1
    assert other.acquire("o/r#4", ("ui",), "p2", 60) is not None
    third = CommentLocks(th, "o/r#1", global_cap=2)
    assert third.acquire("o/r#5", (), "p3", 60) is None  # two live locks: the cap is full
    assert th.posts == 2 and len(th.comments) == 2


def test_one_listing_serves_a_round_of_looks_until_a_new_reading() -> None:
    """With `reuse`, a pool that finds the cap full looks at every other ready item of the
    round without listing again; `fresh()` (a new reading) or a second look at an item lists
    anew."""
    th = Counting()
    CommentLocks(th, "o/r#1", global_cap=1).acquire("o/r#2", (), "p1", 60)
    pool = CommentLocks(th, "o/r#1", global_cap=1, reuse=True)
    before = th.listings
    assert all(pool.acquire(f"o/r#{n}", (), "p2", 60) is None for n in range(3, 13))
    assert th.listings == before + 1
    pool.fresh()
    assert pool.acquire("o/r#3", (), "p2", 60) is None
    assert pool.acquire("o/r#3", (), "p2", 60) is None
    assert th.listings == before + 3 and th.posts == 1


def test_a_lock_of_a_forged_long_lease_holds_only_for_the_pools_own_lease() -> None:
    """A lock whose marker claims a day holds, for a pool of a 60 s lease, 60 s only."""
    th = Thread()
    th.post_comment("o/r#1", '<!-- jr2:lock {"groups": ["db"], "holder": "x", "item": "o/r#9", '
                             '"lease": 86400, "nonce": "n"} -->\njr2: o/r#9 is held.')
    pool = CommentLocks(th, "o/r#1", global_cap=None)
    assert pool.acquire("o/r#2", ("db",), "p", 60) is None
    th.now += 60
    assert pool.acquire("o/r#2", ("db",), "p", 60) is not None


@pytest.mark.parametrize(("count", "form"), [(3, "groups"), (200, "digests"),
                                             (9000, "all_groups")])
def test_a_lock_stays_small_whatever_the_item_names_and_still_excludes_its_groups(
        count: int, form: str) -> None:
    """An item of 3, 200 or 9,000 groups: its lock comment stays within a few thousand
    characters (names, then digests, then every group), and an item of any of its groups
    waits while it holds, an item of none only when it held every group."""
    from jr2_sources.capabilities.limits.comment_locks import GROUPS_BUDGET

    th = Thread()
    names = [f"component-{i:05d}-{'x' * 20}" for i in range(count)]
    big = CommentLocks(th, "o/r#1", global_cap=None).acquire("o/r#2", names, "p1", 60)
    assert big is not None
    [body] = [c.body for c in th.comments.values()]
    assert len(body) < GROUPS_BUDGET + 600
    assert f'"{form}": ' in body
    assert ("and 8,995 more" in body) == (count == 9000)
    other = CommentLocks(th, "o/r#1", global_cap=None)
    assert other.acquire("o/r#3", (names[count // 2],), "p2", 60) is None
    assert (other.acquire("o/r#4", ("elsewhere",), "p2", 60) is None) == (count == 9000)
    assert other.acquire("o/r#5", (), "p2", 60) is not None  # no group: no conflict


def test_a_refused_lock_comment_is_one_items_refusal() -> None:
    """The tracker refusing the lock comment itself (422) raises `LockRefused`, an
    `ItemError` that quotes it; a refusal about the issue (403) stays what it was."""
    from jr2_core.errors import ItemError, SourceHTTPError
    from jr2_sources.capabilities.limits.comment_locks import LockRefused

    class Refusing(Thread):
        status = 422

        def post_comment(self, key: str, body: str) -> int:
            raise SourceHTTPError("GitHub refused (HTTP 422: body is too long)", self.status)

    th = Refusing()
    with pytest.raises(LockRefused, match=r"o/r#2 .*body is too long") as got:
        CommentLocks(th, "o/r#1", global_cap=1).acquire("o/r#2", (), "p", 60)
    assert isinstance(got.value, ItemError)
    th.status = 403
    with pytest.raises(SourceHTTPError) as other:
        CommentLocks(th, "o/r#1", global_cap=1).acquire("o/r#2", (), "p", 60)
    assert not isinstance(other.value, ItemError)
