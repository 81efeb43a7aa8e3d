"""What a GitHub delta adds under `--done-when merged` (`GitHubChanges.merges`).

The since-window lists changed pull requests too, so no request is added to find them. Judged
again (one GraphQL query per 100, `IssueReader.judge`): the issues a changed PR was linked to
(`pulls_of`), those its body mentions or whose jr2 branch is its head (`PullReader.heads`),
changed issues (not this process's own claim or a settle that left it open), the blockers of an
issue come back open (their `blocking` lists left it out), and at every delta those waiting on
checks. When a judgement changes, the items that name it are rebuilt
(`holders`, a conditional GET each), carrying its state as a blocker (`Delta.as_blocker`).
`--stack`: `built` indexes the blocker a stacked item names in no reference.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from jr2_sources.kit.labeltracker import labels_of

from .pulls import issue_of_branch
from .refs import body_refs, item_id, repo_of_api_url, same_repo, split_id

if TYPE_CHECKING:
    from jr2_sources.readyset import SnapshotItem

    from .delta import GitHubChanges
    from .pulls import Links

_MENTION = re.compile(
    r"(?:(?<![\w/])([\w.-]+/[\w.-]+)?#|https?://[^\s/]+/([\w.-]+/[\w.-]+)/issues/)(\d+)")

Key = tuple[int, bool, str]


def _unindex(index: dict[int, set[int]], number: int, others: set[int]) -> None:
    """Take `number` out of `index`'s entries for `others` (dropping emptied entries)."""
    for other in others:
        entry = index.get(other)
        if entry is not None:
            entry.discard(number)
            if not entry:
                del index[other]


