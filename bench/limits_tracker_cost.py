"""What two limit features cost on the trackers, each against its own baseline in the same run.

1. `--exclusive-by touches` on Jira: the searches then also read each issue's `description`.
   Seeds the fake Jira with N open issues whose descriptions are `--chars` characters long on
   average (one in four with a `Touches:` line), and counts the requests and the response bytes
   of a full reading (`JiraTracker.snapshot()`) and of an unchanged delta poll
   (`JiraTracker.changes()` after a full one), without the option and with it. Then one pool
   drains `--claims` issues as `jr2 work` does (a delta reading before each claim, the claim,
   a delta reading while the worker runs, the settle with the Done transition), on a fresh,
   identically seeded fake for each side: requests and bytes per claim, split into the
   readings and the claim + settle (for the issues with a `Touches:` line and the others), and
   of the unchanged poll after the last claim, without the option (plain claims) and with it
   (descriptions in every search; a lock comment on the coordination issue around the claim
   of an issue that names a group, `capabilities/limits/comment_locks.LockedClaims`). This bench
   owns the touches figures; bench/jira_cost.py measures Jira without limits.
2. The clean-up of lock comments left by killed pools (`capabilities/limits/comment_locks.py`):
   D dead locks on the coordination issue of the fake GitHub; one pool then claims items one after
   the other (`CommentLocks.acquire` + `release`): how many requests each acquire costs (the
   listing's pages grow with the dead locks) and after how many acquires the thread is clean,
   against the same acquires on a clean thread.

    .venv/bin/python bench/limits_tracker_cost.py [--issues 1000] [--chars 600] [--dead 50]
                                                   [--claims 20]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "trackers" / "jira")]

from jira_helpers import make_adapter  # noqa: E402

from jr2_core import Outcome  # noqa: E402
from jr2_sources.capabilities.deltas.reader import ReadyReader  # noqa: E402
from jr2_sources.capabilities.limits.comment_locks import (  # noqa: E402
    SWEEP,
    CommentLocks,
    LockedClaims,
)
from jr2_sources.capabilities.limits.policy import Limits  # noqa: E402
from jr2_sources.testing.fakes.github_server import FakeGitHub  # noqa: E402
from jr2_sources.testing.fakes.jira_server import FakeJira  # noqa: E402

JQL = "project = ENG AND labels = agent"
WORDS = ["the", "index", "migration", "cache", "queue", "api", "schema", "worker", "retry",
         "backfill"]


def _text(rnd: random.Random, chars: int, i: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rnd.choice(WORDS))
    body = " ".join(words)
    return f"{body}\n\nTouches: {rnd.choice(WORDS)}" if i % 4 == 0 else body


def _count(ad: Any) -> dict[str, int]:
    """Requests and response bytes of `ad`'s client from now on (a response hook)."""
    seen = {"requests": 0, "bytes": 0}

    def hook(resp: Any, *args: Any, **kwargs: Any) -> None:
        seen["requests"] += 1
        seen["bytes"] += len(resp.content or b"")

    ad.client._session.hooks.setdefault("response", []).append(hook)
    return seen


def jira(n: int, chars: int, dc: bool) -> None:
    fake = FakeJira(cloud=not dc).start()
    try:
        rnd = random.Random(7)
        for i in range(n):
            fake.add_issue(f"Item {i}", labels=["agent"], description=_text(rnd, chars, i))
        fake.advance(600)  # the issues were created well before the readings (past the overlap)
        print(f"Jira {'Data Center' if dc else 'Cloud'}, {n} issues, descriptions of about "
              f"{chars} characters")
        print(f"{'reading':<22} | {'option':<8} | {'requests':>8} | {'bytes':>10} | ratio")
        rows: dict[tuple[str, bool], dict[str, int]] = {}
        for touches in (False, True):
            ad = make_adapter(fake.url, jql=JQL)
            if touches:
                Limits.parse(None, ["touches"]).prepare(ad)
            ad.client.server_info()
            seen = _count(ad)
            ad.changes(full=True)
            rows["full reading", touches] = dict(seen)
            seen.update(requests=0, bytes=0)
            ad.changes()
            rows["unchanged delta poll", touches] = dict(seen)
        for what in ("full reading", "unchanged delta poll"):
            base = rows[what, False]["bytes"] or 1
            for touches in (False, True):
                r = rows[what, touches]
                print(f"{what:<22} | {'touches' if touches else 'off':<8} | "
                      f"{r['requests']:>8} | {r['bytes']:>10,} | {r['bytes'] / base:.2f}x")
    finally:
        fake.stop()


