"""Full readings of the backlog at the start of `jr2 work` on the fake GitHub and the fake Jira:
the requests before the first claim's write, with the start-up reading handed to the pool
(`deltas.first_reading`, `ReadyReader.prime`) against the baseline of the same run, priming
switched off (the check of the source, then the reader's own first full reading). N issues in
scope, one of them ready (the rest wait for it), so the pool works one item. Run from the
repository root: `.venv/bin/python bench/work_start_reads.py [--sizes 250,1000] [--json]`.
"""
import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path[:0] = ["tests"]
from jr2_sources.cli.compose import work  # noqa: E402
from jr2_sources.testing.fakes.github_server import FakeGitHub  # noqa: E402  (after the path is set)
from jr2_sources.testing.fakes.jira_server import FakeJira  # noqa: E402
from jr2_sources.worksource import WorkSource  # noqa: E402

FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]
JQL = "project = ENG AND labels = agent ORDER BY created"


def before_first_write(log: list[dict[str, Any]], write: Callable[[dict[str, Any]], bool]
                       ) -> list[dict[str, Any]]:
    for i, e in enumerate(log):
        if write(e):
            return log[:i]
    return log


def github(n: int, state: Path) -> tuple[int, int]:
    """(issue listings without `since`, all requests) before the first write."""
    with FakeGitHub() as fake:
        fake.next_number.setdefault("o/r", 1)
        for i in range(n):
            fake.add_issue("o/r", f"Issue {i}", labels=["agent"])
        for i in range(2, n + 1):
            fake.add_dependency("o/r", i, 1)
        os.environ.update(GITHUB_API_URL=fake.url, GITHUB_TOKEN="x")
        work("github:o/r", ["true"], options=["--label", "agent", *FAST], state=state)
        start = before_first_write(fake.requests(), lambda e: e["method"] != "GET")
        full = [e for e in start if e["path"] == "/repos/o/r/issues" and "since=" not in e["query"]]
        return len(full), len(start)


def jira(n: int, state: Path) -> tuple[int, int]:
    """(full-scope search pages, all requests) before the first write."""
    fake = FakeJira().start()
    try:
        keys = [fake.add_issue(f"Issue {i}", labels=["agent"]) for i in range(n)]
        for k in keys[1:]:
            fake.add_link(keys[0], k)
        os.environ.update(JIRA_EMAIL="bot@example.com", JIRA_API_TOKEN="bench-token-123456")
        os.environ.pop("JIRA_PAT", None)
        work(f"jira:{fake.url}", ["true"], options=["--jql", JQL, *FAST], state=state)
        reads = ("/search", "/search/jql", "/comment/list")
        start = before_first_write(fake.requests(), lambda e: e["method"] != "GET"
                                   and not e["path"].endswith(reads))
        full = [e for e in start if e["path"].endswith(reads[:2])
                and "updated >=" not in str((e["body"] or {}).get("jql", ""))]
        return len(full), len(start)
    finally:
        fake.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="250,1000")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    primed = WorkSource.prime
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for n in (int(s) for s in args.sizes.split(",")):
            for name, fn in (("github", github), ("jira", jira)):
                row = {}
                for mode in ("baseline", "primed"):
                    WorkSource.prime = primed if mode == "primed" else (  # type: ignore[method-assign]
                        lambda self, snapshot: None)
                    full, total = fn(n, Path(tmp) / f"{name}-{n}-{mode}")
                    row[mode] = {"full_reading_requests": full, "requests": total}
                WorkSource.prime = primed  # type: ignore[method-assign]
                row["ratio"] = round(row["primed"]["full_reading_requests"]
                                     / row["baseline"]["full_reading_requests"], 2)
                out[f"{name} N={n}"] = row
                if not args.json:
                    b, p = row["baseline"], row["primed"]
                    print(f"{name:6s} N={n:6d}: full-reading requests before the first claim "
                          f"{p['full_reading_requests']} (all {p['requests']}) vs baseline "
                          f"{b['full_reading_requests']} (all {b['requests']}): "
                          f"{row['ratio']}x")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
