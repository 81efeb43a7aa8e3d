"""What `jr2 work github:` costs per worked issue, and whether a long-lived pool's memory grows.

    python bench/github_work_cost.py [--sizes 100,1000] [--bare-sizes 100] [--json]
    python bench/github_work_cost.py --phases
    python bench/github_work_cost.py --memory [--polls 10000] [--items 1000]

Both run `jr2 work` as a user does (a separate process) against the project's fake GitHub
(`jr2_sources.testing.fakes.github_server`) served on 127.0.0.1, and count from the fake's
request log.

* cost (default): N open issues, `jr2 work github:o/r --cap 4 --write-spacing 0.001s -- true`
  until it drains; requests per worked issue, by method (the run's start and end included),
  with the fake's issues carrying GitHub's summary fields (`issue_dependencies_summary`,
  `sub_issues_summary`) and, at `--bare-sizes`, without them (GitHub's own example issue
  lacks them). Target: at most 11 requests per worked issue at N = 100 and N = 1,000.
* `--phases`: the requests of each phase of one item (the claim, the watch and settle that end
  it), in process against the same fake: exact counts, printed as the rows of the cost table in
  docs/guides/github.md (a test checks the guide shows them, and the rows of `table_rows` from
  bench/results.json).
* `--memory`: a long-lived pool, `jr2 work github:o/r --wait --poll-every 0.05s --write-spacing
  0.001s -- true`, over an empty scope: after `--polls` polls (the fake's issue-list requests)
  `--items` issues are added and worked; RSS of the pool (`/proc/PID/status`) at poll 1,000,
  at the last poll before the items, and once every item is closed. Target: the end within
  5 MiB of poll 1,000.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jr2_sources.testing.fakes.github_server import FakeGitHub, seed

ROOT = Path(__file__).resolve().parent.parent
JR2 = [sys.executable, "-m", "jr2_core"]
WORK = ["work", "github:o/r", "--cap", "4", "--write-spacing", "0.001s"]
TOKEN = "bench-token-0123456789"


def env_for(fake: FakeGitHub, state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "GITHUB_APP_ID")}
    env.update(GITHUB_API_URL=fake.url, GITHUB_TOKEN=TOKEN, JR2_STATE_DIR=str(state))
    return env


def kind_of(entry: dict[str, Any]) -> str:
    """A request as `METHOD what` (what: the list, an issue, its comments, a comment, ...)."""
    parts = str(entry["path"]).strip("/").split("/")
    if parts[:1] != ["repos"] or len(parts) < 4:
        what = "/" + "/".join(parts)
    elif parts[3] == "issues" and len(parts) == 4:
        what = "list"
    elif parts[3] == "issues" and parts[4] == "comments":
        what = "comment"
    elif parts[3] == "issues" and len(parts) == 5:
        what = "issue"
    elif parts[3] == "issues":
        what = "issue/" + "/".join(parts[5:6])
    else:
        what = "/".join(parts[3:4])
    return f"{entry['method']} {what}"


def work_cost(n: int, summaries: bool) -> dict[str, Any]:
    """One drained run over `n` issues: requests per worked issue, by method and by kind."""
    fake = FakeGitHub(summaries=summaries).start()
    try:
        seed(fake, "o/r", n)
        with tempfile.TemporaryDirectory() as d:
            res = subprocess.run([*JR2, *WORK, "--", "true"], env=env_for(fake, Path(d)),
                                 capture_output=True, text=True, timeout=3600, cwd=d)
        with fake.lock:
            log = list(fake.log)
            closed = sum(1 for i in fake.issues.values() if i.state == "closed")
    finally:
        fake.stop()
    if res.returncode != 0 or closed != n:
        raise SystemExit(f"jr2 work exited {res.returncode} with {closed} of {n} issues closed:"
                         f" {res.stderr.strip()[-500:]}")
    methods = collections.Counter(str(e["method"]) for e in log)
    kinds = collections.Counter(kind_of(e) for e in log)
    return {"n": n, "summaries": summaries, "requests": len(log),
            "per_issue": round(len(log) / n, 2),
            "by_method": {m: round(c / n, 2) for m, c in sorted(methods.items())},
            "by_kind": {k: round(c / n, 2) for k, c in sorted(kinds.items())},
            "not_modified": round(sum(1 for e in log if e["status"] == 304) / n, 2)}


def _phase(fake: FakeGitHub, act: Any) -> list[str]:
    """The requests `act()` sent, as `kind_of` names them."""
    fake.clear_log()
    act()
    with fake.lock:
        return [kind_of(e) for e in fake.log]


def phase_costs() -> dict[str, list[str]]:
    """The requests of each phase of one item, through the adapter as `jr2 work` drives it: a
    claim (`Tracker.claim`), the people-win watch the Work Source runs before a settle, and the
    settle (`Tracker.settle`)."""
    from pydantic import SecretStr

    from jr2_core import Outcome
    from jr2_sources.readyset import SnapshotItem
    from jr2_sources.registry import SourceEnv
    from jr2_sources.trackers.github.client import GitHubClient
    from jr2_sources.trackers.github.config import GitHubConfig
    from jr2_sources.trackers.github.tracker import GitHubTracker

    fake = FakeGitHub().start()
    try:
        def adapter() -> GitHubTracker:
            client = GitHubClient(fake.url, SecretStr(TOKEN), label="github:o/r",
                                  write_spacing=0.0)
            return GitHubTracker(GitHubConfig(target="o/r", write_spacing=0.001),
                                 SourceEnv(state_dir=Path("/nonexistent"), read_only=False),
                                 client=client)

        a, b = adapter(), adapter()
        a.identity()  # asked once per process, before the first listing
        b.identity()
        fresh, talked, taken = (fake.add_issue("o/r") for _ in range(3))
        fake.add_comment("o/r", talked, "a person's comment", user="alice")
        out: dict[str, list[str]] = {}
        out["claim, won (no comment yet)"] = _phase(
            fake, lambda: a.claim(SnapshotItem(id=f"o/r#{fresh}"), "pool-a", 600))
        out["claim, won (the issue has comments)"] = _phase(
            fake, lambda: a.claim(SnapshotItem(id=f"o/r#{talked}"), "pool-a", 600))
        b.claim(SnapshotItem(id=f"o/r#{taken}"), "pool-b", 600)
        out["claim, seen taken by the look"] = _phase(
            fake, lambda: a.claim(SnapshotItem(id=f"o/r#{taken}"), "pool-a", 600))
        out["watch before the settle"] = _phase(
            fake, lambda: a.watch([f"o/r#{fresh}"], "pool-a"))
        out["settle, done"] = _phase(
            fake, lambda: a.settle(f"o/r#{fresh}", "pool-a", Outcome("done")))
        for t in (a, b):
            t.close()
    finally:
        fake.stop()
    return out


def phase_rows(costs: dict[str, list[str]]) -> list[str]:
    """The phases as rows of the guide's cost table."""
    return [f"| {name} | {len(kinds)}: {', '.join(kinds)} |" for name, kinds in costs.items()]


