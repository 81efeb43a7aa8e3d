"""The dashboard issue on Jira Cloud, end to end against the fake Jira: `jr2 dashboard` and
`jr2 work --dashboard KEY` (jr2_sources/trackers/fake/board.py,
jr2_sources/capabilities/dashboard/adf*.py). Every description jr2 writes is validated against the
vendored ADF schema (fixtures/adf)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from adfschema import valid
from jira_helpers import make_adapter

from jr2_sources.capabilities.dashboard.adf import ADF_LAYOUT, END_TEXT, START_TEXT, dumps, key_of
from jr2_sources.capabilities.dashboard.command import DashboardLoop
from jr2_sources.capabilities.dashboard.sync import Dashboard
from jr2_sources.capabilities.dashboard.wiki import WIKI_END, WIKI_START
from jr2_sources.capabilities.webhooks import Verdict
from jr2_sources.readyset import compute_ready_set
from jr2_sources.testing.fakes.jira_server import API3, TEXT_LIMIT, FakeJira

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
LAUNCHER = [sys.executable, str(HERE / "jira_jr2.py")]
JQL = ["--jql", "project = ENG AND labels = agent ORDER BY created"]
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]
TOKEN = "test-token-123456"
BOARD = "ENG-4"
BOARD_PATH = f"{API3}/issue/{BOARD}"


def env_for(tmp: Path) -> dict[str, str]:
    env = dict(os.environ, JIRA_EMAIL="bot@example.com", JIRA_API_TOKEN=TOKEN,
               JR2_STATE_DIR=str(tmp / ".jr2"))
    env.pop("JIRA_PAT", None)
    return env


def jr2(fake: FakeJira, tmp: Path, *args: str, timeout: float = 120
        ) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([*LAUNCHER, *args], cwd=tmp, env=env_for(tmp), capture_output=True,
                         text=True, timeout=timeout)
    assert TOKEN not in res.stdout + res.stderr  # secrets never appear in output
    return res


def dashboard(fake: FakeJira, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return jr2(fake, tmp, "dashboard", f"jira:{fake.url}", *JQL, "--issue", BOARD, *FAST,
               *extra)


def seed(fake: FakeJira) -> None:
    """ENG-1 ready, ENG-2 failed, ENG-3 blocked by ENG-1 (all labelled agent), ENG-4 the
    dashboard with a person's text."""
    one = fake.add_issue("Ready one", labels=["agent"])
    fake.add_issue("Broke", labels=["agent", "jr2:failed"])
    three = fake.add_issue("Waits", labels=["agent"])
    fake.add_link(one, three)
    fake.add_issue("Dashboard")
    fake.issue(BOARD).description = doc(para("Our board: tick a box to act."))


def para(text: str) -> dict[str, Any]:
    return {"type": "paragraph", "content": [{"type": "text", "text": text}]}


def doc(*nodes: dict[str, Any]) -> dict[str, Any]:
    return {"type": "doc", "version": 1, "content": list(nodes)}


def description(fake: FakeJira) -> dict[str, Any]:
    value = fake.issue(BOARD).description
    assert isinstance(value, dict)
    return value


def section(fake: FakeJira) -> str:
    parts = ADF_LAYOUT.split(dumps(description(fake)))
    assert parts.section is not None
    return parts.section


def puts(fake: FakeJira, path: str = BOARD_PATH) -> list[dict[str, Any]]:
    return fake.requests("PUT", f"^{path}$")


def writes_elsewhere(fake: FakeJira) -> list[tuple[str, str]]:
    return [(e["method"], e["path"]) for e in fake.log if e["method"] != "GET"
            and e["path"] != BOARD_PATH and not e["path"].endswith(("/search/jql",
                                                                     "/comment/list"))]


def tick(fake: FakeJira, key: str, person: str = "pat") -> None:
    """`person` ticks the box `key` in the description (saved as one edit)."""
    body = json.loads(json.dumps(description(fake)))
    hit = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "taskItem" and node["attrs"]["localId"] == key:
                node["attrs"]["state"] = "DONE"
                hit.append(node)
            for child in node.get("content") or []:
                walk(child)
    walk(body)
    assert hit, body
    fake.set_description(BOARD, body, person)


