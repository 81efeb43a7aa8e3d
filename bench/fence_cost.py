"""What fencing costs a pool per item (`jr2_sources.kit.fence`): the pool side's pipe writes for
one item's lease, command group, one renewal and release, timed over N items, and the command
supervisor's start and its CPU time for them all (it reads every line).

    python bench/fence_cost.py [--items N]
"""

from __future__ import annotations

import argparse
import resource
import time

from jr2_sources.kit.fence import Fence


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=20_000)
    n = ap.parse_args().items
    fence = Fence()
    began = time.perf_counter()
    fence.guard("first", 2**22 + 1)  # no such group: the supervisor only ever signals it
    start = time.perf_counter() - began
    fence.release("first")
    began = time.perf_counter()
    for i in range(n):
        key = str(i)
        fence.lease(key, 600.0, 30.0)
        fence.guard(key, 2**22 + 1)
        fence.lease(key, 600.0, 30.0)  # one renewal
        fence.release(key)
        fence.drop(key)
    per_item = (time.perf_counter() - began) / n
    fence.close()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"supervisor start (first command): {start * 1e3:.1f} ms")
    print(f"pool side per item: {per_item * 1e6:.1f} us over {n:,} items")
    print(f"supervisor CPU per item: {(kids.ru_utime + kids.ru_stime) / n * 1e6:.1f} us")


if __name__ == "__main__":
    main()
