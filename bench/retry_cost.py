"""Requests per item of bounded retries (`jr2 work --max-attempts`) against the fake GitHub and
the fake Jira: one item done at once (`--max-attempts 1`) against one that exits 75 twice and then
0 (`--max-attempts 3`), counted from the fake's request log. Run from the repository root:
`.venv/bin/python bench/retry_cost.py`.
"""
import collections
import sys
import tempfile
from pathlib import Path

sys.path[:0] = ["tests", "tests/reliability"]
from test_retries_trackers import setup  # noqa: E402  (after the path is set)

for kind in ("github", "jira"):
    for plan, opts in (("0", []), ("75,75,0", ["--max-attempts", "3"])):
        with tempfile.TemporaryDirectory() as d, setup(kind, Path(d)) as s:
            p = s.start(plan, *opts)
            p.communicate(timeout=120)
            log = s.tr.log()
            writes = [e for e in log if e.get("method") not in ("GET", None)]
            print(kind, plan, "rc", p.returncode, "requests", len(log), "writes", len(writes),
                  dict(collections.Counter(e.get("method") for e in log)))
