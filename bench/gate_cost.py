"""Requests per gated item (`jr2 work --gate`) against the fake GitHub: one item done at once
(baseline, in the same run) against one whose worker asks for approval (exit 79), is parked,
approved by a collaborator's `/jr2 approve deploy` comment, and done by a second `jr2 work`.
Counted from the fake's request log (the permission checks separately). Run from the
repository root: `.venv/bin/python bench/gate_cost.py`.
"""
import collections
import sys
import tempfile
from pathlib import Path

sys.path[:0] = ["tests", "tests/reliability"]
from test_gates_trackers import setup  # noqa: E402  (after the path is set)


def counts(log: list[dict]) -> tuple[int, int, int]:
    writes = sum(1 for e in log if e.get("method") not in ("GET", None))
    perms = sum(1 for e in log if "/collaborators/" in str(e.get("path")))
    return len(log), writes, perms


with tempfile.TemporaryDirectory() as d, setup("github", Path(d)) as s:
    p = s.start()
    p.communicate(timeout=120)
    base = counts(s.tr.log())
    print(f"done at once: rc {p.returncode}, requests {base[0]}, writes {base[1]}")

with tempfile.TemporaryDirectory() as d, setup("github", Path(d)) as s:
    [item] = s.items
    p = s.start(ask=item)
    p.communicate(timeout=120)
    first = s.tr.log()
    s.answer(item, "approve")
    p = s.start(ask=item)
    p.communicate(timeout=120)
    log = s.tr.log()
    a, b = counts(first), counts(log[len(first):])
    print(f"ask + park (rc 3): requests {a[0]}, writes {a[1]}")
    print(f"approved run (rc {p.returncode}): requests {b[0]}, writes {b[1]}, "
          f"permission checks {b[2]}")
    total = counts(log)
    print(f"gated item total: requests {total[0]}, writes {total[1]} "
          f"({total[0] / base[0]:.2f}x requests, {total[1] / base[1]:.2f}x writes of done at "
          "once)", dict(collections.Counter(e.get("method") for e in log)))
