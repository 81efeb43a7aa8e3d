"""Requests per update of the dashboard (`jr2 dashboard`, `jr2 work --dashboard`), counted from
the fakes' request logs, for a 200-issue backlog (60 blocked, 10 failed): the check at start,
the first update, an update when nothing changed, one after the backlog changed, one acting on a
retry tick; and, as the baseline of the same run, one `jr2 ready` read of the backlog. On the
fake GitHub, on the fake GitLab (the jr2-gitlab plugin: the issue's description; GitLab answers
no conditional requests), on the fake Jira (Cloud: the description in REST v3's ADF, with its
history), and for a `local:` backlog's dashboard file (no request: the file writes are counted).
Run from the repository root:
`.venv/bin/python bench/dashboard_cost.py [github] [gitlab] [jira] [local]` (default: all four).
"""
import collections
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path[:0] = ["tests", "tests/trackers/github", "tests/trackers/jira",
                 "plugins/jr2-gitlab/tests"]

from jr2_sources.capabilities.dashboard.body import split, ticks  # noqa: E402
from jr2_sources.capabilities.dashboard.sync import Dashboard  # noqa: E402
from jr2_sources.readyset import compute_ready_set  # noqa: E402

N = 200


def steps(dash: Dashboard, read: Callable[[], Any], count: Callable[[], str],
          change: Callable[[], None], tick: Callable[[], None], clock: list[float]) -> None:
    """The same five steps on every target, each printed with what it cost."""
    rs = read()
    print(f"  baseline, one read of the backlog (jr2 ready):  {count()}")
    dash.board.check()  # type: ignore[attr-defined]
    print(f"  check of the board at start (once):             {count()}")
    dash.update(lambda: rs)
    print(f"  first update (Ready-set given):                 {count()}")
    dash.update(lambda: rs)
    print(f"  update, nothing changed:                        {count()}")
    change()
    clock[0] += 60
    rs = read()
    count()
    dash.update(lambda: rs)
    print(f"  update after a change (Ready-set given):        {count()}")
    tick()
    clock[0] += 60
    count()
    dash.update(lambda: rs, read)
    print(f"  update acting on one retry tick (+ fresh read): {count()}")


def _tick(body: str) -> str:
    assert any(t.kind == "retry" for t in ticks(split(body).section))
    return body.replace("- [ ] **retry**", "- [x] **retry**", 1)


def github() -> None:
    from gh_helpers import make_adapter

    from jr2_sources.testing.fakes.github_server import FakeGitHub

    print("GitHub (fake):")
    with FakeGitHub() as fake:
        fake.next_number.setdefault("o/r", 1)
        for n in range(1, N + 1):
            fake.add_issue("o/r", f"Issue {n}",
                           labels=["agent"] + (["jr2:failed"] if n % 20 == 0 else []))
            if n % 10 in (3, 6, 9) and n > 10:
                fake.add_dependency("o/r", n, n - 10)
        board_no = fake.add_issue("o/r", "Dashboard")
        adapter = make_adapter(fake.url, label=["agent"], read_only=True, detail=True)
        clock = [0.0]
        dash = Dashboard(adapter.dashboard(board_no), clock=lambda: clock[0])

        def count() -> str:
            log = list(fake.log)
            fake.clear_log()
            by = collections.Counter(e["method"] for e in log)
            free = sum(1 for e in log if e["status"] == 304)
            writes = sum(n for m, n in by.items() if m != "GET")
            return f"{len(log):4d} requests ({free} of them 304, free), {writes} writes  {dict(by)}"

        def tick() -> None:
            issue = fake.issue("o/r", board_no)
            issue.body = _tick(issue.body)
            fake._touch(issue)

        fake.clear_log()
        steps(dash, lambda: compute_ready_set(adapter.snapshot(), now=datetime.now(UTC)), count,
              lambda: fake.close_issue("o/r", 1), tick, clock)


def gitlab() -> None:
    from fake_gitlab import FakeGitLab
    from gitlab_helpers import make_adapter

    print("GitLab (fake, jr2-gitlab plugin):")
    fake = FakeGitLab().start()
    try:
        for n in range(1, N + 1):
            fake.add_issue("g/p", f"Issue {n}",
                           labels=["agent"] + (["jr2:failed"] if n % 20 == 0 else []))
            if n % 10 in (3, 6, 9) and n > 10:
                fake.block(("g/p", n - 10), ("g/p", n))
        board_no = fake.add_issue("g/p", "Dashboard")
        adapter = make_adapter(fake.url, project="g/p", label=["agent"], read_only=True)
        clock = [0.0]
        dash = Dashboard(adapter.dashboard(board_no), clock=lambda: clock[0])

        def count() -> str:
            log = list(fake.requests)
            fake.requests.clear()
            by = collections.Counter("GraphQL" if p == "/api/graphql" else m for m, p, _ in log)
            writes = sum(n for m, n in by.items() if m not in ("GET", "GraphQL"))
            return f"{len(log):4d} requests, {writes} writes  {dict(by)}"

        def tick() -> None:
            issue = fake.issue("g/p", board_no)
            with fake.lock:
                issue["description"] = _tick(issue["description"])
                issue["updated"] = fake.now()

        fake.requests.clear()
        steps(dash, lambda: compute_ready_set(adapter.snapshot(), now=datetime.now(UTC)), count,
              lambda: fake.close_issue("g/p", 1), tick, clock)
    finally:
        fake.stop()


