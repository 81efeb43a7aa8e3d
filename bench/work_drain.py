"""Draining a local backlog: `jr2 work local:FILE --cap 8 -- true` against an asyncio floor run
beside it (issue 18).

The floor does what jr2's worker does per item, and nothing else: it spawns the same `true`
command 8 at a time, each with a per-item directory (its cwd), a JSON file with the item, a log
file its stdout and stderr are pumped into, and the environment jr2 gives; on a DAG it starts an
item once all its `needs` have finished (a counter per item: the cheapest correct scheduler).
`jr2 work` runs as a separate process, start-up included, as a user runs it; so does the floor,
as the issue defines it ("an asyncio script"): `python bench/work_drain.py --run-floor ITEMS
WORK` with the same interpreter, reading its items from a JSON file as jr2 reads its backlog.
`--floor-in-process` runs the floor inside this process instead (no interpreter start, items
already in memory: a stricter floor, for comparison).

    python bench/work_drain.py [--sizes 100,1000,10000] [--big] [--dag] [--repeat R]
                               [--python PY] [--per-claim] [--json]

`--big` adds N = 100,000; `--dag` adds a backlog of chains with fan-in (each item needs the one
before it in its chain of 10, and every 10th item needs the last item of the 3 chains before).
`--python` runs `jr2` with another interpreter (e.g. another checkout's venv: before/after).
`--per-claim` measures only what jr2 adds per claim (the WorkSource's `next` + `settle` over the
local source, no command run; `settle` includes the people-win look at the item), reading by
deltas and, for comparison, by full snapshots (full
reads are timed over the first 300 claims only, and skipped above 10,000 items: they are
quadratic).
With `--repeat R`, the two alternate and take turns going first (best of each kept).
Target: `jr2 work` within 1.5x the floor for every N. Compare ratios, not seconds: the machine is
shared. Wall time is what the target names; CPU time (this process, `jr2` and every command,
from `getrusage`) is printed beside it because a busy machine distorts it far less.
`jr2 work` fences its commands (one command supervisor per pool); before timing, a one-item run
whose command looks for the supervisor among its siblings proves it is there. When the sizes
include 1,000 and 10,000, the slope (seconds per extra item between them, fixed start-up left
out) of each side is printed: target `jr2 work`'s within 1.5x the floor's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CAP = 8


def backlog(n: int, dag: bool) -> list[dict[str, object]]:
    """N items; independent, or chains of 10 with fan-in between chains."""
    items: list[dict[str, object]] = []
    for i in range(n):
        it: dict[str, object] = {"id": f"T-{i}", "title": f"Item {i}"}
        if dag:
            if i % 10:
                it["needs"] = [f"T-{i - 1}"]
            elif i >= 30:
                it["needs"] = [f"T-{i - 10 * k - 1}" for k in range(3)]
        items.append(it)
    return items


def write_toml(path: Path, items: list[dict[str, object]]) -> None:
    lines = []
    for it in items:
        lines += ["[[items]]", f'id = "{it["id"]}"', f'title = "{it["title"]}"']
        if "needs" in it:
            lines.append("needs = [" + ", ".join(f'"{n}"' for n in it["needs"]) + "]")  # type: ignore[attr-defined]
    path.write_text("\n".join(lines) + "\n")


async def floor(items: list[dict[str, object]], work: Path, argv: list[str]) -> float:
    """The same commands, CAP at a time, dependencies respected, as jr2's worker spawns them."""
    waiting = {str(it["id"]): len(it.get("needs", ())) for it in items}  # type: ignore[arg-type]
    dependents: dict[str, list[str]] = {}
    by_id = {str(it["id"]): it for it in items}
    for it in items:
        for n in it.get("needs", ()):  # type: ignore[attr-defined]
            dependents.setdefault(n, []).append(str(it["id"]))
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    for iid, k in waiting.items():
        if k == 0:
            queue.put_nowait(iid)
    left = len(items)
    logs = work / "logs"
    logs.mkdir(parents=True)

    async def pump(stream: asyncio.StreamReader, log: object, tag: str) -> None:
        while line := await stream.readline():
            log.write(f"{tag} {line.decode('utf-8', 'replace').rstrip()}\n")  # type: ignore[attr-defined]

    async def run_one(iid: str) -> None:
        box = work / "sandboxes" / iid
        box.mkdir(parents=True)
        item_file = logs / f"{iid}.json"
        item_file.write_text(json.dumps({**by_id[iid], "source": "floor"}, indent=2))
        env = dict(os.environ, JR2_ITEM_ID=iid, JR2_ITEM_TITLE=str(by_id[iid]["title"]),
                   JR2_ITEM_URL="", JR2_ITEM_JSON=str(item_file), JR2_RUN_ID="floor")
        with open(logs / f"{iid}.log", "a", encoding="utf-8") as log:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=box, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True)
            assert proc.stdout is not None and proc.stderr is not None
            await asyncio.gather(pump(proc.stdout, log, "out"), pump(proc.stderr, log, "err"),
                                 proc.wait())
        assert proc.returncode == 0
        shutil.rmtree(box)

    async def slot() -> None:
        nonlocal left
        while (iid := await queue.get()) is not None:
            await run_one(iid)
            left -= 1
            for d in dependents.get(iid, ()):
                waiting[d] -= 1
                if waiting[d] == 0:
                    queue.put_nowait(d)
            if left == 0:
                for _ in range(CAP):
                    queue.put_nowait(None)

    t0 = time.perf_counter()
    await asyncio.gather(*(slot() for _ in range(CAP)))
    return time.perf_counter() - t0


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def cpu_of(fn: Any, *args: Any) -> tuple[Any, float]:
    """`fn(*args)` and the CPU time it cost: this process's and its reaped children's (a
    child's own reaped children included), which a busy shared machine disturbs far less
    than wall time."""
    c0 = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
    out = fn(*args)
    return out, _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - c0


