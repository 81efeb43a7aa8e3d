"""Pool throughput: N no-op async workers through a Pool over an in-memory Source, against a
bare asyncio loop (one task per item under a semaphore) in the same process.

    python bench/pool_throughput.py [--items 100000] [--caps 1,64] [--json]

Target (issue 2): the Pool reaches at least 0.7 of the bare loop at cap 64.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
from typing import Any

from jr2_core import Context, pool, run, source


async def bare(n: int, cap: int) -> float:
    sem = asyncio.Semaphore(cap)

    async def work(i: int) -> int:
        async with sem:
            return i

    t0 = time.perf_counter()
    await asyncio.gather(*(work(i) for i in range(n)))
    return time.perf_counter() - t0


async def jr2_pool(n: int, cap: int) -> float:
    it = iter(range(n))

    def nxt(active: list[str]) -> Any:
        return next(it, None)

    async def worker(item: int, ctx: Context) -> int:
        return item

    p = pool(worker, id="bench", source=source(nxt), item_id=str, cap=cap)
    t0 = time.perf_counter()
    res = await run(p)
    dt = time.perf_counter() - t0
    assert res.state == "done" and len(res.output.items) == n
    return dt


def best(fn: Any, n: int, cap: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        times.append(asyncio.run(fn(n, cap)))
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--caps", default="1,64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for cap in (int(c) for c in args.caps.split(",")):
        tb = best(bare, args.items, cap, args.repeat)
        tp = best(jr2_pool, args.items, cap, args.repeat)
        rows.append({"cap": cap, "items": args.items, "bare_items_s": args.items / tb,
                     "pool_items_s": args.items / tp, "ratio": tb / tp})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'cap':>5} {'items':>8} {'bare items/s':>14} {'jr2 Pool items/s':>17} {'ratio':>7}")
    for r in rows:
        print(f"{r['cap']:>5} {r['items']:>8} {r['bare_items_s']:>14,.0f} "
              f"{r['pool_items_s']:>17,.0f} {r['ratio']:>7.2f}")
    print("target: ratio >= 0.70 at cap 64")


if __name__ == "__main__":
    main()
