"""What a Linear pool (the jr2-linear plugin) costs in requests, against the plugin's fake Linear
(built from Linear's schema, complexity computed by Linear's rule).

    python bench/linear_cost.py [--sizes 100,1000] [--json]

For N open issues of one team (N/10 `blocks` relations and N/20 sub-issues, seeded): a fresh
Ready-set (a new adapter: the set-up request, then pages of `PAGE` issues with relations,
children and markers inline), its bound ceil(N/P) + 2 and the complexity of the largest page;
an unchanged poll after a full reading (one `Jr2Changed`, target 1, and its complexity); and, as
`bench/github_cost.py` measures GitHub, a pool claiming and settling `github_cost.CLAIMS` items
in turn with deltas: the requests of the reading before each claim, of the claim protocol, and
of an unchanged poll, against a full reading before each claim (the baseline).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "plugins" / "jr2-linear" / "tests")]

from fake_linear import MAX_COMPLEXITY, FakeLinear  # noqa: E402
from github_cost import CLAIMS, per_claim  # noqa: E402
from linear_helpers import make_adapter  # noqa: E402

from jr2_linear import operations as ops  # noqa: E402
from jr2_sources import Delta, compute_ready_set  # noqa: E402


def run(n: int) -> dict[str, Any]:
    fake = FakeLinear().start()
    try:
        ids = [fake.add_issue(f"issue {i}") for i in range(n)]
        rnd = random.Random(7)
        for _ in range(n // 10):
            a, b = sorted(rnd.sample(range(n), 2))
            fake.relate(ids[a], ids[b])
        for _ in range(n // 20):
            a, b = sorted(rnd.sample(range(n), 2))
            fake.set_parent(ids[b], ids[a])
        fake.clock_offset = 600.0  # the backlog is older than a delta's reach
        fresh = make_adapter(fake)
        rs = compute_ready_set(fresh.snapshot(), now=datetime.now(UTC))
        reading = fresh.client.stats.requests
        pages = fresh.client.stats.by_operation.get("Jr2Issues", 0)
        page_points = fake.complexities["Jr2Issues"]
        fresh.changes(full=True)
        before = fresh.client.stats.requests
        assert isinstance(fresh.changes(), Delta)
        poll = fresh.client.stats.requests - before
        poll_points = fake.complexities["Jr2Changed"]
        fresh.close()
        d = per_claim(lambda: make_adapter(fake), deltas=True)
        bound = math.ceil(n / ops.PAGE) + 2
        return {"n": n, "ready": len(rs.ready), "blocked": len(rs.blocked),
                "fresh_ready_set": reading, "pages": pages, "page_size": ops.PAGE,
                "page_complexity": page_points, "bound": bound, "unchanged_poll": poll,
                "poll_complexity": poll_points,
                "deltas": d,
                "ok": {"fresh": reading <= bound, "unchanged_poll": poll == 1,
                       "page_complexity": page_points <= MAX_COMPLEXITY}}
    finally:
        fake.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,1000", help="comma-separated issue counts")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    results = [run(int(n)) for n in args.sizes.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"Linear (requests; P = {ops.PAGE} issues a page, Linear's limit {MAX_COMPLEXITY:,} "
          "points a query)")
    print(f"{'N':>6} | {'fresh Ready-set':>15} {'bound':>5} {'pages':>5} {'points':>6} | "
          f"{'unchanged poll (points)':>23} | per claim ({CLAIMS}): reading, claim+settle, poll")
    for r in results:
        d = r["deltas"]
        print(f"{r['n']:>6} | {r['fresh_ready_set']:>15} {r['bound']:>5} {r['pages']:>5} "
              f"{r['page_complexity']:>6} | {r['unchanged_poll']:>14} "
              f"({r['poll_complexity']:>5}) | {d['snapshot']:.1f}, "
              f"{d['claim']:.1f}, {d['poll']:.1f} (a full reading: {r['fresh_ready_set']})")
    bad = [(r["n"], k) for r in results for k, ok in r["ok"].items() if not ok]
    print("targets met (fresh <= ceil(N/P) + 2, unchanged poll = 1, page <= limit)" if not bad
          else f"targets MISSED: {bad}")


if __name__ == "__main__":
    main()
