"""CLI start-up: `jr2 --help`, `jr2 --version` and `jr2 ready local:` on a 3-item and a
1,000-item backlog, beside two baselines timed in the same run: `python -c pass` and a plain
import of jr2's dependencies (pydantic, click, pluggy, tenacity, rich, aiohttp, tomli). Wall
time, median of N runs taken round-robin (a busy spell hits every command alike).

Targets: `jr2 --help` <= 0.200 s and `jr2 ready local:` on 3 items <= 0.500 s on a 2-core
machine; on a loaded machine read the ratios against the baselines.

    python bench/cli_start.py [--repeat 15] [--items 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEPENDENCIES = ("pydantic", "click", "pluggy", "tenacity", "rich", "aiohttp", "tomli")
TARGETS = {"jr2 --help": 0.200, "jr2 ready local: (3 items)": 0.500}


def medians(cmds: list[list[str]], cwd: Path, repeat: int) -> list[float]:
    """The median wall time of each command over `repeat` rounds, round-robin."""
    times: list[list[float]] = [[] for _ in cmds]
    for _ in range(repeat):
        for k, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=cwd, capture_output=True, check=True)
            times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def backlog(path: Path, items: int) -> None:
    """A local backlog of `items` items, each but the first needing the one at half its index."""
    lines = []
    for i in range(items):
        lines += ["[[items]]", f'id = "T-{i}"', f'title = "Item {i}"']
        if i:
            lines.append(f'needs = ["T-{i // 2}"]')
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        backlog(cwd / "small.toml", 3)
        backlog(cwd / "big.toml", args.items)
        py = [sys.executable]
        # the installed console script beside this interpreter, as a user runs it; else -m
        script = Path(sys.executable).with_name("jr2")
        jr2 = [str(script)] if script.exists() else [*py, "-m", "jr2_core"]
        named = [
            ("python -c pass", [*py, "-c", "pass"]),
            ("import the dependencies", [*py, "-c", "import " + ", ".join(DEPENDENCIES)]),
            ("jr2 --help", [*jr2, "--help"]),
            ("jr2 --version", [*jr2, "--version"]),
            ("jr2 ready local: (3 items)", [*jr2, "ready", "local:small.toml"]),
            (f"jr2 ready local: ({args.items} items)", [*jr2, "ready", "local:big.toml"]),
        ]
        times = medians([cmd for _, cmd in named], cwd, args.repeat)
    python, deps = times[0], times[1]
    rows = [{"command": name, "seconds": t, "x_python": t / python, "x_dependencies": t / deps,
             "target": TARGETS.get(name)}
            for (name, _), t in zip(named, times, strict=True)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'command':<34} {'median s':>8} {'x python':>9} {'x deps':>7} {'target':>7}")
    for r in rows:
        target = "" if r["target"] is None else (
            f"{'ok' if r['seconds'] <= r['target'] else 'OVER'} {r['target']:.1f}")
        print(f"{r['command']:<34} {r['seconds']:>8.3f} {r['x_python']:>9.1f} "
              f"{r['x_dependencies']:>7.2f} {target:>7}")


if __name__ == "__main__":
    main()
