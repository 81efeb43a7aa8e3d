"""What a GitLab pool (the jr2-gitlab plugin) costs in requests per claim and per unchanged
poll, against the plugin's fake GitLab.

    python bench/gitlab_cost.py [--sizes 100,1000,10000] [--json]

For N open issues (and N/10 "blocks" links, at most 300, seeded): a full reading (what a pool
paid before each claim without deltas: the baseline, measured in the same run), then a pool
claiming and settling `github_cost.CLAIMS` items one after another with deltas, as
`bench/github_cost.py` measures GitHub (the same `per_claim`): the requests of the reading
before each claim (target <= 2 whatever N), of the claim protocol, and of an unchanged poll
(target <= 2). GitLab answers no conditional requests, so every request counts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests"), str(ROOT / "plugins" / "jr2-gitlab" / "tests")]

from fake_gitlab import FakeGitLab  # noqa: E402
from github_cost import CLAIMS, per_claim  # noqa: E402
from gitlab_helpers import make_adapter  # noqa: E402

from jr2_gitlab.tracker import GitLabTracker  # noqa: E402


def adapter(fake: FakeGitLab) -> GitLabTracker:
    return make_adapter(fake.url)


def run(n: int) -> dict[str, Any]:
    fake = FakeGitLab().start()
    try:
        for i in range(n):
            fake.add_issue("g/p", f"issue {i}")
        rnd = random.Random(7)
        links = min(300, n // 10)
        for _ in range(links):
            a, b = sorted(rnd.sample(range(1, n + 1), 2))
            fake.block(("g/p", a), ("g/p", b))
        fake.advance(600)  # the backlog is older than a delta's reach when the pool starts
        full = adapter(fake)
        full.snapshot()
        reading = full.client.stats.requests
        full.close()
        d = per_claim(lambda: adapter(fake), deltas=True)
        return {"n": n, "links": links, "full_reading": reading, "deltas": d,
                "ok": {"per_claim_snapshot": d["snapshot"] <= 2, "unchanged_poll": d["poll"] <= 2}}
    finally:
        fake.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000", help="comma-separated issue counts")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    results = [run(int(n)) for n in args.sizes.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"GitLab, per claim ({CLAIMS} claims and settles in turn; requests): deltas vs a full "
          "reading before each claim")
    print(f"{'N':>6} {'links':>5} | {'snapshot part':>22} | {'claim+settle':>12} | "
          f"{'unchanged poll':>22}")
    for r in results:
        d, f = r["deltas"], r["full_reading"]
        print(f"{r['n']:>6} {r['links']:>5} | {d['snapshot']:>5.1f} vs {f:>6} "
              f"({f / max(d['snapshot'], 0.1):>5.0f}x) | {d['claim']:>12.1f} | "
              f"{d['poll']:>5.1f} vs {f:>6} ({f / max(d['poll'], 0.1):>5.0f}x)")
    bad = [(r["n"], k) for r in results for k, ok in r["ok"].items() if not ok]
    print("targets met (<= 2)" if not bad else f"targets MISSED: {bad}")


if __name__ == "__main__":
    main()