def table_rows(rows: list[dict[str, Any]]) -> list[str]:
    """Runs of `work_cost` as rows of the guide's table of requests per worked issue."""
    out = []
    for row in rows:
        kinds = row["by_kind"]
        writes = sum(v for k, v in kinds.items() if not k.startswith("GET "))
        reads = ", ".join(f"{k.removeprefix('GET ')} {v}" for k, v in kinds.items()
                          if k.startswith("GET "))
        out.append(f"| {row['n']:,} | {'yes' if row['summaries'] else 'no'} | "
                   f"{row['per_issue']} | {reads} | {round(writes, 2)} |")
    return out


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def memory(polls: int, items: int, probe: int = 1000) -> dict[str, Any]:
    """The long-lived pool of the module notes: RSS at poll `probe`, before the items, at end."""
    fake = FakeGitHub().start()
    fake.close_issue("o/r", fake.add_issue("o/r"))  # the repository exists; nothing in scope

    def listings() -> int:
        with fake.lock:
            return sum(int(e.get("count", 1)) for e in fake.log if e["method"] == "GET"
                       and str(e["path"]).endswith("/o/r/issues"))

    out: dict[str, Any] = {"polls": polls, "items": items}
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen(
            [*JR2, *WORK, "--wait", "--poll-every", "0.05s", "--", "true"],
            env=env_for(fake, Path(d)), cwd=d, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        try:
            seen = 0
            t0 = time.monotonic()
            while seen < polls:
                time.sleep(0.2)
                if proc.poll() is not None:
                    raise SystemExit(f"jr2 work ended early: {proc.stderr.read()[-500:]}")
                seen = listings()
                if seen >= probe and "rss_poll_probe_kib" not in out:
                    out["rss_poll_probe_kib"] = rss_kib(proc.pid)
                    out["probe"] = seen
                with fake.lock:  # the bench's own log: one entry counts the polls so far
                    if len(fake.log) > 2000:
                        total = sum(int(e.get("count", 1)) for e in fake.log
                                    if e["method"] == "GET"
                                    and str(e["path"]).endswith("/o/r/issues"))
                        fake.log[:] = [{"method": "GET", "path": "/repos/o/r/issues",
                                        "count": total}]
            out["rss_before_items_kib"] = rss_kib(proc.pid)
            out["poll_seconds"] = round(time.monotonic() - t0, 1)
            numbers = [fake.add_issue("o/r") for _ in range(items)]
            t1 = time.monotonic()
            while True:
                time.sleep(0.5)
                if proc.poll() is not None:
                    raise SystemExit(f"jr2 work ended early: {proc.stderr.read()[-500:]}")
                with fake.lock:
                    left = sum(1 for k in numbers if fake.issue("o/r", k).state != "closed")
                if not left:
                    break
            time.sleep(2.0)  # a few more polls after the last settle
            out["items_seconds"] = round(time.monotonic() - t1, 1)
            out["rss_end_kib"] = rss_kib(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            fake.stop()
    out["growth_mib"] = round((out["rss_end_kib"] - out["rss_poll_probe_kib"]) / 1024, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--bare-sizes", default="100",
                    help="the sizes also run without summary fields ('' for none)")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--phases", action="store_true", help="the requests of each phase")
    ap.add_argument("--polls", type=int, default=10_000)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.phases:
        costs = phase_costs()
        print(json.dumps(costs) if args.json else "\n".join(phase_rows(costs)))
        return
    if args.memory:
        out = memory(args.polls, args.items)
        if args.json:
            print(json.dumps(out))
        else:
            print(f"polls {out['probe']} -> {out['polls']} ({out['poll_seconds']} s), then "
                  f"{out['items']} items ({out['items_seconds']} s): RSS "
                  f"{out['rss_poll_probe_kib'] / 1024:.1f} MiB at poll {out['probe']}, "
                  f"{out['rss_before_items_kib'] / 1024:.1f} MiB before the items, "
                  f"{out['rss_end_kib'] / 1024:.1f} MiB at the end: "
                  f"{out['growth_mib']:+.1f} MiB (target <= 5)")
        return
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        bare = {int(s) for s in args.bare_sizes.split(",") if s}
        for summaries in (True, False) if n in bare else (True,):
            row = work_cost(n, summaries)
            rows.append(row)
            if not args.json:
                print(f"N={n:>5} summaries={'yes' if summaries else 'no ':3} "
                      f"{row['per_issue']:6.2f} requests per worked issue "
                      f"({row['not_modified']} answered 304): {row['by_method']}", flush=True)
                print("        " + ", ".join(f"{k} {v}" for k, v in row["by_kind"].items()),
                      flush=True)
    if args.json:
        print(json.dumps(rows))
    else:
        print("\n".join(table_rows(rows)))


if __name__ == "__main__":
    main()