def _seed(fake: FakeJira, n: int, chars: int) -> tuple[str, set[str]]:
    """`n` open issues (descriptions as `_text`) and the coordination issue outside the JQL;
    returns it and the keys of the issues with a `Touches:` line."""
    rnd = random.Random(7)
    lined = set()
    for i in range(n):
        text = _text(rnd, chars, i)
        key = fake.add_issue(f"Item {i}", labels=["agent"], description=text)
        if "Touches:" in text:
            lined.add(key)
    control = fake.add_issue("jr2 coordination")
    fake.advance(600)  # the issues were created well before the readings (past the overlap)
    return control, lined


def _drain(url: str, control: str, lined: set[str], claims: int,
           touches: bool) -> dict[str, float]:
    """One pool drains `claims` issues as `jr2 work` does; requests and bytes per claim (the
    readings before it and while its worker runs; the claim and the settle) and of the
    unchanged poll after the last one."""
    ad = make_adapter(url, jql=JQL, on_success_transition="Done")
    limits = Limits.parse(None, ["touches"] if touches else [])
    tracker: Any = ad
    snapshot: Any = ad.snapshot
    changes: Any = ad.changes
    if touches:
        limits.prepare(ad)
        tracker = LockedClaims(ad, control)
        tracker.check()
        snapshot, changes = tracker.reading(snapshot, changes)
        snapshot, changes = limits.tagging(snapshot, changes)
    reader = ReadyReader(snapshot, changes, children_block=True, clock=time.time,
                         limits=limits.active)
    seen = _count(ad)
    reader.read()
    reader.read()  # a first delta also looks the account's time zone up (once per process)
    got = {"read_requests": 0.0, "read_bytes": 0.0, "claim_requests": 0.0, "claim_bytes": 0.0}
    by_line: dict[bool, list[float]] = {True: [0, 0, 0], False: [0, 0, 0]}  # n, requests, bytes
    done = 0
    for _ in range(claims):
        seen.update(requests=0, bytes=0)
        view = reader.read()
        item = next(view.ready, None)
        view.ready.close()
        got["read_requests"] += seen["requests"]
        got["read_bytes"] += seen["bytes"]
        if item is None:
            break
        seen.update(requests=0, bytes=0)
        won = tracker.claim(item, "bench@host", 600.0)
        spent = [seen["requests"], seen["bytes"]]
        seen.update(requests=0, bytes=0)
        reader.read()  # a poll while the worker runs: the claimed issue changed (its label)
        got["read_requests"] += seen["requests"]
        got["read_bytes"] += seen["bytes"]
        seen.update(requests=0, bytes=0)
        if won:
            tracker.settle(item.id, "bench@host", Outcome("done"))
            done += 1
        spent = [spent[0] + seen["requests"], spent[1] + seen["bytes"]]
        got["claim_requests"] += spent[0]
        got["claim_bytes"] += spent[1]
        row = by_line[item.id in lined]
        row[0], row[1], row[2] = row[0] + 1, row[1] + spent[0], row[2] + spent[1]
    reader.read()  # what the last settle changed
    seen.update(requests=0, bytes=0)
    reader.read()  # nothing changed since
    out = {k: v / max(done, 1) for k, v in got.items()}
    out.update(claims=done, poll_requests=seen["requests"], poll_bytes=seen["bytes"])
    for flag, name in ((True, "lined"), (False, "plain")):
        n, reqs, size = by_line[flag]
        out.update({f"{name}_requests": reqs / max(n, 1), f"{name}_bytes": size / max(n, 1)})
    ad.close()
    return out


