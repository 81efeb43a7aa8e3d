"""Requests per update of the dashboard issue (`jr2 dashboard`, `jr2 work --dashboard`) against
the fake GitHub, counted from its request log, for a 200-issue backlog (60 blocked, 10 failed):
the first update, an update when nothing changed, one after the backlog changed, one acting on
a retry tick; and, as the baseline of the same run, one `jr2 ready` read of the backlog. Run
from the repository root: `.venv/bin/python bench/dashboard_cost.py`.
"""
import collections
import json
import re
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


# -- Jira Cloud: the same steps against the fake Jira (REST v3 description, ADF) ---------------

sys.path[:0] = ["tests/trackers/jira"]
from fakes.jira_server import FakeJira  # noqa: E402
from jira_helpers import make_adapter as jira_adapter  # noqa: E402

from jr2_sources.dashboard.adf import ADF_LAYOUT, dumps, key_of  # noqa: E402


def jira_count(fake: FakeJira) -> str:
    log = list(fake.log)
    fake.clear_log()
    by = collections.Counter(e["method"] for e in log)
    reads = sum(1 for e in log if e["method"] == "GET" or e["path"].endswith(
        ("/search/jql", "/comment/list")))
    paths = collections.Counter(re.sub(r"ENG-\d+", "KEY", e["path"]).removeprefix("/rest/api")
                                for e in log)
    return (f"{len(log):4d} requests ({reads} reads), {len(log) - reads} writes  {dict(by)}"
            + (f"\n      {dict(paths)}" if len(log) < 20 else ""))


print("\nJira Cloud")
jira = FakeJira().start()
try:
    keys = [jira.add_issue(f"Issue {n}", labels=["agent"] + (["jr2:failed"] if n % 20 == 0
                                                              else []))
            for n in range(1, 201)]
    for n in range(11, 201):
        if n % 10 in (3, 6, 9):
            jira.add_link(keys[n - 11], keys[n - 1])
    board_key = jira.add_issue("Dashboard")
    jira.editors.add("acc-pat")
    adapter = jira_adapter(jira.url, jql="project = ENG AND labels = agent", read_only=True)
    clock = [0.0]
    jdash = Dashboard(adapter.dashboard(board_key), clock=lambda: clock[0])

    def jread() -> object:
        return compute_ready_set(adapter.snapshot(), now=datetime.now(UTC))

    jira.clear_log()
    rs = jread()
    print(f"baseline, one read of the backlog (jr2 ready):  {jira_count(jira)}")
    adapter.dashboard(board_key).check()
    print(f"check of the issue at start (once):              {jira_count(jira)}")
    jdash.update(lambda: rs)
    print(f"first update (Ready-set given):                  {jira_count(jira)}")
    jdash.update(lambda: rs)
    print(f"update, nothing changed:                         {jira_count(jira)}")
    jira.set_status(keys[0], "Done")
    clock[0] += 60
    rs = jread()
    jira.clear_log()
    jdash.update(lambda: rs)
    print(f"update after a change (Ready-set given):         {jira_count(jira)}")
    doc = jira.issue(board_key).description
    failed = next(t for t in ADF_LAYOUT.ticks(ADF_LAYOUT.split(dumps(doc)).section)
                  if t.kind == "retry")
    text = dumps(doc).replace(f'"localId":"{key_of("retry", failed.item_id)}","state":"TODO"',
                              f'"localId":"{key_of("retry", failed.item_id)}","state":"DONE"')
    jira.set_description(board_key, json.loads(text), "pat")
    clock[0] += 60
    jira.clear_log()
    jdash.update(lambda: rs, jread)
    print(f"update acting on one retry tick (+ fresh read): {jira_count(jira)}")
finally:
    jira.stop()