def test_jr2_dashboard_writes_an_adf_description_once_and_not_again_while_unchanged(
        fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    first = dashboard(fake, tmp_path)
    assert first.returncode == 0 and "written" in first.stderr, first.stderr
    written = puts(fake)
    assert len(written) == 1
    sent = written[0]["body"]
    assert list(sent) == ["fields"] and list(sent["fields"]) == ["description"]
    valid(sent["fields"]["description"])
    got = description(fake)
    assert got["content"][0] == para("Our board: tick a box to act.")  # the person's text
    text = section(fake)
    assert "Failed (1)" in text and "Ready (1)" in text and "Blocked (1)" in text
    boxes = ADF_LAYOUT.ticks(text)
    assert [(t.kind, t.item_id, t.ticked) for t in boxes] == [("retry", "ENG-2", False)]
    assert BOARD not in text
    for _ in range(2):
        again = dashboard(fake, tmp_path)
        assert again.returncode == 0 and "unchanged" in again.stderr, again.stderr
    assert len(puts(fake)) == 1 and description(fake) == got
    assert writes_elsewhere(fake) == []  # read-only on the backlog's items


def test_a_persons_content_around_the_section_survives_and_attrs_jira_adds_do_not_rewrite(
        fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    assert dashboard(fake, tmp_path).returncode == 0
    body = description(fake)
    content = body["content"]
    start = next(i for i, n in enumerate(content) if START_TEXT in json.dumps(n))
    end = next(i for i, n in enumerate(content) if END_TEXT in json.dumps(n))
    mine = [{"type": "heading", "attrs": {"level": 2},
             "content": [{"type": "text", "text": "Team notes"}]},
            {"type": "taskList", "attrs": {"localId": "t1"}, "content": [
                {"type": "taskItem", "attrs": {"localId": "t2", "state": "DONE"},
                 "content": [{"type": "text", "text": "a person's own task"}]}]}]
    middle = json.loads(json.dumps(content[start:end + 1]))
    for node in middle:  # as Jira may store it: attributes jr2 did not send
        if node.get("type") == "table":
            node["attrs"]["localId"] = "abc-123"
    fake.set_description(BOARD, doc(*mine, *middle, para("Signed, a person 🙂")), "pat")
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert "unchanged" in res.stderr, res.stderr  # same state: no rewrite
    fake.add_issue("New work", labels=["agent"])
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "written" in res.stderr, res.stderr
    after = description(fake)
    valid(after)
    assert after["content"][:2] == mine and after["content"][-1] == para("Signed, a person 🙂")
    assert "New work" in section(fake)


def test_broken_markers_write_nothing(fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    assert dashboard(fake, tmp_path).returncode == 0
    body = description(fake)
    body["content"] = [n for n in body["content"] if END_TEXT not in json.dumps(n)]
    fake.set_description(BOARD, body, "pat")
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "broken" in res.stderr, res.stderr
    assert len(puts(fake)) == 1


def test_a_retry_tick_by_an_editor_clears_the_failed_label_and_next_work_runs_it(
        fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    fake.editors.add("acc-pat")
    assert dashboard(fake, tmp_path).returncode == 0
    tick(fake, key_of("retry", "ENG-2"))
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "retried ENG-2" in res.stderr, res.stderr
    assert "jr2:failed" not in fake.issue("ENG-2").labels
    drawn = ADF_LAYOUT.ticks(section(fake))
    assert not any(t.ticked for t in drawn) and "ENG-2" not in {t.item_id for t in drawn}
    again = dashboard(fake, tmp_path, "--write-interval", "10s")  # the tick is consumed
    assert "retried" not in again.stderr
    removes = [e for e in fake.requests("PUT", r"/rest/api/2/issue/ENG-2$")]
    assert [e["body"] for e in removes] == [{"update": {"labels": [{"remove": "jr2:failed"}]}}]
    work = jr2(fake, tmp_path, "work", f"jira:{fake.url}", *JQL, *FAST,
               "--on-success-transition", "Done", "--", "true")
    assert work.returncode == 0, work.stderr
    assert fake.issue("ENG-2").status == "Done" and fake.issue(BOARD).status == "To Do"
    assert fake.issue(BOARD).comments == []  # the dashboard issue was never claimed


def test_a_tick_by_someone_without_edit_issues_is_ignored_and_reported(
        fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    assert dashboard(fake, tmp_path).returncode == 0
    tick(fake, key_of("retry", "ENG-2"), person="eve")  # eve may not edit issues
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0, res.stderr
    assert "ignored the tick for ENG-2: ticked in an edit by Eve, who may not edit ENG-2" \
        in res.stderr, res.stderr
    assert "jr2:failed" in fake.issue("ENG-2").labels
    assert fake.requests("PUT", r"/rest/api/2/issue/ENG-2$") == []
    drawn = ADF_LAYOUT.ticks(section(fake))  # drawn unticked again
    assert [(t.item_id, t.ticked) for t in drawn] == [("ENG-2", False)]


GATED_WORKER = r'''
import os, sys
with open(sys.argv[1], "a") as out:
    out.write(f"{os.environ['JR2_ITEM_ID']} {os.environ.get('JR2_GATE_DEPLOY', '-')}\n")
if os.environ["JR2_ITEM_ID"] == "ENG-1" and "JR2_GATE_DEPLOY" not in os.environ:
    print("jr2: await-approval deploy ship it?")
    sys.exit(79)
'''


def test_an_approve_tick_answers_the_gate_and_the_next_jr2_work_runs_it_approved(
        fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    fake.editors.add("acc-pat")
    (tmp_path / "worker.py").write_text(GATED_WORKER)
    runs = tmp_path / "runs"
    work = ["work", f"jira:{fake.url}", *JQL, "--gate", "deploy", *FAST,
            "--on-success-transition", "Done", "--", sys.executable,
            str(tmp_path / "worker.py"), str(runs)]
    jr2(fake, tmp_path, *work)
    assert runs.read_text().splitlines() == ["ENG-1 -"]
    first = dashboard(fake, tmp_path)
    assert first.returncode == 0, first.stderr
    valid(description(fake))
    boxes = [t for t in ADF_LAYOUT.ticks(section(fake)) if t.kind == "approve"]
    assert [(t.item_id, t.gate, t.ticked) for t in boxes] == [("ENG-1", "deploy", False)]
    tick(fake, key_of("approve", "ENG-1", "deploy"))
    res = dashboard(fake, tmp_path, "--write-interval", "10s")
    assert res.returncode == 0 and "approved deploy for ENG-1" in res.stderr, res.stderr
    answers = [b for b in fake.comment_bodies("ENG-1") if "jr2:answer" in b]
    assert len(answers) == 1 and "a tick on jira:ENG-4" in answers[0]
    assert not any(t.kind == "approve" for t in ADF_LAYOUT.ticks(section(fake)))
    done = jr2(fake, tmp_path, *work)
    assert "2 done" in done.stderr, done.stderr  # ENG-2 stays failed
    assert runs.read_text().splitlines() == ["ENG-1 -", "ENG-1 approved", "ENG-3 -"]
    assert fake.issue(BOARD).comments == []


def test_the_description_stays_within_jiras_limit_and_a_full_one_is_not_written(
        fake: FakeJira, tmp_path: Path) -> None:
    for n in range(400):
        fake.add_issue(f"Item {n} " + "long title words " * 6, labels=["agent"])
    fake.add_issue("Dashboard")  # ENG-401
    board = "ENG-401"
    res = jr2(fake, tmp_path, "dashboard", f"jira:{fake.url}", *JQL, "--issue", board, *FAST)
    assert res.returncode == 0 and "written" in res.stderr, res.stderr
    sent = fake.requests("PUT", f"^{API3}/issue/{board}$")[0]["body"]["fields"]["description"]
    valid(sent)
    assert TEXT_LIMIT - 3000 < len(dumps(sent)) <= TEXT_LIMIT
    assert "more" in json.dumps(sent)  # cut with an "… and N more" row
    huge = doc(para("x" * (TEXT_LIMIT - 200)))
    fake.set_description(board, huge, "pat")
    res = jr2(fake, tmp_path, "dashboard", f"jira:{fake.url}", *JQL, "--issue", board, *FAST,
              "--write-interval", "10s")
    assert res.returncode == 0 and "full" in res.stderr and "Jira's limit" in res.stderr
    assert len(fake.requests("PUT", f"^{API3}/issue/{board}$")) == 1
    assert fake.issue(board).description == huge


def test_jr2_ready_never_writes(fake: FakeJira, tmp_path: Path) -> None:
    seed(fake)
    assert dashboard(fake, tmp_path).returncode == 0
    fake.clear_log()
    ready = jr2(fake, tmp_path, "ready", f"jira:{fake.url}", *JQL)
    assert ready.returncode == 0, ready.stderr
    assert fake.log and all(e["method"] == "GET" or e["path"].endswith("/search/jql")
                            for e in fake.log)
    assert len(puts(fake)) == 0


def test_on_data_center_the_dashboard_is_read_only_wiki_markup(tmp_path: Path) -> None:
    """Data Center keeps the description as wiki markup (REST v2): the same report, no boxes,
    a one-line note at start, the person's text kept, escaped titles, and no rewrite while
    nothing changed."""
    dc = FakeJira(cloud=False).start()
    try:
        seed(dc)
        dc.add_issue("[~admin] |cell| {code} *bold* h1. x", labels=["agent"])
        dc.issue(BOARD).description = "h2. Our board\nKeep this."
        env = dict(env_for(tmp_path), JIRA_PAT=TOKEN)
        env.pop("JIRA_EMAIL")
        env.pop("JIRA_API_TOKEN")
        cmd = [*LAUNCHER, "dashboard", f"jira:{dc.url}", *JQL, "--issue", BOARD, *FAST]
        res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 0 and "written" in res.stderr, res.stderr
        assert TOKEN not in res.stderr
        note = [line for line in res.stderr.splitlines() if "read-only" in line]
        assert len(note) == 1 and "ticks need Jira Cloud" in note[0]
        text = dc.issue(BOARD).description
        assert isinstance(text, str) and text.startswith("h2. Our board\nKeep this.\n\n")
        assert WIKI_START in text and text.rstrip().endswith(WIKI_END)
        assert "h3. Failed (1)" in text and "remove its failed label" in text
        assert "\\[\\~admin\\] \\|cell\\| \\{code\\} \\*bold\\*" in text
        outside_graph = text.split("{noformat}")[0]  # the graph's text is not markup
        assert "[~admin]" not in outside_graph and "[ ]" not in text
        sent = dc.requests("PUT", f"^/rest/api/2/issue/{BOARD}$")
        assert len(sent) == 1 and sent[0]["body"] == {"fields": {"description": text}}
        again = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=120)
        assert again.returncode == 0 and "unchanged" in again.stderr, again.stderr
        assert [(e["method"], e["path"]) for e in dc.log if e["method"] != "GET"
                and not e["path"].endswith("/search")] == [("PUT", f"/rest/api/2/issue/{BOARD}")]
    finally:
        dc.stop()


def test_a_bad_key_or_a_backlog_item_is_refused_in_one_line(fake: FakeJira,
                                                              tmp_path: Path) -> None:
    seed(fake)
    for issue, said in (("7", "expected a Jira issue key"),
                        ("ENG-1", "one of the backlog's own items"),
                        ("ENG-99", "no such issue")):
        res = jr2(fake, tmp_path, "dashboard", f"jira:{fake.url}", *JQL, "--issue", issue)
        assert res.returncode == 2 and said in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    assert [e for e in fake.log if e["method"] != "GET"
            and not e["path"].endswith("/search/jql")] == []


def test_the_jira_board_names_its_limits_through_its_target(fake: FakeJira,
                                                             tmp_path: Path) -> None:
    """One mechanism for limits (dashboard.target): Jira's 32,767 characters and a 10 s floor
    whose reason is said in Jira's terms, not GitHub's."""
    seed(fake)
    adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent", read_only=True)
    assert Dashboard(adapter.dashboard(BOARD)).limit == TEXT_LIMIT
    res = dashboard(fake, tmp_path, "--write-interval", "5s")
    assert res.returncode == 2 and "at least 10s" in res.stderr and "Jira" in res.stderr
    assert "GitHub" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert len(puts(fake)) == 0


def test_jr2_work_dashboard_updates_while_the_pool_runs_and_at_the_end(
        fake: FakeJira, tmp_path: Path) -> None:
    for n in range(3):
        fake.add_issue(f"Work {n + 1}", labels=["agent"])
    fake.add_issue("Dashboard")
    res = jr2(fake, tmp_path, "work", f"jira:{fake.url}", *JQL, *FAST, "--cap", "2",
              "--on-success-transition", "Done", "--dashboard", BOARD,
              "--dashboard-interval", "10s", "--", "sleep", "3")
    assert res.returncode == 0, res.stderr
    writes = puts(fake)
    assert len(writes) >= 2, [e["body"] for e in writes]
    for e in writes:
        valid(e["body"]["fields"]["description"])
    first = json.dumps(writes[0]["body"])
    last = json.dumps(writes[-1]["body"])
    assert "In progress (1)" in first or "In progress (2)" in first, first
    assert "0 ready, 0 in progress, 0 failed" in last, last
    assert all(fake.issue(f"ENG-{n}").status == "Done" for n in (1, 2, 3))
    assert fake.issue(BOARD).status == "To Do" and fake.issue(BOARD).comments == []


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def test_its_own_edits_never_wake_the_pool_and_a_persons_edit_looks_at_once(
        fake: FakeJira) -> None:
    seed(fake)
    adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent")
    dash = Dashboard(adapter.dashboard(BOARD))
    assert dash.update(lambda: compute_ready_set(adapter.snapshot(), now=_now())).wrote
    loop = DashboardLoop(dash, lambda: None, lambda: None)
    receive = loop.receiver(lambda h, b, s: Verdict(200, True, "issue updated"))

    def delivery(key: str, user: dict[str, Any]) -> bytes:
        return json.dumps({"webhookEvent": "jira:issue_updated", "user": user,
                           "issue": {"key": key, "fields": {}},
                           "changelog": {"items": [{"field": "description",
                                                    "fieldId": "description"}]}}).encode()

    own = receive({}, delivery(BOARD, fake.me), None)
    assert (own.wake, loop._poked.is_set()) == (False, False)
    person = receive({}, delivery(BOARD, fake.person("pat")), None)
    assert (person.wake, loop._poked.is_set()) == (False, True)
    assert receive({}, delivery("ENG-1", fake.person("pat")), None).wake


def test_what_the_dashboard_sends_and_gets_is_described_by_atlassians_openapi(
        fake: FakeJira) -> None:
    """Every request of an update with a tick (read with the changelog, retry, write) is a
    documented operation with documented parameters and body fields; the answer of "Get issue"
    with `expand=changelog` holds only documented fields, down to each history's."""
    from test_jira_description import _answer_schema, _operation, _prop, _props, _resolve

    seed(fake)
    fake.editors.add("acc-pat")
    adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent")
    board = adapter.dashboard(BOARD)
    board.check()
    dash = Dashboard(board, interval=10.0, clock=lambda: 0.0)

    def read() -> Any:
        return compute_ready_set(adapter.snapshot(), now=_now())
    assert dash.update(read).wrote
    tick(fake, key_of("retry", "ENG-2"))
    dash.clock = lambda: 100.0
    step = dash.update(read)
    assert step.acted == ["retried ENG-2"] and step.wrote
    sent = fake.requests()
    assert {(e["method"], e["path"]) for e in sent} >= {
        ("GET", BOARD_PATH), ("PUT", BOARD_PATH), ("PUT", "/rest/api/2/issue/ENG-2")}
    for e in sent:
        op = _operation(e["method"], e["path"].replace(API3, "/rest/api/2"))
        assert op is not None, f"undocumented: {e['method']} {e['path']}"
        declared = {p["name"] for p in op.get("parameters") or [] if p.get("in") == "query"}
        assert set(e["query"]) <= declared, (e["path"], set(e["query"]) - declared)
        if isinstance(e["body"], dict):
            assert set(e["body"]) <= _props((((op.get("requestBody") or {}).get("content")
                                              or {}).get("application/json") or {})
                                            .get("schema"))
    op = _operation("GET", "/rest/api/2/issue/ENG-4")
    assert op is not None
    expand = next(p for p in op["parameters"] if p["name"] == "expand")
    assert "changelog" in expand["description"] and "most recent" in expand["description"]
    got = adapter.client.get(f"/issue/{BOARD}", {"fields": "description",
                                                 "expand": "changelog"}, api=API3).data
    schema = _answer_schema(op)
    assert set(got) <= _props(schema)
    page = _resolve(_prop(schema, "changelog"))
    assert got["changelog"]["histories"] and set(got["changelog"]) <= _props(page)
    history = _resolve(_prop(page, "histories")).get("items")
    change = _resolve(_prop(history, "items")).get("items")
    for h in got["changelog"]["histories"]:
        assert set(h) <= _props(history), set(h) - _props(history)
        assert all(set(i) <= _props(change) for i in h["items"])


def test_every_editor_since_jr2s_last_write_must_may_edit_and_an_unknown_tick_is_ignored(
        fake: FakeJira) -> None:
    """A tick counts only when each person who edited the description since jr2's last write
    holds Edit Issues on the item: pat ticks, eve edits after, the tick is ignored; a box
    that turns DONE with no edit of a person in the history (the history cut, or a save with
    jr2's own account) is ignored too."""
    seed(fake)
    fake.editors.add("acc-pat")
    adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent")
    board = adapter.dashboard(BOARD)
    t = [0.0]
    dash = Dashboard(board, interval=10.0, clock=lambda: t[0])

    def read() -> Any:
        return compute_ready_set(adapter.snapshot(), now=_now())

    def update() -> Any:
        t[0] += 60
        return dash.update(read)

    assert update().wrote
    retry = key_of("retry", "ENG-2")
    tick(fake, retry, person="pat")
    body = description(fake)
    body["content"].insert(0, para("eve was here"))
    fake.set_description(BOARD, body, "eve")
    assert update().acted == ["ignored the tick for ENG-2: ticked in an edit by Eve, who may "
                              "not edit ENG-2"]
    tick(fake, retry, person=None)  # saved with jr2's own account: no person to vouch for it
    assert update().acted == ["ignored the tick for ENG-2: who ticked it is not in the issue's "
                              "history"]
    with fake.lock:  # 150 label edits by pat after jr2's last write: more than Jira returns
        issue = fake.issue(BOARD)
        for n in range(150):
            fake._record(issue, fake.person("pat"), [
                {"field": "labels", "fieldtype": "jira", "fieldId": "labels", "from": None,
                 "fromString": "", "to": None, "toString": f"n{n}"}])
    tick(fake, retry, person="pat")
    assert update().acted == ["ignored the tick for ENG-2: the issue's history is too long to "
                              "tell who ticked it; tick it again"]
    assert "jr2:failed" in fake.issue("ENG-2").labels
    tick(fake, retry, person="pat")
    assert update().acted == ["retried ENG-2"]
    assert "jr2:failed" not in fake.issue("ENG-2").labels


def test_a_tick_whose_editor_cannot_be_checked_is_ignored_and_says_why(fake: FakeJira) -> None:
    """Without Administer Projects jr2's account cannot ask who holds Edit Issues (a 403): no
    tick is acted on, and the line says it was the check, not the person."""
    seed(fake)
    fake.editors.add("acc-pat")
    adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent")
    t = [0.0]
    dash = Dashboard(adapter.dashboard(BOARD), interval=10.0, clock=lambda: t[0])

    def update() -> Any:
        t[0] += 60
        return dash.update(lambda: compute_ready_set(adapter.snapshot(), now=_now()))

    assert update().wrote
    fake.fault(403, path="/user/permission/search", times=10,
               message="You do not have the permission to see the specified project.")
    tick(fake, key_of("retry", "ENG-2"), person="pat")
    assert update().acted == ["ignored the tick for ENG-2: ticked in an edit by Pat, whose Edit "
                              "Issues jr2 cannot check (its account needs Administer Projects)"]
    assert "jr2:failed" in fake.issue("ENG-2").labels
