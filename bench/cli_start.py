"""CLI start-up: `jr2 --help` and `jr2 ready local:` on a 1,000-item backlog, beside
`python -c pass`, wall time (best of N) measured in this process.

    python bench/cli_start.py [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def best(cmd: list[str], cwd: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=7)
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
        base = best([*py, "-c", "pass"], cwd, args.repeat)
        rows = [
            {"command": "python -c pass", "seconds": base},
            {"command": "jr2 --help", "seconds": best([*py, "-m", "jr2_core", "--help"], cwd,
                                                      args.repeat)},
            {"command": f"jr2 ready local: ({args.items} items)",
             "seconds": best([*py, "-m", "jr2_core", "ready", "local:b.toml"], cwd,
                             args.repeat)},
        ]
    for r in rows:
        r["ratio"] = r["seconds"] / base
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'command':<34} {'seconds':>8} {'x python':>9}")
    for r in rows:
        print(f"{r['command']:<34} {r['seconds']:>8.3f} {r['ratio']:>9.1f}")


if __name__ == "__main__":
    main()
