"""What a Jira Ready-set costs in requests: jr2's snapshot beside a naive per-issue loop.

Seeds the fake Jira (`jr2_sources.testing.fakes`) with N open issues and L "Blocks" links, then
counts the HTTP requests of (1) a pool's fresh `JiraTracker.snapshot()` (serverInfo included;
target: at most ceil(N/100) + 1), (2) a second poll in the same process
(Jira search has no conditional requests: every poll pays its pages again), (3) a fresh
read-only snapshot, as `jr2 ready` makes it (one more search: jr2's marks beside the filter, in
the projects the results name), and (4) a naive loop that searches for the keys and then reads
each issue's links with one GET per issue.

`--exclusive-by touches` (the description in every search, a lock comment on the coordination
issue around each claim of an issue with a `Touches:` line) is measured by
bench/limits_tracker_cost.py, which owns those figures: per full reading, per claim of a
draining pool as here, and per unchanged poll, against the same pool without the option.

    .venv/bin/python bench/jira_cost.py [--issues 1000] [--links 300] [--dc]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "trackers" / "jira")]

from jira_helpers import make_adapter, make_client  # noqa: E402

from jr2_core import Outcome  # noqa: E402
from jr2_sources.capabilities.deltas.reader import ReadyReader  # noqa: E402
from jr2_sources.testing.fakes.jira_server import FakeJira  # noqa: E402

JQL = "project = ENG AND labels = agent"
HOLDER = "bench@host"


def drain(url: str, claims: int, *, deltas: bool) -> dict[str, float]:
    """Claim and settle `claims` items as a pool does, reading the Ready-set before each claim;
    requests per claim (snapshot part, claim part) and per unchanged poll."""
    ad = make_adapter(url, jql=JQL, on_success_transition="Done")
    reader = ReadyReader(ad.snapshot, ad.changes if deltas else None, children_block=True,
                         clock=time.time)
    stats = ad.client.stats
    reader.read()
    reader.read()  # a first delta also looks the account's time zone up (once per process)
    snap = claim = 0
    done = 0
    t0 = time.perf_counter()
    for _ in range(claims):
        before = stats.requests
        view = reader.read()
        snap += stats.requests - before
        item = next(view.ready, None)
        view.ready.close()
        if item is None:
            break
        before = stats.requests
        if ad.claim(item, HOLDER, 600.0):
            ad.settle(item.id, HOLDER, Outcome("done"))
            done += 1
        claim += stats.requests - before
    took = time.perf_counter() - t0
    reader.read()  # what the last settle changed
    before = stats.requests
    t1 = time.perf_counter()
    reader.read()  # nothing changed since
    poll, poll_s = stats.requests - before, time.perf_counter() - t1
    ad.close()
    n = max(done, 1)
    return {"claims": done, "snapshot_per_claim": snap / n, "claim_per_claim": claim / n,
            "seconds_per_claim": took / n, "unchanged_poll": poll, "unchanged_poll_s": poll_s}


def measure(n_issues: int, links: int, dc: bool, claims: int = 10) -> dict[str, object]:
    """Requests for a fresh Ready-set, a later poll, and the naive loop, on a fresh fake."""
    fake = FakeJira(cloud=not dc).start()
    try:
        keys = [fake.add_issue(f"Issue {i}", labels=["agent"]) for i in range(n_issues)]
        rnd = random.Random(7)
        for _ in range(links):
            a, b = rnd.sample(range(len(keys)), 2)
            fake.add_link(keys[min(a, b)], keys[max(a, b)])
        fake.advance(600)  # the backlog is older than a delta's reach when the pools start
        jql = JQL
        ad = make_adapter(fake.url, jql=jql)  # a pool's Ready-set (a snapshot never writes)
        t0 = time.perf_counter()
        snap = ad.snapshot()
        fresh, fresh_s = ad.client.stats.requests, time.perf_counter() - t0
        t0 = time.perf_counter()
        ad.snapshot()
        poll, poll_s = ad.client.stats.requests - fresh, time.perf_counter() - t0
        report = make_adapter(fake.url, jql=jql, read_only=True)
        report.snapshot()  # `jr2 ready`: + 1 search for jr2's marks beside the filter
        report_n = report.client.stats.requests
        naive = make_client(fake.url, read_only=True)
        t0 = time.perf_counter()
        found = naive.search(ad.scope(), fields=("summary",))
        for issue in found:
            naive.get(f"/issue/{issue['key']}", {"fields": "issuelinks,status"})
        naive_n, naive_s = naive.stats.requests, time.perf_counter() - t0
        n = len(snap.items)
        full = drain(fake.url, claims, deltas=False)
        by_deltas = drain(fake.url, claims, deltas=True)
        return {"deployment": "Data Center" if dc else "Cloud", "n": n, "links": links,
                "fresh": fresh, "fresh_s": fresh_s, "target": math.ceil(n / 100) + 1,
                "poll": poll, "poll_s": poll_s, "report": report_n, "naive": naive_n,
                "naive_s": naive_s,
                "ratio_naive_to_fresh": naive_n / fresh,
                "full_reads": full, "deltas": by_deltas,
                "ratio_snapshot_full_to_deltas": full["snapshot_per_claim"]
                / max(by_deltas["snapshot_per_claim"], 1e-9)}
    finally:
        fake.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000", help="comma-separated issue counts")
    ap.add_argument("--links", type=int, default=300)
    ap.add_argument("--claims", type=int, default=10, help="claims per pool run")
    ap.add_argument("--dc", action="store_true", help="Data Center (startAt) instead of Cloud")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    rows = [measure(int(n), args.links, args.dc, args.claims) for n in args.sizes.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        ok = "ok" if r["fresh"] <= r["target"] else "OVER"  # type: ignore[operator]
        print(f"{r['deployment']}: {r['n']} open issues, {r['links']} links")
        print(f"  fresh Ready-set : {r['fresh']:5d} requests ({r['fresh_s']:.2f}s)  "
              f"target <= {r['target']}: {ok}")
        print(f"  each later poll : {r['poll']:5d} requests ({r['poll_s']:.2f}s)  (= ceil(N/100) "
              "search pages; Jira search has no conditional requests)")
        print(f"  jr2 ready       : {r['report']:5d} requests  (+ 1 search for jr2's marks "
              "beside the filter, in the projects the results name)")
        print(f"  naive loop      : {r['naive']:5d} requests ({r['naive_s']:.2f}s)  (search + 1 "
              "GET per issue)")
        f, d = r["full_reads"], r["deltas"]
        assert isinstance(f, dict) and isinstance(d, dict)
        ok = "ok" if d["snapshot_per_claim"] <= 2 and d["unchanged_poll"] <= 2 else "OVER"
        print(f"  a pool, per claim ({d['claims']:.0f} claims), full reads -> deltas "
              f"(target <= 2: {ok}):")
        print(f"    snapshot part : {f['snapshot_per_claim']:7.2f} -> "
              f"{d['snapshot_per_claim']:5.2f} requests  "
              f"({r['ratio_snapshot_full_to_deltas']:.1f}x fewer)")
        print(f"    claim part    : {f['claim_per_claim']:7.2f} -> {d['claim_per_claim']:5.2f}"
              " requests  (claim, mark, settle with a transition: the same protocol)")
        print(f"    time per claim: {f['seconds_per_claim']:7.3f} -> "
              f"{d['seconds_per_claim']:5.3f} s")
        print(f"  unchanged poll  : {f['unchanged_poll']:7.0f} -> {d['unchanged_poll']:5.0f}"
              " requests")


if __name__ == "__main__":
    main()
