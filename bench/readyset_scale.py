"""Ready-set scale: `compute_ready_set` on synthetic backlogs of growing size, in one process.

    python bench/readyset_scale.py [--sizes 10000,100000] [--seed 1] [--e2e] [--instructions]

Each snapshot is a DAG: item i needs 3 items, each ref a done item with probability 0.3, else an
earlier open item; 3 cycles of 2 to 5 items are planted on top. The table gives the best of 3
runs, the peak memory of one run (tracemalloc), and each size's time against the first size,
measured in the same run. `--e2e` also writes each backlog as TOML (`write_backlog`) and times
`python -m jr2_core.cli ready local:PATH --json` on it.

The baseline, measured in the same run, is the least any Ready-set must do: index the items by
id and look every blocker ref up once. Its time per item grows with size too (random lookups
leave the CPU caches), so it shows how much of the time's growth is the machine's.

`--instructions` also counts the instructions one computation executes, under valgrind
(cachegrind, cache simulation off, PYTHONHASHSEED fixed): a snapshot-only run is subtracted from
a snapshot-and-compute run (sizes up to `--instructions-max`, 100k by default). The count is the
same whatever else the machine does and whatever its caches, so its growth per 10x is the growth
of the work itself; the growth of the time adds the machine's memory hierarchy on top. Without
valgrind it is skipped with a note.

Targets: 100k items in < 1 s; growth within x12 per x10 items.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jr2_sources.readyset import BlockerRef, Snapshot, SnapshotItem, compute_ready_set

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DONE_SHARE = 0.3  # the share of blocker refs that point at a done item
BLOCKERS = 3
CYCLES = 3


@dataclass(slots=True)
class Planned:
    """One item of a synthetic backlog."""

    id: str
    needs: list[str]
    priority: int | None
    done: bool = False


def plan(n: int, seed: int) -> list[Planned]:
    """n open items (T-1..T-n) and n // 3 done ones (D-1..), the same for the same seed."""
    rng = random.Random(seed)
    done = [Planned(f"D-{k + 1}", [], None, done=True) for k in range(max(1, n // 3))]
    items: list[Planned] = []
    for i in range(n):
        needs: dict[str, None] = {}  # ordered, deduplicated
        for _ in range(BLOCKERS):
            if i == 0 or rng.random() < DONE_SHARE:
                needs[rng.choice(done).id] = None
            else:
                needs[f"T-{rng.randrange(i) + 1}"] = None
        items.append(Planned(f"T-{i + 1}", list(needs), rng.choice([None, 1, 2, 3])))
    for _ in range(CYCLES if n >= 5 else 0):
        members = sorted(rng.sample(range(n), rng.randint(2, 5)))
        for a, b in zip(members, [*members[1:], members[0]], strict=True):
            if items[b].id not in items[a].needs:
                items[a].needs.append(items[b].id)
    return items + done


def snapshot(n: int, seed: int) -> Snapshot:
    """The open items of `plan(n, seed)` as a Snapshot (done refs carry state `done`)."""
    planned = plan(n, seed)
    done = {p.id for p in planned if p.done}
    items = [
        SnapshotItem(
            p.id,
            f"Item {p.id}",
            priority=p.priority,
            blockers=[BlockerRef(x, "done" if x in done else "open") for x in p.needs],
        )
        for p in planned
        if not p.done
    ]
    return Snapshot(f"bench:{n}", items, done_count=len(done))


def write_backlog(path: Path | str, n: int, seed: int) -> None:
    """Write `plan(n, seed)` in the local source's backlog format (TOML `[[items]]`)."""
    lines: list[str] = []
    for p in plan(n, seed):
        lines += ["[[items]]", f"id = {json.dumps(p.id)}", f'title = "Item {p.id}"']
        if p.needs:
            lines.append(f"needs = [{', '.join(json.dumps(x) for x in p.needs)}]")
        if p.priority is not None:
            lines.append(f"priority = {p.priority}")
        lines += [f'status = "{"done" if p.done else "open"}"', ""]
    Path(path).write_text("\n".join(lines), encoding="utf-8")


def best_of(snap: Snapshot, runs: int) -> float:
    """The fastest of `runs` computations, in seconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        compute_ready_set(snap, now=NOW)
        times.append(time.perf_counter() - t0)
    return min(times)


def baseline(snap: Snapshot, runs: int) -> float:
    """The fastest of `runs` ref passes (index by id, look each blocker up once), GC paused as
    `compute_ready_set` pauses it."""
    times = []
    gc.disable()
    try:
        for _ in range(runs):
            t0 = time.perf_counter()
            position = {it.id: i for i, it in enumerate(snap.items)}
            found = 0
            for it in snap.items:
                for b in it.blockers:
                    if position.get(b.id) is not None:
                        found += 1
            times.append(time.perf_counter() - t0)
    finally:
        gc.enable()
    return min(times)


def peak_memory(snap: Snapshot) -> int:
    """Peak bytes allocated by one computation (the snapshot itself excluded)."""
    tracemalloc.start()
    try:
        compute_ready_set(snap, now=NOW)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def e2e(n: int, seed: int, module: str, workdir: Path) -> tuple[float | None, str]:
    """Time the CLI on a written backlog: (seconds, note) or (None, why it is unavailable)."""
    path = workdir / f"backlog-{n}.toml"
    write_backlog(path, n, seed)
    env = {**os.environ, "JR2_STATE_DIR": str(workdir / ".jr2")}
    cmd = [sys.executable, "-m", module, "ready", f"local:{path}", "--json"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=workdir, env=env, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"e2e: unavailable ({type(exc).__name__}: {exc})"
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
        return None, f"e2e: unavailable ({first})"
    try:
        counts = json.loads(proc.stdout)["counts"]
    except (ValueError, KeyError, TypeError):
        return None, f"e2e: unavailable (no JSON report on stdout from -m {module})"
    expected = compute_ready_set(snapshot(n, seed), now=NOW).counts
    same = {k: counts.get(k) for k in ("ready", "blocked", "claimed")} == {
        k: expected[k] for k in ("ready", "blocked", "claimed")
    }
    return elapsed, "counts match" if same else f"counts differ: {counts} vs {expected}"


def count_instructions(n: int, seed: int) -> tuple[int | None, str]:
    """Instructions executed by one `compute_ready_set` on `snapshot(n, seed)`, counted by
    valgrind: (count, "") or (None, why it is unavailable)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None, "valgrind is not installed"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    counts: list[int] = []
    for mode in ("build", "compute"):
        cmd = [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, __file__, "--count-child", f"{n}:{seed}:{mode}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False,
                              timeout=3600)
        found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
        if proc.returncode != 0 or found is None:
            last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            return None, f"valgrind failed: {last[:160]}"
        counts.append(int(found.group(1).replace(",", "")))
    return counts[1] - counts[0], ""


def count_child(spec: str) -> None:
    """The process valgrind counts: build the snapshot, and compute once when asked."""
    n, seed, mode = spec.split(":")
    snap = snapshot(int(n), int(seed))
    if mode == "compute":
        compute_ready_set(snap, now=NOW)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated item counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per size (best is kept)")
    parser.add_argument("--e2e", action="store_true", help="also time the CLI on a TOML backlog")
    parser.add_argument("--e2e-module", default="jr2_core", help="module run by --e2e")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per computation under valgrind (slow: "
                             "about a minute per 100k items)")
    parser.add_argument("--instructions-max", type=int, default=100_000,
                        help="count instructions only for sizes up to this (default 100000)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--count-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_child:
        count_child(args.count_child)
        return
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    rows: list[dict[str, object]] = []
    if args.json:
        import contextlib
        import io

        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            run(args, sizes, rows)
        print(json.dumps(rows, indent=2))
        return
    run(args, sizes, rows)


def run(args: argparse.Namespace, sizes: list[int], rows: list[dict[str, object]]) -> None:
    """Measure each size, print the table, and append one JSON-ready row per size."""
    header = (
        f"{'items':>10}  {'best of ' + str(args.runs):>11}  {'per item':>9}  {'peak mem':>9}  "
        f"{'vs first size':>15}  {'baseline':>9}  {'x baseline':>10}  {'ready/blocked/cycles':>20}"
    )
    print(header + ("  e2e (CLI, wall)" if args.e2e else "")
          + ("  instructions" if args.instructions else ""))
    results: dict[int, tuple[float, float]] = {}
    counted: dict[int, int] = {}
    with tempfile.TemporaryDirectory(prefix="jr2-bench-") as tmp:
        for n in sizes:
            snap = snapshot(n, args.seed)
            seconds = best_of(snap, args.runs)
            base = baseline(snap, args.runs)
            peak = peak_memory(snap)
            rs = compute_ready_set(snap, now=NOW)
            results[n] = (seconds, base)
            n0, (t0, _) = next(iter(results.items()))
            ratio = f"x{seconds / t0:.2f} for x{n / n0:g}"
            shape = f"{len(rs.ready)}/{len(rs.blocked)}/{len(rs.cycles)}"
            line = (
                f"{n:>10,}  {seconds:>9.3f} s  {seconds / n * 1e6:>6.2f} µs  "
                f"{peak / 2**20:>5.1f} MiB  {ratio:>15}  {base:>7.3f} s  "
                f"{seconds / base:>9.1f}x  {shape:>20}"
            )
            row: dict[str, object] = {"items": n, "seconds": seconds,
                                      "peak_mib": peak / 2**20, "baseline_s": base,
                                      "ready": len(rs.ready), "blocked": len(rs.blocked),
                                      "cycles": len(rs.cycles)}
            if args.e2e:
                e2e_seconds, note = e2e(n, args.seed, args.e2e_module, Path(tmp))
                line += f"  {note}" if e2e_seconds is None else f"  {e2e_seconds:.2f} s ({note})"
                row["e2e_seconds"] = e2e_seconds
            if args.instructions and n <= args.instructions_max:
                count, why = count_instructions(n, args.seed)
                per_item = "" if count is None else f"{count / 1e6:,.0f} M ({count / n:,.0f}/item)"
                line += f"  {why or per_item}"
                row["instructions"] = count
                if count is not None:
                    counted[n] = count
            rows.append(row)
            print(line, flush=True)

    print("target: 100k < 1 s; growth within x12 per x10 items")
    if 100_000 in results:
        verdict = "met" if results[100_000][0] < 1 else "MISSED"
        print(f"  100k: {results[100_000][0]:.3f} s -> {verdict}")
    ordered = sorted(results.items())
    for (n0, (t0, b0)), (n1, (t1, b1)) in itertools.pairwise(ordered):
        growth, base_growth = (t1 / t0) / (n1 / n0), (b1 / b0) / (n1 / n0)
        limit = 1.2 * (n1 / n0)
        verdict = "within" if t1 / t0 <= limit else "OVER"
        print(
            f"  {n1:,}/{n0:,}: time x{t1 / t0:.2f} for x{n1 / n0:g} items -> {verdict} x{limit:g};"
            f" per item x{growth:.2f}, the baseline's x{base_growth:.2f}"
        )
        if n0 in counted and n1 in counted:
            work = counted[n1] / counted[n0]
            print(f"  {'':>{len(f'{n1:,}/{n0:,}')}}  instructions x{work:.2f} -> "
                  f"{'within' if work <= limit else 'OVER'} x{limit:g}")


if __name__ == "__main__":
    main()
