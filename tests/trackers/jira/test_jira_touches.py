"""`--exclusive-by touches` on Jira: `Touches:` lines read from the description (REST v2
strings; ADF documents walked as Atlassian describes them), only when the option is in use, kept
current by deltas, and shown by `jr2 ready` (a dry run that writes nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jira_helpers import make_adapter

from jr2_sources.capabilities.deltas.incremental import Delta
from jr2_sources.capabilities.limits.policy import Limits
from jr2_sources.testing.fakes.jira_server import FakeJira
from jr2_sources.trackers.jira.description import description_text

HERE = Path(__file__).resolve().parent
LAUNCHER = [sys.executable, str(HERE / "jira_jr2.py")]
JQL = "project = ENG AND labels = agent ORDER BY created"
TOUCHES = Limits.parse(None, ["touches"])


def _text(text: str, *marks: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "text", "text": text}
    if marks:
        node["marks"] = [{"type": m} for m in marks]
    return node


def _para(*inline: dict[str, Any]) -> dict[str, Any]:
    return {"type": "paragraph", "content": list(inline)}


def test_an_adf_description_is_walked_block_by_block() -> None:
    """Atlassian's ADF: block nodes (heading, paragraph, lists, panel) hold inline nodes (text,
    hardBreak, mention...); each block holding inline content is a line, a hardBreak starts a
    new one, marks do not change the text."""
    doc = {"type": "doc", "version": 1, "content": [
        {"type": "heading", "attrs": {"level": 3}, "content": [_text("Plan")]},
        _para(_text("Fix it, says "), {"type": "mention", "attrs": {"id": "x", "text": "@a"}},
              {"type": "hardBreak"}, _text("Touches:", "strong"), _text(" db, Cache")),
        {"type": "bulletList", "content": [{"type": "listItem", "content": [
            _para(_text("touches: api"))]}]},
        {"type": "panel", "attrs": {"panelType": "info"}, "content": [
            _para(_text("Touches"), _text(": ui"))]},
        {"type": "rule"},
        _para(_text("not touches: here")),
    ]}
    text = description_text(doc)
    assert text == ("Plan\nFix it, says \nTouches: db, Cache\ntouches: api\nTouches: ui\n"
                    "not touches: here")
    assert TOUCHES.groups_of([], text) == ("api", "cache", "db", "ui")
    assert description_text("h3. Plan\r\n* *Touches:* db") == "h3. Plan\r\n* *Touches:* db"
    assert TOUCHES.groups_of([], "h3. Plan\n* *Touches:* db") == ("db",)
    assert description_text(None) is None and description_text(42) is None
    assert description_text({"type": "doc", "version": 1, "content": []}) == ""


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_descriptions_are_read_only_with_touches_and_deltas_keep_the_groups_current(
        cloud: bool) -> None:
    jira = FakeJira(cloud=cloud).start()
    try:
        a = jira.add_issue("a", labels=["agent"], description="Touches: db")
        b = jira.add_issue("b", labels=["agent"], description="Nothing yet")
        plain = make_adapter(jira.url, jql=JQL)
        plain.snapshot()
        asked = [e["body"]["fields"] for e in jira.requests("POST", "/search")]
        assert asked and not any("description" in f for f in asked)  # off: not read
        ad = make_adapter(jira.url, jql=JQL)
        TOUCHES.prepare(ad)
        snapshot, changes = TOUCHES.tagging(ad.snapshot, ad.changes)
        assert changes is not None
        first = changes()
        assert {i.id: i.groups for i in first.items} == {a: ("db",), b: ()}
        jira.set_description(b, "Now it does.\n\nTouches: DB, queue")
        got = changes()
        assert isinstance(got, Delta)
        assert {i.id: i.groups for i in got.items} == {b: ("db", "queue")}
        jira.set_description(a, "Touches: nothing-now")
        got = changes()
        assert isinstance(got, Delta)
        assert {i.id: i.groups for i in got.items} == {a: ("nothing-now",)}
        assert {i.id: i.groups for i in snapshot().items} == {a: ("nothing-now",),
                                                              b: ("db", "queue")}
    finally:
        jira.stop()


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_jr2_ready_exclusive_by_touches_shows_group_busy_and_writes_nothing(
        cloud: bool, tmp_path: Path) -> None:
    jira = FakeJira(cloud=cloud).start()
    try:
        a = jira.add_issue("a", labels=["agent"], description="Touches: db")
        b = jira.add_issue("b", labels=["agent"], description="* Touches: api, DB")
        c = jira.add_issue("c", labels=["agent"], description="Touches: api-docs")
        holder = make_adapter(jira.url, jql=JQL)
        TOUCHES.prepare(holder)
        [item] = [i for i in TOUCHES.tagging(holder.snapshot, None)[0]().items if i.id == a]
        assert holder.claim(item, "pool-1", 600)
        jira.clear_log()
        env = {k: v for k, v in os.environ.items()
               if k not in ("JIRA_PAT", "JIRA_API_TOKEN", "JIRA_EMAIL")}
        env.update({"JIRA_EMAIL": "bot@example.com", "JIRA_API_TOKEN": "test-token-123456"}
                   if cloud else {"JIRA_PAT": "test-token-123456"})
        env["JR2_STATE_DIR"] = str(tmp_path / ".jr2")
        res = subprocess.run([*LAUNCHER, "ready", f"jira:{jira.url}", "--jql", JQL,
                              "--exclusive-by", "touches", "--json"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        data = json.loads(res.stdout)
        assert [e["id"] for e in data["ready"]] == [c]
        [blocked] = [e for e in data["blocked"] if e["id"] == b]
        assert blocked["reasons"] == [{"kind": "group_busy", "group": "db", "held_by": a}]
        sent = {(e["method"], e["path"]) for e in jira.requests()}
        assert all(m == "GET" or p.endswith(("/search/jql", "/search", "/comment/list"))
                   for m, p in sent), sent
        assert not (tmp_path / ".jr2").exists()
    finally:
        jira.stop()


def test_a_touches_line_a_person_saves_as_adf_on_cloud_is_read_the_same_by_v2_and_v3() -> None:
    """Cloud keeps a description a person saves in its editor as an ADF document (REST v3's
    "Edit issue" takes ADF). A pool reads it through REST v2 (a string; the fake renders
    paragraphs of text, marks dropped) and the dashboard's reader through REST v3 (the
    document, walked by `description_text`): both give the same groups, and so does the
    wiki-markup spelling of the bold mark (`*Touches:*`, Atlassian's text formatting
    notation). The pool's reading stays on REST v2."""
    from jr2_sources.trackers.jira.client import API3

    jira = FakeJira(cloud=True).start()
    try:
        key = jira.add_issue("a", labels=["agent"], description="nothing yet")
        doc = {"type": "doc", "version": 1, "content": [
            _para(_text("Plan: move the index.")),
            _para(_text("Touches:", "strong"), _text(" DB, cache")),
            _para(_text("not a touches: line")),
        ]}
        jira.set_description(key, doc, "alice")
        ad = make_adapter(jira.url, jql=JQL)
        TOUCHES.prepare(ad)
        jira.clear_log()
        [item] = TOUCHES.tagging(ad.snapshot, None)[0]().items
        assert item.groups == ("cache", "db")
        assert {e["path"].split("/")[3] for e in jira.requests()} == {"2"}
        v3 = ad.client.get(f"/issue/{key}", {"fields": "description"}, api=API3).data
        stored = v3["fields"]["description"]
        assert stored == doc  # REST v3 gives the document as the person saved it
        assert TOUCHES.groups_of([], description_text(stored)) == item.groups
        assert TOUCHES.groups_of([], "Plan: move the index.\n\n*Touches:* DB, cache"
                                 ) == item.groups
    finally:
        jira.stop()
