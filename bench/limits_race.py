"""K pools under `--global-cap` over one backlog on the fake GitHub: what one worked issue
costs in claim and lock comments (each one a notification to the watchers of its issue), and
whether a pool posts a lock comment while the listing it just read shows the cap full.

Real `jr2 work` processes (K of them, `--cap 2` each, each with its own token) against one
fake GitHub on 127.0.0.1; workers sleep 0.3-0.5 s. Measured from outside
(`tests/reliability/limits_race.py`): the worker journal, a sampler of the fake's state every
20 ms, and the fake's request log.

    .venv/bin/python bench/limits_race.py [--pools 8] [--issues 40] [--cap 2] [--poll 0.2 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "reliability")]

from limits_race import race  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pools", type=int, default=8)
    ap.add_argument("--issues", type=int, default=40)
    ap.add_argument("--cap", type=int, default=2)
    ap.add_argument("--poll", type=float, nargs="+", default=[0.2, 2.0])
    args = ap.parse_args()
    print(f"{args.pools} pools (--cap 2 each), --global-cap {args.cap}, {args.issues} issues, "
          "fake GitHub")
    print(f"{'poll':>5} | {'secs':>5} | {'exit':>4} | {'done once':>9} | {'held max':>8} | "
          f"{'locks max':>9} | {'claims/item':>11} | {'locks/item':>10} | "
          f"{'lock deletes':>12} | {'listings':>8} | posted when full")
    for poll in args.poll:
        with tempfile.TemporaryDirectory() as tmp:
            f = race(Path(tmp), args.pools, args.issues, args.cap, poll=poll)
        codes = ",".join(sorted({str(c) for c in f.exit_codes}))
        print(f"{poll:>5g} | {f.seconds:>5.0f} | {codes:>4} | "
              f"{f'{f.worked}/{f.issues}' if f.once else 'NO':>9} | "
              f"{f.most_held:>8} | {f.most_locks:>9} | {f.claims_per_item:>11.2f} | "
              f"{f.locks_per_item:>10.2f} | {f.lock_deletes:>12} | {f.control_listings:>8} | "
              f"{f.posted_when_full}")


if __name__ == "__main__":
    main()
