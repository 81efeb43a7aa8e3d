"""Run every benchmark in bench/ and print one side-by-side summary; write bench/results.json.

    python3 tools/dev.py bench            # or: .venv/bin/python bench/run_all.py [--quick]

Each benchmark measures its own baseline in the same process and prints ratios; this runner
only collects their JSON. A benchmark that cannot run here (no Node.js for the peer, a source
not installed) is reported as skipped with its reason, and the rest still run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

BENCHES: list[tuple[str, list[str], list[str]]] = [
    # (name, args, quick args); a name is its script in bench/, or a variant in `SCRIPTS`
    ("pool_throughput", ["--items", "100000"], ["--items", "20000", "--repeat", "1"]),
    ("readyset_scale", ["--sizes", "1000,10000,100000,1000000", "--e2e", "--instructions"],
     ["--sizes", "1000,10000"]),
    ("wake_latency", ["--deliveries", "1000"], ["--deliveries", "200", "--poll-samples", "5"]),
    ("doors_cost", ["--deliveries", "2000"], ["--deliveries", "300", "--rounds", "1"]),
    ("cli_start", [], ["--repeat", "3"]),
    ("work_drain", ["--sizes", "100,1000,10000", "--dag"], ["--sizes", "100,1000"]),
    ("github_cost", ["--big"], []),
    ("github_work_cost", ["--sizes", "100,1000", "--bare-sizes", "100"],
     ["--sizes", "100", "--bare-sizes", ""]),
    ("github_cost_merged", ["--big", "--done-when", "merged"], ["--done-when", "merged"]),
    ("jira_cost", ["--sizes", "100,1000,10000"], ["--sizes", "100,1000"]),
    ("gitlab_cost", ["--sizes", "100,1000,10000"], ["--sizes", "100,1000"]),
    ("linear_cost", ["--sizes", "100,1000"], ["--sizes", "100"]),
    ("redmine_cost", ["--issues", "250"], ["--issues", "100"]),
    ("work_start_reads", ["--sizes", "250,1000"], ["--sizes", "250"]),
]


SCRIPTS = {"github_cost_merged": "github_cost"}
"""Variants of a benchmark run under their own name (their own entry in results.json)."""


def run(name: str, args: list[str]) -> dict[str, object]:
    script = HERE / f"{SCRIPTS.get(name, name)}.py"
    if not script.exists():
        return {"skipped": f"{script.name} is not in this checkout"}
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, str(script), *args, "--json"], capture_output=True,
                         text=True, timeout=1800)
    took = time.perf_counter() - t0
    if res.returncode != 0:
        return {"skipped": (res.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    try:
        return {"seconds": round(took, 1), "result": json.loads(res.stdout)}
    except ValueError:
        return {"seconds": round(took, 1), "text": res.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one round")
    ap.add_argument("--only", help="comma-separated benchmark names")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    out_file = HERE / "results.json"
    results: dict[str, object] = json.loads(out_file.read_text()) if out_file.exists() else {}
    for name, full, quick in BENCHES:
        if only and name not in only:
            continue
        print(f"== {name}", flush=True)
        results[name] = out = run(name, quick if args.quick else full)
        print(json.dumps(out, indent=2)[:4000], flush=True)
    out_file.write_text(json.dumps(results, indent=2) + "\n")  # --only keeps the other results
    print(f"wrote {out_file}")


if __name__ == "__main__":
    main()
