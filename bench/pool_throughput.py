"""Pool throughput: N no-op async workers through a Pool over an in-memory Source, against a
bare asyncio loop (one task per item under a semaphore) in the same process.

    python bench/pool_throughput.py [--items 100000] [--caps 1,64] [--no-peer] [--json]

Target (issue 2): the Pool reaches at least 0.7 of the bare loop at cap 64. Where Node.js and
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
    ap.add_argument("--no-peer", action="store_true", help="skip the minionpool peer")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="jr2-peer-") as tmp:
        note = "minionpool skipped (--no-peer)" if args.no_peer else install_peer(Path(tmp))
        for cap in (int(c) for c in args.caps.split(",")):
            tb = best(bare, args.items, cap, args.repeat)
            tp = best(jr2_pool, args.items, cap, args.repeat)
            tm = None if note else minionpool(args.items, cap, args.repeat, Path(tmp))
            rows.append({"cap": cap, "items": args.items, "bare_items_s": args.items / tb,
                         "pool_items_s": args.items / tp, "ratio": tb / tp,
                         "minionpool_items_s": args.items / tm if tm else None})
    if args.json:
        print(json.dumps({"rows": rows, "note": note}, indent=2))
        return
    print(f"{'cap':>5} {'items':>8} {'bare asyncio/s':>15} {'jr2 Pool/s':>11} {'ratio':>6} "
          f"{'minionpool/s':>13} {'jr2/minionpool':>15}")
    for r in rows:
        mp = r["minionpool_items_s"]
        peer = f"{mp:>13,.0f} {r['pool_items_s'] / mp:>15.2f}" if mp else f"{'-':>13} {'-':>15}"
        print(f"{r['cap']:>5} {r['items']:>8} {r['bare_items_s']:>15,.0f} "
              f"{r['pool_items_s']:>11,.0f} {r['ratio']:>6.2f} {peer}")
    if note:
        print(note)
    print("target: jr2 Pool / bare asyncio >= 0.70 at cap 64")


if __name__ == "__main__":
    main()