_PACKAGES = """
import importlib.util, json, os
from importlib.metadata import entry_points
names = {"jr2_core", "jr2_sources"} | {e.value.split(":")[0].split(".")[0]
                                       for e in entry_points(group="jr2")}
dirs = []
for name in sorted(names):
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin:
        dirs.append(os.path.dirname(spec.origin))
print(json.dumps(dirs))
"""


def precompile(python: str) -> None:
    """Byte-compile jr2 and its plugins for `python`, as pip does when it installs them. This
    machine sets PYTHONDONTWRITEBYTECODE, under which an editable checkout is compiled from
    source at every start (about 60 modules, 0.09 s of CPU): a cost no installed jr2 pays."""
    dirs = json.loads(subprocess.run([python, "-c", _PACKAGES], capture_output=True, text=True,
                                     check=True).stdout)
    subprocess.run([python, "-m", "compileall", "-q", *dirs], check=True,
                   stdout=subprocess.DEVNULL)


def jr2_work(python: str, work: Path, backlog_file: Path, n: int, state: Path) -> float:
    t0 = time.perf_counter()
    res = subprocess.run([python, "-m", "jr2_core", "work", f"local:{backlog_file}",
                          "--cap", str(CAP), "--state", str(state), "--json",
                          "--", "true"], cwd=work, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"jr2 work failed ({res.returncode}): {res.stderr.strip()[-300:]}")
    out = json.loads(res.stdout)
    done = len(out.get("items", out.get("output", {}).get("items", {})))
    if done != n:
        raise SystemExit(f"jr2 work ran {done} of {n} items")
    return dt


FENCED = ("for c in $(cat /proc/$PPID/task/*/children); do [ $c = $$ ] && continue; "
          "grep -qs kit/fence.py /proc/$c/cmdline && exit 0; done; exit 1")
"""A command that succeeds only when a sibling process (a child of its pool) is the command
supervisor, `jr2_sources/kit/fence.py`."""


