"""Pool throughput: N no-op async workers through a Pool over an in-memory Source, against three
asyncio baselines in the same process: `bare` (every task created up front, under a semaphore),
`slot` (a task created when a slot frees: the Pool's own shape with nothing else) and `queue`
(`cap` long-lived workers pulling from a queue).

    python bench/pool_throughput.py [--items 100000] [--caps 1,64] [--no-peer] [--cpu] [--json]

Targets: the Pool reaches at least 0.7 of the bare loop (issue 2) and 0.8 of `slot` (issue 18,
ISSUE-NOTES 19) at cap 64. Where Node.js and
npm are installed, the peer `minionpool` (npm) runs the same N no-op tasks at the same
concurrency, installed into a temporary folder; without Node it is skipped with a note.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from jr2_core import Context, pool, run, source

# Wall time by default; `--cpu` times with the process's CPU time instead, which a busy shared
# machine disturbs far less (every contender here is one single-threaded event loop).
CLOCK = [time.perf_counter]


async def bare(n: int, cap: int) -> float:
    sem = asyncio.Semaphore(cap)

    async def work(i: int) -> int:
        async with sem:
            return i

    t0 = CLOCK[0]()
    await asyncio.gather(*(work(i) for i in range(n)))
    return CLOCK[0]() - t0


async def slot(n: int, cap: int) -> float:
    """A task created when a slot frees: one loop takes a free slot (a semaphore), creates the
    item's task, and the task's end frees the slot (the Pool's shape, with nothing else)."""
    sem = asyncio.Semaphore(cap)
    tasks: set[asyncio.Task[int]] = set()

    async def work(i: int) -> int:
        return i

    def finished(task: asyncio.Task[int]) -> None:
        tasks.discard(task)
        sem.release()

    t0 = CLOCK[0]()
    for i in range(n):
        await sem.acquire()
        task = asyncio.create_task(work(i))
        tasks.add(task)
        task.add_done_callback(finished)
    while tasks:
        await asyncio.gather(*tasks)
    return CLOCK[0]() - t0


async def queue(n: int, cap: int) -> float:
    """`cap` long-lived workers pulling items from a queue."""
    q: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        q.put_nowait(i)

    async def worker() -> None:
        while not q.empty():
            q.get_nowait()
            await asyncio.sleep(0)  # a worker's task ends on a later turn, as a Pool worker's

    t0 = CLOCK[0]()
    await asyncio.gather(*(worker() for _ in range(cap)))
    return CLOCK[0]() - t0


async def jr2_pool(n: int, cap: int) -> float:
    it = iter(range(n))

    def nxt(active: list[str]) -> Any:
        return next(it, None)

    async def worker(item: int, ctx: Context) -> int:
        return item

    p = pool(worker, id="bench", source=source(nxt), item_id=str, cap=cap)
    t0 = CLOCK[0]()
    res = await run(p)
    dt = CLOCK[0]() - t0
    assert res.state == "done" and len(res.output.items) == n
    return dt


def minionpool(n: int, cap: int, repeat: int, folder: Path) -> float | None:
    """Best-of time of the npm peer, or None when it cannot run here."""
    script = folder / "minionpool_peer.js"  # beside its node_modules, so require() finds it
    shutil.copy(Path(__file__).with_name("minionpool_peer.js"), script)
    times = []
    for _ in range(repeat):
        res = subprocess.run(["node", str(script), str(n), str(cap)], cwd=folder,
                             capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            return None
        times.append(json.loads(res.stdout.strip().splitlines()[-1])["seconds"])
    return min(times)


def install_peer(folder: Path) -> str | None:
    """Install minionpool into `folder`; return a note when that is not possible."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "minionpool skipped: Node.js/npm not installed"
    res = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "minionpool"],
                         cwd=folder, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        return f"minionpool skipped: npm install failed ({res.stderr.strip()[:80]})"
    return None


def best(fns: list[Any], n: int, cap: int, repeat: int) -> list[float]:
    """Best-of-`repeat` time of each of `fns`, taken round-robin so that a busy spell on the
    shared machine hits them all alike."""
    times = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            gc.collect()
            times[k] = min(times[k], asyncio.run(fn(n, cap)))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--caps", default="1,64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true", help="skip the minionpool peer")
    ap.add_argument("--cpu", action="store_true", help="time with CPU time, not wall time")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    rows = []
    with tempfile.TemporaryDirectory(prefix="jr2-peer-") as tmp:
        note = "minionpool skipped (--no-peer)" if args.no_peer else install_peer(Path(tmp))
        for cap in (int(c) for c in args.caps.split(",")):
            tb, ts, tq, tp = best([bare, slot, queue, jr2_pool], args.items, cap, args.repeat)
            tm = None if note else minionpool(args.items, cap, args.repeat, Path(tmp))
            rows.append({"cap": cap, "items": args.items, "bare_items_s": args.items / tb,
                         "slot_items_s": args.items / ts, "queue_items_s": args.items / tq,
                         "pool_items_s": args.items / tp, "ratio": tb / tp,
                         "ratio_slot": ts / tp, "ratio_queue": tq / tp,
                         "minionpool_items_s": args.items / tm if tm else None})
    if args.json:
        print(json.dumps({"rows": rows, "note": note}, indent=2))
        return
    print(f"{'cap':>5} {'items':>8} {'bare/s':>9} {'slot/s':>9} {'queue/s':>9} "
          f"{'jr2 Pool/s':>11} {'/bare':>6} {'/slot':>6} {'/queue':>6} "
          f"{'minionpool/s':>13} {'jr2/minionpool':>15}")
    for r in rows:
        mp = r["minionpool_items_s"]
        peer = f"{mp:>13,.0f} {r['pool_items_s'] / mp:>15.2f}" if mp else f"{'-':>13} {'-':>15}"
        print(f"{r['cap']:>5} {r['items']:>8} {r['bare_items_s']:>9,.0f} "
              f"{r['slot_items_s']:>9,.0f} {r['queue_items_s']:>9,.0f} "
              f"{r['pool_items_s']:>11,.0f} {r['ratio']:>6.2f} {r['ratio_slot']:>6.2f} "
              f"{r['ratio_queue']:>6.2f} {peer}")
    if note:
        print(note)
    print("targets at cap 64: jr2 Pool / bare asyncio >= 0.70; / slot >= 0.80")


if __name__ == "__main__":
    main()
