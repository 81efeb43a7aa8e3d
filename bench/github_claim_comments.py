"""Claim comments (and so notifications) per worked issue when K pools race over one repository.

    python bench/github_claim_comments.py [--k 2 4 8] [--items 32] [--seconds 1] [--json]

Every claim attempt posts one comment, and GitHub notifies the issue's subscribers of it even
when the loser deletes it a moment later; so the figure that matters to people is comments
created per worked issue (1.0 = no lost claim). K real `jr2 work` processes (`--cap 2`, writes
spaced as in the race tests) drain N ready issues of the fake GitHub with workers that take
`--seconds` each, over `--deps` random blocker edges (default N/2, as the race tests), once per
seed; the figures come from the fake's request log, summed over the seeds. Also reported: writes per
worked issue (every POST/PATCH/DELETE) and the run's wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "reliability")]

from rel_trackers import pools, tracker  # noqa: E402


def race(k: int, items: int, seconds: float, deps: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, tracker("github") as tr, \
            pools(Path(tmp), tr) as ps:
        tr.seed(items, seed, deps=deps)
        start = time.monotonic()
        procs = [ps.start("--cap", "2", durations=f"{seconds}:{seconds}") for _ in range(k)]
        codes = [ps.wait(p, timeout=600)[0] for p in procs]
        wall = time.monotonic() - start
        log = tr.fake.requests()
        done = sum(1 for i in tr.items if tr.is_done(i))
    posted = sum(1 for e in log if e["method"] == "POST" and e["path"].endswith("/comments")
                 and e["status"] == 201)
    writes = sum(1 for e in log if e["method"] != "GET" and e["status"] < 300)
    return {"k": k, "items": items, "worked": done, "exit_codes": codes,
            "comments_per_issue": round(posted / max(done, 1), 3),
            "lost_claims": posted - done, "writes_per_issue": round(writes / max(done, 1), 2),
            "wall_s": round(wall, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--items", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--deps", type=int, default=None, help="blocker edges (default: items/2)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    deps = args.items // 2 if args.deps is None else args.deps
    rows = []
    for k in args.k:
        runs = [race(k, args.items, args.seconds, deps, s) for s in args.seeds]
        worked = sum(r["worked"] for r in runs)
        lost = sum(r["lost_claims"] for r in runs)
        rows.append({"k": k, "items": args.items * len(runs), "worked": worked,
                     "exit_codes": [c for r in runs for c in r["exit_codes"]],
                     "lost_claims": lost,
                     "comments_per_issue": round((worked + lost) / max(worked, 1), 3),
                     "writes_per_issue": round(sum(r["writes_per_issue"] * r["worked"]
                                                   for r in runs) / max(worked, 1), 2),
                     "wall_s": round(sum(r["wall_s"] for r in runs), 1)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        print(f"K={r['k']}: {r['worked']}/{r['items']} worked, {r['comments_per_issue']} "
              f"comments per issue ({r['lost_claims']} lost claims), "
              f"{r['writes_per_issue']} writes per issue, {r['wall_s']} s")


if __name__ == "__main__":
    main()