def jira_claims(n: int, chars: int, dc: bool, claims: int) -> None:
    """Per claim and per unchanged poll of a draining pool, touches off against on (a fresh,
    identically seeded fake for each)."""
    rows = {}
    for touches in (False, True):
        fake = FakeJira(cloud=not dc).start()
        try:
            control, lined = _seed(fake, n, chars)
            rows[touches] = _drain(fake.url, control, lined, claims, touches)
        finally:
            fake.stop()
    print(f"\nJira {'Data Center' if dc else 'Cloud'}, {n} issues: one pool drains "
          f"{rows[False]['claims']:.0f} of them (per claim; the poll after the last claim)")
    print(f"{'per claim':<22} | {'option':<8} | {'requests':>8} | {'bytes':>10} | ratio")
    for what, key in (("2 delta readings", "read"), ("claim + settle", "claim"),
                      ("  with a Touches line", "lined"), ("  without one", "plain"),
                      ("unchanged delta poll", "poll")):
        base = rows[False][f"{key}_bytes"] or 1
        for touches in (False, True):
            r = rows[touches]
            print(f"{what:<22} | {'touches' if touches else 'off':<8} | "
                  f"{r[f'{key}_requests']:>8.1f} | {r[f'{key}_bytes']:>10,.0f} | "
                  f"{r[f'{key}_bytes'] / base:.2f}x")


def cleanup(dead: int, claims: int) -> None:
    sys.path[:0] = [str(ROOT / "tests" / "trackers" / "github")]
    from gh_helpers import make_adapter as github_adapter

    print(f"\nGitHub coordination issue with {dead} dead locks (SWEEP = {SWEEP} per acquire)")
    print(f"{'thread':<8} | {'acquire':>7} | {'requests':>8} | {'deleted':>7} | dead left")
    for with_dead in (False, True):
        gh = FakeGitHub().start()
        try:
            gh.next_number.setdefault("o/r", 1)
            control = f"o/r#{gh.add_issue('o/r', 'jr2 coordination')}"
            ad = github_adapter(gh.url)
            killed = CommentLocks(ad, control, global_cap=None)
            for i in range(dead if with_dead else 0):
                killed.acquire(f"o/r#{1000 + i}", (), "killed", 1)
            gh.advance(10)
            pool = CommentLocks(ad, control, global_cap=None)
            for k in range(claims):
                gh.clear_log()
                lock = pool.acquire(f"o/r#{k + 2}", ("db",), "pool", 60)
                assert lock is not None
                reqs = len(gh.requests())
                deleted = len(gh.requests("DELETE"))
                pool.release(lock)
                left = sum(1 for c in gh.comments_of("o/r", int(control.split("#")[1]))
                           if c.body.startswith("<!-- jr2:lock"))
                if k < 3 or k == claims - 1 or (with_dead and left == 0 and deleted):
                    print(f"{'dead' if with_dead else 'clean':<8} | {k + 1:>7} | {reqs:>8} | "
                          f"{deleted:>7} | {left}")
        finally:
            gh.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--issues", type=int, default=1000)
    ap.add_argument("--chars", type=int, default=600)
    ap.add_argument("--dead", type=int, default=50)
    ap.add_argument("--claims", type=int, default=20)
    args = ap.parse_args()
    jira(args.issues, args.chars, dc=False)
    jira(args.issues, args.chars, dc=True)
    jira_claims(args.issues, args.chars, False, args.claims)
    jira_claims(args.issues, args.chars, True, args.claims)
    cleanup(args.dead, args.claims)


if __name__ == "__main__":
    main()