class MergeDelta:
    """The bookkeeping of merge-aware deltas for one `GitHubChanges` (module notes)."""

    def __init__(self, changes: GitHubChanges) -> None:
        self.changes = changes
        self.reader = changes.reader
        self.node_ids: dict[int, str] = {}  # open issues seen (GraphQL asks by node id)
        self.review: set[int] = set()  # issues carrying the review label
        self.keys: dict[int, Key] = {}  # asked issue -> what its judgement was made from
        self.prs: dict[int, set[int]] = {}  # PR number -> the judged issues it was linked to
        self.holders: dict[int, set[int]] = {}  # issue -> items of the set that name it
        self.names: dict[int, set[int]] = {}  # item -> the issues of this repository it names
        self.bodies: dict[int, set[int]] = {}  # issue -> items whose body names it
        self.body_names: dict[int, set[int]] = {}  # open listed issue -> what its body names
        self.heads: dict[int, str | None] = {}  # PR number -> its head branch (never changes)
        self.settled: set[int] = set()  # left open by our settle, its new object not seen yet
        self._own: dict[int, tuple[Links, dict[str, Any]] | None] = {}  # settles, to take in
        self._lock = threading.Lock()  # settles run beside readings
        self.epoch = 0  # full readings so far: a settle's read older than the last is not used

    # -- after a full reading -----------------------------------------------------------------

    def full_read(self, listed: dict[int, dict[str, Any]], items: list[SnapshotItem]) -> None:
        self.node_ids, self.review, self.bodies, self.body_names = {}, set(), {}, {}
        self.settled = set()  # all judged now
        with self._lock:
            self.epoch += 1
        for number, issue in listed.items():
            self._saw(number, issue)
        self.keys = {n: self._key(listed[n]) for n in self.reader.asked if n in listed}
        self.prs = {}
        for number, prs in self.reader.pulls_of.items():
            for pr in prs:
                self.prs.setdefault(pr, set()).add(number)
        self.holders, self.names = {}, {}
        for item in items:
            self.built(item)

    def _saw(self, number: int, issue: dict[str, Any]) -> None:
        """Note what an issue object read says: its node id, review label, body references (of
        an open listed issue, as the full reading's `asked` counts them)."""
        if "pull_request" in issue:
            return
        _unindex(self.bodies, number, self.body_names.pop(number, set()))
        if issue.get("state") == "open" and self.changes.listed(issue):
            self.body_names[number] = self._body_refs(issue.get("body"), number)
            for other in self.body_names[number]:
                self.bodies.setdefault(other, set()).add(number)
        if issue.get("node_id"):
            self.node_ids[number] = str(issue["node_id"])
        if self.reader.in_review(labels_of(issue)):
            self.review.add(number)
        else:
            self.review.discard(number)

    def _key(self, issue: dict[str, Any]) -> Key:
        summary = issue.get("issue_dependencies_summary") or {}
        return (int(summary.get("blocking") or 0), int(issue["number"]) in self.review,
                str(issue.get("state")))

    # -- this process's own settles ----------------------------------------------------------

    def left_open(self, number: int, links: Links | None = None,
                  issue: dict[str, Any] | None = None, epoch: int | None = None) -> None:
        """A settle of this process left issue `number` open (`--on-success nothing`, `review`,
        a failure, a gate): its change says nothing about its pull requests, so it is not
        judged again for it (module notes). `links` and `issue`: what a settle into review
        read of it (its PRs, its object), taken as its judgement (no query) unless a full
        reading ended after the read began (`epoch`: `self.epoch` before it). Called from a
        settle, beside readings: kept until the next reading takes it."""
        with self._lock:
            self._own[number] = (links, issue) if (
                links is not None and issue is not None and epoch == self.epoch) else None

    def _take_own(self, also: dict[int, set[int]]) -> set[int]:
        """The settles since the last reading: remembered (`settled`), and a settle into review
        judged from what it read. Returns the issues whose judgement changed."""
        with self._lock:
            own, self._own = self._own, {}
        self.settled |= own.keys()
        changed: set[int] = set()
        for number, read in sorted(own.items()):
            if read is None or not read[1].get("node_id"):
                continue
            links, issue = read
            self.node_ids[number] = str(issue["node_id"])
            self.review.add(number)  # the settle's PATCH added the review label
            self.reader.asked.add(number)
            changed |= self._judge({number}, {}, also, links)
            blocking = (issue.get("issue_dependencies_summary") or {}).get("blocking")
            self.keys[number] = (int(blocking or 0), True, "open")
        return changed

    # -- the items built ----------------------------------------------------------------------

    def built(self, item: SnapshotItem) -> None:
        """`item` was delivered: index the issues of this repository it names."""
        number = split_id(item.id)[1]
        self.dropped(number)
        named: set[int] = set()
        for ref in [*item.blockers, *item.children]:
            try:
                repo, other = split_id(ref.id)
            except ValueError:
                continue  # a count ("2 open GitHub dependencies"), not an issue
            if same_repo(repo, self.reader.repo):
                named.add(other)
        stacked = self.reader.stacked.get(number)  # --stack: a blocker handed off, not named
        if stacked is not None:
            named.add(stacked)
        self.names[number] = named
        for other in named:
            self.holders.setdefault(other, set()).add(number)

    def dropped(self, number: int) -> None:
        """Item `number` left the set (or is about to be rebuilt)."""
        _unindex(self.holders, number, self.names.pop(number, set()))

    def _body_refs(self, body: Any, number: int) -> set[int]:
        out = set()
        for ref in body_refs(body if isinstance(body, str) else None, self.reader.repo, number):
            repo, other = split_id(ref)
            if same_repo(repo, self.reader.repo):
                out.add(other)
        return out

    # -- one delta ----------------------------------------------------------------------------

    def read(self, fresh: dict[int, dict[str, Any]], marked: set[int],
             leaving: AbstractSet[int] = frozenset()) -> None:
        """Judge again what `fresh` (the delta's issue objects, by number) calls for, and add to
        `fresh` the issues to rebuild because of it (module notes). `leaving`: items this
        process settled, about to leave the set while their issues stay open."""
        reader, changes = self.reader, self.changes
        also: dict[int, set[int]] = {}
        settled = self._take_own(also)
        ask: set[int] = set()
        live = {n for n, i in fresh.items() if "pull_request" not in i
                and i.get("state") == "open" and changes.listed(i)}
        gone = {n for n, i in fresh.items() if "pull_request" not in i} - live
        before = {d: self.body_names.get(d, set()) for d in fresh}  # (`_saw` replaces them)
        newly: set[int] = set()  # what the bodies of the changed issues name now
        for number in sorted(live):
            newly |= self._body_refs(fresh[number].get("body"), number)

        def named(number: int) -> bool:  # by a body, still
            return number in newly or bool(self.bodies.get(number, set()) - fresh.keys())
        changed_prs = {n for n, i in fresh.items() if "pull_request" in i}
        unknown = [n for n in sorted(changed_prs) if n not in self.heads]
        if unknown and reader.pulls is not None:
            self.heads.update(reader.pulls.heads(unknown))
        for number, issue in fresh.items():
            if "pull_request" in issue:
                ask |= self.prs.get(number, set()) | self._mentions(issue.get("body"))
                own = issue_of_branch(self.heads.get(number))
                if own is not None:
                    ask.add(own)
            else:
                self._saw(number, issue)
        recheck = {x for d in fresh.keys() - changed_prs  # what a changed issue named before
                   for x in {*reader.blockers_named(d), *before[d]}
                   if x in reader.asked and not named(x) and set(reader.blocks(x)) <= gone
                   } - fresh.keys()
        for number in sorted(recheck):
            changes.read_directly(fresh, number)
            issue = fresh[number]
            self._saw(number, issue)
            if issue.get("state") == "open" and changes.listed(issue):
                live.add(number)
                newly |= self._body_refs(issue.get("body"), number)  # it is in `fresh` now
            else:
                gone.add(number)
        left = {n for n in gone if n in reader.asked}
        self.settled -= gone
        for number in sorted(live):
            issue = fresh[number]
            held = self._held(number, issue)
            if reader.asks(issue) or named(number):
                if (number not in reader.asked or self.keys.get(number) != self._key(issue)
                        or number in marked or not held):
                    ask.add(number)
                reader.asked.add(number)
            elif number in reader.asked:
                left.add(number)
        back = set()  # blockers of an issue come back (reopened, listed again, new): judged
        for number in sorted(live - changes.open_numbers):  # without it, they do not name it
            back |= self._blockers(reader.unnamed_blockers(fresh[number]))
        for number in sorted((newly | back) - reader.asked):  # named now: asked when open
            listed = number in live or (number in changes.open_numbers and number not in gone)
            if listed and number in self.node_ids:
                reader.asked.add(number)
                ask.add(number)
        ask |= back
        ask |= reader.waiting_for_checks()
        ask = {n for n in ask if n in reader.asked and n in self.node_ids} - left
        was = {n: reader.state_of(n) for n in ask | left}
        changed = self._forget(left, also) | self._judge(ask, fresh, also) | settled
        for number in sorted(changed - set(fresh)):  # itself: when it may leave or come back
            if "done" in (was.get(number), reader.state_of(number)) or number in self.review:
                changes.read_directly(fresh, number)
        # the items naming it: their names, states, hand-off; and those naming an item this
        # process settled that leaves the set while not `open` as a blocker (its PR open: a
        # delta's `left` carries a state, not the PR their references name)
        for number in sorted(changed | {n for n in leaving if reader.state_of(n) != "open"}):
            holders = (self.holders.get(number, set()) | set(reader.blocks(number))
                       | also.get(number, set()))
            for holder in sorted(holders):
                if holder not in fresh and item_id(reader.repo, holder) in changes.in_set:
                    changes.read_directly(fresh, holder)

    def _held(self, number: int, issue: dict[str, Any]) -> bool:
        """Is the change of `issue` our own claim, or our own settle that left it open (its PRs
        are not judged again for it)? The settle's is forgotten once its object is seen."""
        cfg, own = self.reader.config, self.reader.own_claim
        claimed = cfg.has_label(labels_of(issue), cfg.claim_label)
        if number in self.settled and not claimed:
            self.settled.discard(number)
            return True
        return (own is not None and claimed
                and own(item_id(self.reader.repo, number)) is not None)

    def _blockers(self, found: list[dict[str, Any]]) -> set[int]:
        """The numbers of the open issues of this repository among `found` (issue objects)."""
        return {int(b["number"]) for b in found if "number" in b and b.get("state") == "open"
                and same_repo(self.reader.local(repo_of_api_url(b.get("repository_url"))
                                                or self.reader.repo), self.reader.repo)}

    def _mentions(self, body: Any) -> set[int]:
        """The issues of this repository a PR body mentions (a superset of its closing
        references)."""
        out: set[int] = set()
        for m in _MENTION.finditer(str(body or "")):
            repo = m.group(1) or m.group(2)
            if repo is None or same_repo(repo, self.reader.repo):
                out.add(int(m.group(3)))
        return out

    def _forget(self, numbers: set[int], also: dict[int, set[int]]) -> set[int]:
        """Issues no longer asked: what was judged of them is dropped (their holders rebuilt)."""
        for number in numbers:
            also[number] = set(self.reader.blocks(number))
            self.reader.asked.discard(number)
            self.keys.pop(number, None)
            self._unlink(number)
            self.reader.forget_pulls(number)
        return set(numbers)

    def _unlink(self, number: int) -> None:
        for pr in self.reader.pulls_of.get(number, []):
            linked = self.prs.get(pr)
            if linked is not None:
                linked.discard(number)
                if not linked:
                    del self.prs[pr]

    def _judge(self, numbers: set[int], fresh: dict[int, dict[str, Any]],
               also: dict[int, set[int]], links: Links | None = None) -> set[int]:
        """Judge `numbers` again (`links`: from what a settle read); those whose judgement
        changed (`also`: what they blocked)."""
        if not numbers:
            return set()
        old = {n: set(self.reader.blocks(n)) for n in numbers}
        for number in numbers:
            self._unlink(number)
        changed = self.reader.judge([(n, self.node_ids[n]) for n in sorted(numbers)],
                                    self.review & numbers, links)
        for number in numbers:
            for pr in self.reader.pulls_of.get(number, []):
                self.prs.setdefault(pr, set()).add(number)
            if number in fresh:
                self.keys[number] = self._key(fresh[number])
        for number in changed:
            also[number] = old[number]
        return changed