def check_fenced(python: str, work: Path) -> None:
    """Fail unless `jr2 work` ran its command beside its supervisor (fencing on)."""
    write_toml(work / "one.toml", backlog(1, False))
    res = subprocess.run([python, "-m", "jr2_core", "work", f"local:{work / 'one.toml'}",
                          "--state", str(work / "fence-state"), "--json", "--",
                          "sh", "-c", FENCED], cwd=work, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("fencing is off: no command supervisor ran beside the command "
                         f"({res.returncode}): {res.stderr.strip()[-300:]}")


def slope(rows: list[dict[str, Any]], key: str, lo: int = 1000, hi: int = 10_000) -> float | None:
    """Seconds per item between N = `lo` and N = `hi` (independent items) of `key`."""
    at = {r["items"]: r[key] for r in rows if r["shape"] == "independent"}
    return (at[hi] - at[lo]) / (hi - lo) if lo in at and hi in at else None


def floor_process(python: str, items: list[dict[str, object]], work: Path) -> float:
    """The floor as its own process (`--run-floor`), timed from outside as `jr2_work` is."""
    work.mkdir(parents=True)
    items_file = work / "items.json"
    items_file.write_text(json.dumps(items))
    t0 = time.perf_counter()
    subprocess.run([python, __file__, "--run-floor", str(items_file), str(work)], check=True)
    return time.perf_counter() - t0


def run_floor(items_file: str, work: str) -> None:
    """`--run-floor`: the floor script's body."""
    items = json.loads(Path(items_file).read_text())
    asyncio.run(floor(items, Path(work) / "run", [shutil.which("true") or "/bin/true"]))


class _FullReads:
    """The local adapter without `changes()`: the WorkSource reads a full snapshot and
    recomputes the Ready-set before every claim (how every claim was read before issue 18).
    Everything else (claim, renew, settle, watch, options) is the adapter's own."""

    def __init__(self, adapter: Any) -> None:
        self._a = adapter

    def __getattr__(self, name: str) -> Any:
        if name == "changes":
            raise AttributeError(name)
        return getattr(self._a, name)

    def snapshot(self) -> Any:
        return self._a.snapshot()

    def claim(self, *args: Any) -> Any:
        return self._a.claim(*args)

    def renew(self, *args: Any) -> Any:
        return self._a.renew(*args)

    def settle(self, *args: Any) -> Any:
        return self._a.settle(*args)


def per_claim(n: int, dag: bool, full: bool, limit: int | None = None) -> float:
    """Milliseconds per item of `next` + `settle` through the WorkSource over a local backlog
    of N items, no command run: what jr2 itself adds per claim (over the first `limit` claims
    when given, the whole drain otherwise)."""
    from jr2_core import Outcome
    from jr2_sources.registry import SourceEnv
    from jr2_sources.trackers.local.source import LocalConfig, LocalTracker
    from jr2_sources.worksource import WorkSource

    async def drain(ws: WorkSource) -> int:
        done = 0
        while done != limit and (nxt := await ws.next([])).item is not None:
            await ws.settle(nxt.item.id, Outcome("done"))
            done += 1
        return done

    with tempfile.TemporaryDirectory(prefix="jr2-claim-") as tmp:
        write_toml(Path(tmp) / "b.toml", backlog(n, dag))
        still = time.time() - 60  # a backlog nobody is saving: people-win watching reads it
        os.utime(Path(tmp) / "b.toml", (still, still))
        adapter = LocalTracker(LocalConfig(target=str(Path(tmp) / "b.toml")),
                               SourceEnv(Path(tmp) / "state"))
        ws = WorkSource(_FullReads(adapter) if full else adapter, holder="bench")
        t0 = time.perf_counter()
        done = asyncio.run(drain(ws))
        dt = time.perf_counter() - t0
        adapter.close()
    if done != (limit or n):
        raise SystemExit(f"per-claim: drained {done} of {n}")
    return dt / done * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--big", action="store_true", help="add N = 100,000")
    ap.add_argument("--dag", action="store_true", help="add a DAG of chains with fan-in")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs jr2")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each, alternating; best kept")
    ap.add_argument("--per-claim", action="store_true",
                    help="only jr2's own cost per claim (next + settle, no command), by deltas "
                         "and by full reads, in this process")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--floor-in-process", action="store_true",
                    help="run the floor inside this process (no interpreter start: stricter)")
    ap.add_argument("--run-floor", nargs=2, metavar=("ITEMS", "WORK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run_floor:
        run_floor(*args.run_floor)
        return
    if args.per_claim:
        claim_rows = []
        for n in [int(s) for s in args.sizes.split(",") if s] + ([100_000] if args.big else []):
            for dag in (False, True) if args.dag else (False,):
                full = per_claim(n, dag, True, limit=min(n, 300)) if n <= 10_000 else None
                delta = per_claim(n, dag, False)
                claim_rows.append({"items": n, "shape": "dag" if dag else "independent",
                                   "full_ms": full, "delta_ms": delta})
                if not args.json:
                    f = f"{full:8.3f} ms" if full is not None else "   (skipped)"
                    print(f"{claim_rows[-1]['shape']:>12} {n:>7}  per claim: full reads {f}  "
                          f"deltas {delta:7.3f} ms", flush=True)
        if args.json:
            print(json.dumps({"per_claim": claim_rows}, indent=2))
        else:
            print("target: <= 1 ms per claim at 10,000 items (deltas)")
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.big:
        sizes.append(100_000)
    cases = [(n, False) for n in sizes]
    if args.dag:
        cases += [(n, True) for n in sizes if n <= 10_000]
    argv = [shutil.which("true") or "/bin/true"]
    precompile(args.python)
    with tempfile.TemporaryDirectory(prefix="jr2-fence-") as tmp:
        check_fenced(args.python, Path(tmp))
    if not args.json:
        print("fencing: on (the command supervisor ran beside the command)", flush=True)
    rows = []
    for n, dag in cases:
        items = backlog(n, dag)
        with tempfile.TemporaryDirectory(prefix="jr2-drain-") as tmp:
            work = Path(tmp)
            write_toml(work / "b.toml", items)
            tf = tj = cf = cj = float("inf")
            for r in range(args.repeat):  # alternating, best of each: the machine is shared
                # which goes first alternates too: on a file system without a journal (ext4
                # here), creating a file skips over the inodes deleted in the last minutes, so
                # whoever runs right after the other's clean-up pays for it
                for side in ("floor", "jr2") if r % 2 == 0 else ("jr2", "floor"):
                    if side == "floor":
                        if args.floor_in_process:
                            t, c = cpu_of(asyncio.run, floor(items, work / f"floor{r}", argv))
                        else:
                            t, c = cpu_of(floor_process, args.python, items,
                                          work / f"floor{r}")
                        tf, cf = min(tf, t), min(cf, c)
                    else:
                        t, c = cpu_of(jr2_work, args.python, work, work / "b.toml", n,
                                      work / f"state{r}")
                        tj, cj = min(tj, t), min(cj, c)
        rows.append({"items": n, "shape": "dag" if dag else "independent", "floor_s": tf,
                     "jr2_s": tj, "ratio": tj / tf, "floor_cpu_s": cf, "jr2_cpu_s": cj,
                     "cpu_ratio": cj / cf})
        if not args.json:
            r = rows[-1]
            print(f"{r['shape']:>12} {n:>7} wall: floor {tf:7.2f} s  jr2 work {tj:7.2f} s  "
                  f"ratio {r['ratio']:5.2f}   cpu: floor {cf:7.2f} s  jr2 work {cj:7.2f} s  "
                  f"ratio {r['cpu_ratio']:5.2f}", flush=True)
    slopes = {side: slope(rows, key) for side, key in (("floor", "floor_s"), ("jr2", "jr2_s"),
                                                        ("floor_cpu", "floor_cpu_s"),
                                                        ("jr2_cpu", "jr2_cpu_s"))}
    if args.json:
        print(json.dumps({"cap": CAP, "floor_in_process": args.floor_in_process, "fenced": True,
                          "rows": rows, "slope_s_per_item": slopes}, indent=2))
        return
    kind = "inside this process" if args.floor_in_process else "its own process"
    print(f"target: jr2 work / floor <= 1.5 (the floor ran as {kind})")
    sf, sj, cf, cj = (slopes[k] for k in ("floor", "jr2", "floor_cpu", "jr2_cpu"))
    if sf is not None and sj is not None and cf is not None and cj is not None:
        print(f"slope 1,000 -> 10,000 (fencing on), wall: floor {sf * 1e3:.3f} ms/item  "
              f"jr2 work {sj * 1e3:.3f} ms/item  ratio {sj / sf:.2f}   cpu: floor "
              f"{cf * 1e3:.3f} ms/item  jr2 work {cj * 1e3:.3f} ms/item  ratio {cj / cf:.2f}")
        print("target: jr2 work's slope / the floor's <= 1.5")


if __name__ == "__main__":
    main()
