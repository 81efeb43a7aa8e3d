"""CLI start-up: `jr2 --help`, `jr2 --version` and `jr2 ready local:` on a 1,000-item backlog,
beside `python -c pass`, wall time (best of N, taken round-robin) measured in this process.

Target (issue 18): `jr2 --help` and `jr2 --version` within 100 ms on this machine.

    python bench/cli_start.py [--repeat 11] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def best(cmds: list[list[str]], cwd: Path, repeat: int) -> list[float]:
    """Best-of-`repeat` wall time of each command, round-robin (a busy spell hits all alike)."""
    times = [float("inf")] * len(cmds)
    for _ in range(repeat):
        for k, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=cwd, capture_output=True, check=True)
            times[k] = min(times[k], time.perf_counter() - t0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        lines = []
        for i in range(args.items):
            lines += ["[[items]]", f'id = "T-{i}"', f'title = "Item {i}"']
            if i:
                lines.append(f'needs = ["T-{i // 2}"]')
        (cwd / "b.toml").write_text("\n".join(lines) + "\n")
        py = [sys.executable]
        # the installed console script beside this interpreter, as a user runs it; else -m
        script = Path(sys.executable).with_name("jr2")
        jr2 = [str(script)] if script.exists() else [*py, "-m", "jr2_core"]
        named = [
            ("python -c pass", [*py, "-c", "pass"]),
            ("jr2 --help", [*jr2, "--help"]),
            ("jr2 --version", [*jr2, "--version"]),
            (f"jr2 ready local: ({args.items} items)", [*jr2, "ready", "local:b.toml"]),
        ]
        times = best([cmd for _, cmd in named], cwd, args.repeat)
        rows = [{"command": name, "seconds": t} for (name, _), t in zip(named, times, strict=True)]
        base = times[0]
    for r in rows:
        r["ratio"] = r["seconds"] / base
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'command':<34} {'seconds':>8} {'x python':>9}")
    for r in rows:
        print(f"{r['command']:<34} {r['seconds']:>8.3f} {r['ratio']:>9.1f}")
    print("target: jr2 --help and jr2 --version <= 0.100 s")


if __name__ == "__main__":
    main()
