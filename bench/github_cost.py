"""What the GitHub source costs in requests and rate-limit points, against the fake GitHub.

    python bench/github_cost.py [--big] [--json] [--done-when merged]

For N open issues (N counts what the list returns, PRs included; 1 in 20 is a PR) and, at
N >= 1000, 300 dependency edges:

* `ready` (pool): a fresh Ready-set as `jr2 work` takes it (`next` from scratch); target
  <= ceil(N/100) + 2 requests;
* `poll`: the same again with nothing changed; target: every request a 304, 0 points;
* `report`: the full report (`jr2 ready`, naming every blocker); target <= ceil(N/100) + 2 +
  one per blocked issue (+ one per outside body reference: none here);
* `naive`: the loop people write with PyGithub (list, skip PRs, `get_blocked_by()` each);
* `claim+settle`: one claim won and settled done (close), and one claim lost;
* `per claim` (a pool claiming and settling `CLAIMS` items one after another, as `jr2 work`
  reads before each claim): the requests of the reading before each claim (the snapshot part:
  target <= 2 by deltas, whatever N), of the claim protocol (claim + settle, extra by
  ISSUE-NOTES 6) and of an unchanged poll, by deltas against full readings (the baseline,
  `changes` off) in the same run.

Points are primary rate-limit points (a 304 costs none, per GitHub's docs).

`--done-when merged` measures the same pool with merge-aware readiness (`mergedelta.py`):
`per claim` as above (deltas against full readings, which add one GraphQL query per 100 issues
that block something; by deltas also with `--on-success nothing`, each settle leaving its
issue open, and with `--stack`), and what a pull request costs the next reading: one opened on jr2's
branch of an issue that blocks something (first seen: its head asked), then merged (no closing
keyword, so the issue stays open and leaves the Ready-set as landed): REST and GraphQL
requests, against the issues naming it (each read again).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pydantic import SecretStr  # noqa: E402

from jr2_core import Outcome  # noqa: E402
from jr2_sources.readyset import SnapshotItem, compute_ready_set  # noqa: E402
from jr2_sources.registry import SourceEnv  # noqa: E402
from jr2_sources.testing.fakes.github_server import FakeGitHub, seed  # noqa: E402
from jr2_sources.trackers.github.client import GitHubClient  # noqa: E402
from jr2_sources.trackers.github.config import GitHubConfig  # noqa: E402
from jr2_sources.trackers.github.tracker import GitHubTracker  # noqa: E402


def adapter(fake: FakeGitHub, *, detail: bool = False, done_when: str = "closed",
            **options: Any) -> GitHubTracker:
    client = GitHubClient(fake.url, SecretStr("bench"), label="github:o/r", write_spacing=0.0)
    config = GitHubConfig(target="o/r", write_spacing=0.001, detail=detail,
                          done_when=done_when, **options)  # type: ignore[arg-type]
    return GitHubTracker(config, SourceEnv(state_dir=Path("/nonexistent")), client=client)


def measure(a: GitHubTracker) -> tuple[dict[str, Any], int]:
    before = a.client.stats.snapshot()
    rs = compute_ready_set(a.snapshot(), now=datetime.now(UTC))
    after = a.client.stats.snapshot()
    cost = {k: after[k] - before[k] for k in ("requests", "not_modified", "points")}
    return cost, len(rs.blocked)


def naive(fake: FakeGitHub) -> dict[str, int]:
    from github import Auth, Github

    before = len(fake.requests())
    gh = Github(base_url=fake.url, auth=Auth.Token("bench"), retry=None, per_page=100,
                lazy=True, seconds_between_requests=None)  # no throttle: count, not wait
    for issue in gh.get_repo("o/r").get_issues(state="open"):
        if issue.pull_request:  # absent on a plain issue: PyGithub completes it (one GET)
            continue
        list(issue.get_blocked_by())
    n = len(fake.requests()) - before
    return {"requests": n, "points": n}


def claim_cost(fake: FakeGitHub) -> dict[str, int]:
    n = fake.add_issue("o/r", "claim me")
    a, b = adapter(fake), adapter(fake)
    s0 = a.client.stats.snapshot()
    assert a.claim(SnapshotItem(id=f"o/r#{n}"), "bench-a", 600)
    s1 = a.client.stats.snapshot()
    assert not b.claim(SnapshotItem(id=f"o/r#{n}"), "bench-b", 600)
    lost = b.client.stats.snapshot()
    a.finish(f"o/r#{n}", "bench-a", Outcome("done"))
    s2 = a.client.stats.snapshot()
    return {"claim": s1["requests"] - s0["requests"], "settle": s2["requests"] - s1["requests"],
            "writes": s2["writes"] - s0["writes"], "lost_claim": lost["requests"]}


CLAIMS = 5


def per_claim(make: Callable[[], Any], *, deltas: bool) -> dict[str, float]:
    """Requests per claim of a pool that keeps one item running while it claims the next (so
    each reading sees one claim and one settle since the last), `CLAIMS` times (module notes);
    `deltas=False` reads everything before each claim (the baseline). `make()` gives a writing
    `LabelCommentTracker` (GitHub here, GitLab in bench/gitlab_cost.py) whose `reader.changes`
    reads deltas."""
    from jr2_sources.capabilities.deltas.reader import ReadyReader

    a = make()
    if not deltas:
        a.reader.changes = None
    reader = ReadyReader(a.snapshot, a.changes, children_block=True, clock=time.time,
                         resync_every=None)

    def sent() -> int:
        return int(a.client.stats.requests)

    def first_ready(view: Any, but: str | None) -> SnapshotItem:
        try:
            return next(it for it in view.ready if it.id != but)
        finally:
            view.ready.close()

    held = first_ready(reader.read(), None)
    assert a.claim(held, "bench-pool", 600)
    snap = claim = poll = 0
    for _ in range(CLAIMS):
        view = reader.read()
        t1 = sent()
        item = first_ready(view, held.id)
        assert a.claim(item, "bench-pool", 600)
        a.finish(held.id, "bench-pool", Outcome("done"))  # the running one ends
        held = item
        t2 = sent()
        reader.read().ready.close()  # what `next` reads before the next claim: one claim and
        t3 = sent()  # one settle happened since the last reading
        reader.read().ready.close()  # nothing changed since the last reading
        poll += sent() - t3
        snap += t3 - t2
        claim += t2 - t1
    a.close()
    return {"snapshot": snap / CLAIMS, "claim": claim / CLAIMS, "poll": poll / CLAIMS}


def run(n: int, edges: int) -> dict[str, Any]:
    fake = FakeGitHub().start()
    try:
        prs = n // 20
        seed(fake, "o/r", n - prs, deps=edges, prs=prs)
        t0 = time.perf_counter()
        a = adapter(fake)
        ready, blocked = measure(a)
        poll, _ = measure(a)
        report, _ = measure(adapter(fake, detail=True))
        elapsed = time.perf_counter() - t0
        nv = naive(fake)
        pages = math.ceil(n / 100)
        pool = {"deltas": per_claim(lambda: adapter(fake), deltas=True),
                "full": per_claim(lambda: adapter(fake), deltas=False)}
        return {
            "n": n, "edges": edges, "blocked": blocked, "ready": ready, "poll": poll,
            "report": report, "naive": nv, "claim+settle": claim_cost(fake),
            "per_claim": pool,
            "targets": {"ready": pages + 2, "report": pages + 2 + blocked},
            "ok": {"ready": ready["requests"] <= pages + 2,
                   "poll": poll["not_modified"] == poll["requests"] and poll["points"] == 0,
                   "report": report["requests"] <= pages + 2 + blocked,
                   "per_claim_snapshot": pool["deltas"]["snapshot"] <= 2,
                   "unchanged_poll": pool["deltas"]["poll"] <= 2},
            "ratio_naive_to_ready": round(nv["requests"] / max(1, ready["requests"]), 1),
            "seconds": round(elapsed, 2),
        }
    finally:
        fake.stop()


def pr_cost(fake: FakeGitHub) -> dict[str, Any]:
    """Requests of the reading after a PR is opened on jr2's branch of an issue that blocks
    something, and after it merges (module notes)."""
    from jr2_sources.capabilities.deltas.reader import ReadyReader
    from jr2_sources.trackers.github.pulls import item_branch

    a = adapter(fake, done_when="merged")
    reader = ReadyReader(a.snapshot, a.changes, children_block=True, clock=time.time,
                         resync_every=None)
    reader.read().ready.close()
    reader.read().ready.close()
    blocker = max(b[1] for v in fake.deps.values() for b in v)
    naming = sum(1 for v in fake.deps.values() if ("o/r", blocker) in v)

    def read() -> dict[str, int]:
        before = len(fake.requests())
        reader.read().ready.close()
        sent = [r["path"] for r in fake.requests()[before:]]
        return {"rest": sum(p != "/graphql" for p in sent), "graphql": sent.count("/graphql")}

    pr = fake.pulls.open_pr("o/r", item_branch(blocker), "main")
    opened = read()
    fake.pulls.merge("o/r", pr)
    merged = read()
    a.close()
    return {"naming": naming, "opened": opened, "merged": merged}


def run_merged(n: int, edges: int) -> dict[str, Any]:
    fake = FakeGitHub().start()
    try:
        seed(fake, "o/r", n - n // 20, deps=edges, prs=n // 20)
        pool = {"deltas": per_claim(lambda: adapter(fake, done_when="merged"), deltas=True),
                "full": per_claim(lambda: adapter(fake, done_when="merged"), deltas=False),
                "left_open": per_claim(lambda: adapter(fake, done_when="merged",
                                                       on_success="nothing"), deltas=True),
                "stack": per_claim(lambda: adapter(fake, done_when="merged", stack=True),
                                   deltas=True)}
        pr = pr_cost(fake)
        return {"n": n, "edges": edges, "per_claim": pool, "pr": pr,
                "ok": {f"{k}_{part}": pool[k][name] <= 2
                       for k in ("deltas", "left_open", "stack")
                       for part, name in (("per_claim_snapshot", "snapshot"),
                                          ("unchanged_poll", "poll"))}}
    finally:
        fake.stop()


def main_merged(sizes: list[tuple[int, int]], as_json: bool) -> None:
    results = [run_merged(n, e) for n, e in sizes]
    if as_json:
        print(json.dumps(results, indent=2))
        return
    print(f"--done-when merged, per claim ({CLAIMS} claims and settles in turn; requests): "
          "deltas vs full readings before each claim")
    print(f"{'N':>6} | {'snapshot part':>21} | {'claim+settle':>12} | {'unchanged poll':>21} | "
          "PR opened: REST+GraphQL | merged: REST+GraphQL (issues naming it)")
    for r in results:
        d, f, pr = r["per_claim"]["deltas"], r["per_claim"]["full"], r["pr"]
        print(f"{r['n']:>6} | {d['snapshot']:>5.1f} vs {f['snapshot']:>5.1f} "
              f"({f['snapshot'] / max(d['snapshot'], 0.1):>4.0f}x) | {d['claim']:>12.1f} | "
              f"{d['poll']:>5.1f} vs {f['poll']:>5.1f} ({f['poll'] / max(d['poll'], 0.1):>4.0f}x)"
              f" | {pr['opened']['rest']:>10} + {pr['opened']['graphql']} | "
              f"{pr['merged']['rest']:>6} + {pr['merged']['graphql']} ({pr['naming']})")
    print("by deltas, per claim (snapshot part) and unchanged poll, requests: "
          "--on-success nothing (each settle leaves its issue open) | --stack")
    for r in results:
        o, st = r["per_claim"]["left_open"], r["per_claim"]["stack"]
        print(f"{r['n']:>6} | {o['snapshot']:>5.1f} and {o['poll']:>3.1f} | "
              f"{st['snapshot']:>5.1f} and {st['poll']:>3.1f}")
    bad = [(r["n"], k) for r in results for k, ok in r["ok"].items() if not ok]
    print("targets met" if not bad else f"targets MISSED: {bad}")


def main() -> None:
    ap = argparse.ArgumentParser(description="GitHub source request costs (fake GitHub)")
    ap.add_argument("--big", action="store_true", help="also N = 10000")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--done-when", choices=("closed", "merged"), default="closed",
                    help="merged: the merge-aware pool's costs (module notes)")
    args = ap.parse_args()
    sizes = [(100, 30), (1000, 300)] + ([(10000, 300)] if args.big else [])
    if args.done_when == "merged":
        main_merged(sizes, args.json)
        return
    results = [run(n, e) for n, e in sizes]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'N':>6} {'edges':>5} {'blocked':>7} | {'ready req/pts':>13} {'target':>6} | "
          f"{'poll req/304/pts':>16} | {'report req':>10} {'target':>6} | {'naive req':>9} "
          f"{'ratio':>6} | claim settle lost")
    for r in results:
        c = r["claim+settle"]
        print(f"{r['n']:>6} {r['edges']:>5} {r['blocked']:>7} | "
              f"{r['ready']['requests']:>6}/{r['ready']['points']:<6} "
              f"{r['targets']['ready']:>6} | "
              f"{r['poll']['requests']:>6}/{r['poll']['not_modified']}/{r['poll']['points']:<6} | "
              f"{r['report']['requests']:>10} {r['targets']['report']:>6} | "
              f"{r['naive']['requests']:>9} {r['ratio_naive_to_ready']:>5}x | "
              f"{c['claim']:>5} {c['settle']:>6} {c['lost_claim']:>4}")
    print(f"\nper claim ({CLAIMS} claims and settles in turn; requests): deltas vs full "
          "readings before each claim")
    print(f"{'N':>6} | {'snapshot part':>21} | {'claim+settle':>12} | {'unchanged poll':>21}")
    for r in results:
        d, f = r["per_claim"]["deltas"], r["per_claim"]["full"]
        print(f"{r['n']:>6} | {d['snapshot']:>5.1f} vs {f['snapshot']:>5.1f} "
              f"({f['snapshot'] / max(d['snapshot'], 0.1):>4.0f}x) | {d['claim']:>12.1f} | "
              f"{d['poll']:>5.1f} vs {f['poll']:>5.1f} ({f['poll'] / max(d['poll'], 0.1):>4.0f}x)")
    bad = [(r["n"], k) for r in results for k, ok in r["ok"].items() if not ok]
    print("targets met" if not bad else f"targets MISSED: {bad}")


if __name__ == "__main__":
    main()
