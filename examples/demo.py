"""The main job on the embedded default: no network, no token.

1. `jr2 ready` shows the Ready-set of examples/backlog.toml (what is ready, blocked and why).
2. `jr2 work` runs examples/agent.py on every ready item, two at a time, each claimed first.
3. The run ends `deadlocked`: T-4 waits on the missing T-9 and T-6/T-7 form a cycle. The demo
   checks exactly that and exits 0 when it is what happened.

Every run uses a fresh state directory, so it ends the same way every time.
With `--gates`, it also runs the seed's four-ticket example and answers its gates with `jr2 send`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
JR2 = [sys.executable, "-m", "jr2_core"]


def jr2(*args: str, state: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*JR2, *args, "--state", str(state)], cwd=HERE, text=True, **kw)  # type: ignore[call-overload, no-any-return]


def backlog_demo(state: Path) -> list[str]:
    print("$ cd examples   # the commands below run as printed from here (a fresh --state each "
          "demo)", flush=True)
    print("$ jr2 ready local:backlog.toml", flush=True)
    jr2("ready", "local:backlog.toml", state=state, check=True)
    print("\n$ jr2 work local:backlog.toml --cap 2 -- python agent.py", flush=True)
    work = subprocess.run([*JR2, "work", "local:backlog.toml", "--cap", "2", "--state",
                           str(state), "--", sys.executable, str(HERE / "agent.py")],
                          cwd=HERE, text=True)
    after = json.loads(jr2("ready", "local:backlog.toml", "--json", state=state,
                           capture_output=True, check=True).stdout)
    problems = []
    if work.returncode != 3:
        problems.append(f"jr2 work exited {work.returncode}, expected 3 (deadlocked)")
    blocked = {e["id"]: e["reasons"] for e in after["blocked"]}
    if {"kind": "missing_blocker", "ref": "T-9", "state": "missing"} not in blocked.get("T-4", []):
        problems.append("T-4 is not blocked by the missing T-9")
    if after["cycles"] != [["T-6", "T-7"]]:
        problems.append(f"expected the cycle T-6 -> T-7, got {after['cycles']}")
    if after["counts"]["done"] != 6 or after["ready"]:  # T-0, 1, 2, 3, 5 ran; T-8 was done
        problems.append(f"expected six items done and nothing ready: {after['counts']}")
    return problems


def gates_demo(state: Path) -> list[str]:
    print("\n$ jr2 run tickets.py:machine &   # in the background: its gates are answered below",
          flush=True)
    proc = subprocess.Popen([*JR2, "run", "tickets.py:machine", "--state", str(state)],
                            cwd=HERE, text=True, stdout=subprocess.PIPE)

    def gates() -> list[str]:
        res = jr2("gates", "--json", state=state, capture_output=True)
        return [g["id"] for g in json.loads(res.stdout)["gates"]] if res.returncode == 0 else []

    def answer(gate: str, *event: str) -> None:
        deadline = time.monotonic() + 30
        while gate not in gates():
            if time.monotonic() > deadline:
                raise SystemExit(f"demo: gate {gate} never opened")
            time.sleep(0.1)
        print(f"$ {shlex.join(['jr2', 'send', gate, *event])}", flush=True)
        jr2("send", gate, *event, state=state, check=True)

    answer("T-1.review", "approve")
    answer("T-2.review", "reject", "--input", '{"reason": "Not now."}')
    answer("T-3.review", "approve")
    out, _ = proc.communicate(timeout=60)
    result = json.loads(out)
    print(json.dumps(result["output"], indent=2))
    if proc.returncode != 3 or result["output"]["status"] != "deadlocked":
        return [f"tickets run exited {proc.returncode}, expected 3 (deadlocked)"]
    return []


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="jr2-demo-") as tmp:
        state = Path(tmp) / ".jr2"
        problems = backlog_demo(state)
        if "--gates" in sys.argv[1:]:
            problems += gates_demo(state)
    if problems:
        for p in problems:
            print(f"demo: FAILED: {p}", file=sys.stderr)
        return 1
    print("\ndemo: OK: every ready item ran once; T-4 waits on the missing T-9 and T-6/T-7 "
          "form a cycle, so the run ended deadlocked (exit 3), as expected.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
