"""Requests per update of the dashboard issue (`jr2 dashboard`, `jr2 work --dashboard`) against
the fake GitHub, counted from its request log, for a 200-issue backlog (60 blocked, 10 failed):
the first update, an update when nothing changed, one after the backlog changed, one acting on
a retry tick; and, as the baseline of the same run, one `jr2 ready` read of the backlog. Run
from the repository root: `.venv/bin/python bench/dashboard_cost.py`.
"""
import collections
import sys
from datetime import UTC, datetime

sys.path[:0] = ["tests", "tests/trackers/github"]
from fakes.github_server import FakeGitHub  # noqa: E402  (after the path is set)
from gh_helpers import make_adapter  # noqa: E402

from jr2_sources.dashboard import Dashboard, split, ticks  # noqa: E402
from jr2_sources.readyset import compute_ready_set  # noqa: E402


def count(fake: FakeGitHub) -> str:
    log = list(fake.log)
    fake.clear_log()
    by = collections.Counter(e["method"] for e in log)
    free = sum(1 for e in log if e["status"] == 304)
    writes = sum(n for m, n in by.items() if m != "GET")
    return f"{len(log):4d} requests ({free} of them 304, free), {writes} writes  {dict(by)}"


with FakeGitHub() as fake:
    fake.next_number.setdefault("o/r", 1)
    for n in range(1, 201):
        fake.add_issue("o/r", f"Issue {n}", labels=["agent"] + (["jr2:failed"] if n % 20 == 0
                                                                else []))
        if n % 10 in (3, 6, 9) and n > 10:
            fake.add_dependency("o/r", n, n - 10)
    board_no = fake.add_issue("o/r", "Dashboard")
    adapter = make_adapter(fake.url, label=["agent"], read_only=True, detail=True)
    clock = [0.0]
    dash = Dashboard(adapter.dashboard(board_no), clock=lambda: clock[0])

    def read() -> object:
        return compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))

    fake.clear_log()
    rs = read()
    print(f"baseline, one read of the backlog (jr2 ready):  {count(fake)}")
    adapter.dashboard(board_no).check()
    print(f"check of the issue at start (once):              {count(fake)}")
    dash.update(lambda: rs)
    print(f"first update (Ready-set given):                  {count(fake)}")
    dash.update(lambda: rs)
    print(f"update, nothing changed:                         {count(fake)}")
    fake.close_issue("o/r", 1)
    clock[0] += 60
    rs = read()
    fake.clear_log()
    dash.update(lambda: rs)
    print(f"update after a change (Ready-set given):         {count(fake)}")
    issue = fake.issue("o/r", board_no)
    assert any(t.kind == "retry" for t in ticks(split(issue.body).section))
    issue.body = issue.body.replace("- [ ] **retry**", "- [x] **retry**", 1)
    clock[0] += 60
    fake._touch(issue)
    fake.clear_log()
    dash.update(lambda: rs, read)
    print(f"update acting on one retry tick (+ fresh read): {count(fake)}")