def jira() -> None:
    from jira_helpers import make_adapter

    from jr2_sources.capabilities.dashboard.adf import ADF_LAYOUT, dumps, key_of
    from jr2_sources.testing.fakes.jira_server import FakeJira

    print("Jira Cloud (fake; REST v3 description, ADF):")
    fake = FakeJira().start()
    try:
        keys = [fake.add_issue(f"Issue {n}",
                               labels=["agent"] + (["jr2:failed"] if n % 20 == 0 else []))
                for n in range(1, N + 1)]
        for n in range(11, N + 1):
            if n % 10 in (3, 6, 9):
                fake.add_link(keys[n - 11], keys[n - 1])
        board_key = fake.add_issue("Dashboard")
        fake.editors.add("acc-pat")
        adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent", read_only=True)
        clock = [0.0]
        dash = Dashboard(adapter.dashboard(board_key), clock=lambda: clock[0])

        def count() -> str:
            log = list(fake.log)
            fake.clear_log()
            by = collections.Counter(e["method"] for e in log)
            reads = sum(1 for e in log if e["method"] == "GET" or e["path"].endswith(
                ("/search/jql", "/comment/list")))
            paths = collections.Counter(
                re.sub(r"ENG-\d+", "KEY", e["path"]).removeprefix("/rest/api") for e in log)
            return (f"{len(log):4d} requests ({reads} reads), {len(log) - reads} writes  "
                    f"{dict(by)}" + (f"\n      {dict(paths)}" if len(log) < 20 else ""))

        def tick() -> None:
            doc = fake.issue(board_key).description
            failed = next(t for t in ADF_LAYOUT.ticks(ADF_LAYOUT.split(dumps(doc)).section)
                          if t.kind == "retry")
            key = key_of("retry", failed.item_id)
            text = dumps(doc).replace(f'"localId":"{key}","state":"TODO"',
                                      f'"localId":"{key}","state":"DONE"')
            fake.set_description(board_key, json.loads(text), "pat")

        fake.clear_log()
        steps(dash, lambda: compute_ready_set(adapter.snapshot(), now=datetime.now(UTC)), count,
              lambda: fake.set_status(keys[0], "Done"), tick, clock)
    finally:
        fake.stop()


def local() -> None:
    from jr2_sources.registry import SourceEnv
    from jr2_sources.trackers.local.source import LocalConfig, LocalTracker
    from jr2_sources.trackers.local.store import ClaimStore

    print("local: (a markdown file; no request):")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lines = []
        for n in range(1, N + 1):
            needs = f"needs = [\"I-{n - 10}\"]\n" if n % 10 in (3, 6, 9) and n > 10 else ""
            lines.append(f"[[items]]\nid = \"I-{n}\"\ntitle = \"Issue {n}\"\n{needs}")
        (root / "b.toml").write_text("\n".join(lines))
        old = os.stat(root / "b.toml").st_mtime - 5
        os.utime(root / "b.toml", (old, old))
        env = SourceEnv(root / "state", read_only=False)
        adapter = LocalTracker(LocalConfig(target=str(root / "b.toml")), env)
        store = ClaimStore(adapter.store_path)
        for n in range(20, N + 1, 20):
            store.claim(f"I-{n}", "bench", 60)
            store.settle(f"I-{n}", "bench", "failed", "broke")
        store.close()
        reader = LocalTracker(LocalConfig(target=str(root / "b.toml")),
                              SourceEnv(root / "state", read_only=True))
        clock = [0.0]
        board_path = root / "board.md"
        dash = Dashboard(reader.dashboard(str(board_path)), clock=lambda: clock[0])
        seen: list[tuple[int, int] | None] = [None]

        def count() -> str:
            st = board_path.stat() if board_path.exists() else None
            now = (st.st_ino, st.st_mtime_ns) if st else None
            wrote = now != seen[0]
            seen[0] = now
            return f"   0 requests, {'1 file write (a rename)' if wrote else '0 file writes'}"

        def change() -> None:
            store = ClaimStore(adapter.store_path)
            store.claim("I-1", "bench", 60)
            store.settle("I-1", "bench", "done", None)
            store.close()

        def tick() -> None:
            board_path.write_text(_tick(board_path.read_text()))
            count()

        steps(dash, lambda: compute_ready_set(reader.snapshot(), now=datetime.now(UTC)), count,
              change, tick, clock)
        reader.close()
        adapter.close()
        dash.board.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["github", "gitlab", "jira", "local"]
    for name in chosen:
        {"github": github, "gitlab": gitlab, "jira": jira, "local": local}[name]()
