"""What a Jira Ready-set costs in requests: jr2's snapshot beside a naive per-issue loop.

Seeds the fake Jira (tests/fakes/jira_server.py) with N open issues and L "Blocks" links, then
counts the HTTP requests of (1) a fresh `JiraAdapter.snapshot()` (serverInfo and the field
lookup included; target: at most ceil(N/100) + 2), (2) a second poll in the same process (Jira
search has no conditional requests: every poll pays its pages again), and (3) a naive loop that
searches for the keys and then reads each issue's links with one GET per issue.

    .venv/bin/python bench/jira_cost.py [--issues 1000] [--links 300] [--dc]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "jira")]

from fakes.jira_server import FakeJira  # noqa: E402
from jira_helpers import make_adapter, make_client  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--issues", type=int, default=1000)
    ap.add_argument("--links", type=int, default=300)
    ap.add_argument("--dc", action="store_true", help="Data Center (startAt) instead of Cloud")
    args = ap.parse_args()
    fake = FakeJira(cloud=not args.dc).start()
    try:
        keys = [fake.add_issue(f"Issue {i}", labels=["agent"]) for i in range(args.issues)]
        rnd = random.Random(7)
        for _ in range(args.links):
            a, b = rnd.sample(range(len(keys)), 2)
            fake.add_link(keys[min(a, b)], keys[max(a, b)])
        jql = "project = ENG AND labels = agent"
        ad = make_adapter(fake.url, jql=jql, read_only=True)
        t0 = time.perf_counter()
        snap = ad.snapshot()
        fresh, fresh_s = ad.client.stats.requests, time.perf_counter() - t0
        t0 = time.perf_counter()
        ad.snapshot()
        poll, poll_s = ad.client.stats.requests - fresh, time.perf_counter() - t0

        naive = make_client(fake.url, read_only=True)
        t0 = time.perf_counter()
        found = naive.search(ad.scope(), fields=("summary",))
        for issue in found:
            naive.get(f"/issue/{issue['key']}", {"fields": "issuelinks,status"})
        naive_n, naive_s = naive.stats.requests, time.perf_counter() - t0

        n = len(snap.items)
        target = math.ceil(n / 100) + 2
        kind = "Data Center" if args.dc else "Cloud"
        print(f"{kind}: {n} open issues, {args.links} links")
        print(f"  fresh Ready-set : {fresh:5d} requests ({fresh_s:.2f}s)  target <= {target}: "
              f"{'ok' if fresh <= target else 'OVER'}")
        print(f"  each later poll : {poll:5d} requests ({poll_s:.2f}s)  (= ceil(N/100) search "
              "pages; no conditional requests)")
        print(f"  naive loop      : {naive_n:5d} requests ({naive_s:.2f}s)  (search + 1 GET per "
              "issue)")
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
