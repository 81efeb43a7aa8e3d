"""Conformance against Atlassian's own description (fixtures/jira/atlassian/platform-subset.json,
cut from swagger-v3.v3.json): every request jr2 sends to the fake Jira Cloud is a documented
operation with documented query parameters and body fields, and the fake answers only with
documented fields. The description covers /rest/api/3; jr2 calls /rest/api/2, the same
operations."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from jira_helpers import FIXTURES, make_adapter

from jr2_core import Failure, Outcome
from jr2_sources.testing.fakes.jira_server import FakeJira

DESC = json.loads((FIXTURES / "atlassian" / "platform-subset.json").read_text())
SCHEMAS: dict[str, Any] = DESC["components"]["schemas"]


def _resolve(schema: Any) -> dict[str, Any]:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[1]]
    return schema if isinstance(schema, dict) else {}


def _props(schema: Any) -> set[str]:
    schema = _resolve(schema)
    names = set(schema.get("properties") or {})
    for part in schema.get("allOf") or []:
        names |= _props(part)
    return names


def _prop(schema: Any, name: str) -> Any:
    schema = _resolve(schema)
    found = (schema.get("properties") or {}).get(name)
    for part in schema.get("allOf") or []:
        found = found or _prop(part, name)
    return found


def _operation(method: str, path: str) -> dict[str, Any] | None:
    v3 = "/rest/api/3" + path.removeprefix("/rest/api/2")
    for template, ops in DESC["paths"].items():
        if re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)), v3):
            op = ops.get(method.lower())
            if op is not None:
                return dict(op)
    return None


def _body_schema(op: dict[str, Any]) -> Any:
    content = (op.get("requestBody") or {}).get("content") or {}
    return (content.get("application/json") or {}).get("schema")


def _answer_schema(op: dict[str, Any], status: int = 200) -> Any:
    answer = (op.get("responses") or {}).get(str(status)) or {}
    return ((answer.get("content") or {}).get("application/json") or {}).get("schema")


def _work(fake: FakeJira) -> None:
    """A pool's whole life on two issues: snapshot, claim (assign, in-progress), renew, settle
    done (transition) and failed, a report's snapshot."""
    a = fake.add_issue("A", labels=["agent"])
    b = fake.add_issue("B", labels=["agent"])
    fake.add_link(a, b)
    ad = make_adapter(fake.url, jql="project = ENG AND labels = agent", assign=True,
                      on_success_transition="Done", in_progress_transition="In Progress")
    item = next(it for it in ad.snapshot().items if it.id == a)
    assert ad.claim(item, "p@h", 60) and ad.renew(a, "p@h", 60)
    ad.finish(a, "p@h", Outcome("done"))
    item = next(it for it in ad.snapshot().items if it.id == b)
    assert ad.claim(item, "p@h", 60)
    ad.finish(b, "p@h", Outcome("failed", failure=Failure("boom")))
    make_adapter(fake.url, jql="project = ENG", read_only=True).snapshot()


def test_every_request_is_a_documented_operation_with_documented_fields(fake: FakeJira) -> None:
    _work(fake)
    sent = fake.requests()
    assert len({(e["method"], re.sub(r"\d+", "N", e["path"])) for e in sent}) >= 12
    for e in sent:
        op = _operation(e["method"], e["path"])
        assert op is not None, f"undocumented: {e['method']} {e['path']}"
        declared = {p["name"] for p in op.get("parameters") or [] if p.get("in") == "query"}
        assert set(e["query"]) <= declared, (e["method"], e["path"], set(e["query"]) - declared)
        body = e["body"]
        if isinstance(body, dict):
            fields = _props(_body_schema(op))
            assert set(body) <= fields, (e["method"], e["path"], set(body) - fields)


_TYPES: dict[str, Any] = {"string": str, "array": list, "object": dict, "boolean": bool,
                          "integer": int, "number": (int, float)}


def test_every_body_value_has_its_documented_type(fake: FakeJira) -> None:
    """No field is sent as `null` (nor any other type) where the description does not allow
    it: the search bodies' `expand` and `properties` among them."""
    _work(fake)
    checked = 0
    for e in fake.requests():
        op = _operation(e["method"], e["path"])
        body = e["body"]
        if op is None or not isinstance(body, dict):
            continue
        for name, value in body.items():
            schema = _resolve(_prop(_body_schema(op), name))
            kind = _TYPES.get(str(schema.get("type")))
            if kind is None:
                continue
            checked += 1
            assert (value is None and schema.get("nullable")) or isinstance(value, kind), (
                e["method"], e["path"], name, value)
    assert checked >= 10


def test_claim_writes_use_the_documented_quiet_and_property_fields(fake: FakeJira) -> None:
    """`notifyUsers` is a parameter of "Update comment" (not of "Add comment"), and
    `properties` a field of the comment both take: what jr2's renewals and markers rely on."""
    update = _operation("PUT", "/rest/api/2/issue/ENG-1/comment/1")
    add = _operation("POST", "/rest/api/2/issue/ENG-1/comment")
    listing = _operation("POST", "/rest/api/2/comment/list")
    assert update is not None and add is not None and listing is not None
    assert "notifyUsers" in {p["name"] for p in update["parameters"]}
    assert "notifyUsers" not in {p["name"] for p in add.get("parameters") or []}
    assert "properties" in _props(_body_schema(update)) & _props(_body_schema(add))
    expand = next(p for p in listing["parameters"] if p["name"] == "expand")
    assert "properties" in expand["description"]


@pytest.mark.parametrize(("method", "path", "body", "item"), [
    ("GET", "/serverInfo", None, None),
    ("GET", "/myself", None, None),
    ("GET", "/status/10000", None, None),
    ("GET", "/issue/ENG-1", None, None),
    ("GET", "/issue/ENG-1/transitions", None, ("transitions", None)),
    ("GET", "/issue/ENG-1/comment", None, ("comments", None)),
    ("POST", "/comment/list", {"ids": []}, ("values", None)),
])
def test_the_fakes_answers_hold_only_documented_fields(fake: FakeJira, method: str, path: str,
                                                      body: Any,
                                                      item: tuple[str, Any] | None) -> None:
    key = fake.add_issue("A")
    ad = make_adapter(fake.url)
    ad.snapshot()
    ad.claim(ad.snapshot().items[0], "p@h", 60)
    if body is not None:
        body = {"ids": [c["id"] for c in fake.issue(key).comments]}
    reply = ad.client.request(method, path, body=body,
                              params={"expand": "properties"} if body else None)
    op = _operation(method, "/rest/api/2" + path)
    assert op is not None
    schema = _answer_schema(op)
    extra = set(reply.data) - _props(schema)
    assert not extra, (path, extra)
    if item is not None:
        list_name, _ = item
        items = reply.data[list_name]
        assert items, f"{path}: nothing to check"
        item_schema = (_resolve(_prop(schema, list_name)) or {}).get("items")
        for entry in items:
            assert set(entry) <= _props(item_schema), (path, set(entry) - _props(item_schema))


def test_the_search_answer_and_its_issues_are_documented(fake: FakeJira) -> None:
    fake.add_issue("A")
    ad = make_adapter(fake.url)
    page = ad.client.request("POST", "/search/jql",
                             body={"jql": "project = ENG", "maxResults": 10,
                                   "fields": ["summary", "status", "issuelinks"]}).data
    op = _operation("POST", "/rest/api/2/search/jql")
    assert op is not None
    schema = _answer_schema(op)
    assert set(page) <= _props(schema)
    issue_schema = _resolve(_prop(schema, "issues")).get("items")
    assert page["issues"] and all(set(i) <= _props(issue_schema) for i in page["issues"])


def test_the_vendoring_script_reproduces_the_subset() -> None:
    """tools/vendor_descriptions.py cut the fixture: cutting it again changes nothing (every
    referenced schema is there, and only those)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "tools" / "vendor_descriptions.py"
    spec = importlib.util.spec_from_file_location("vendor_descriptions", path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    again = tool.jira_subset(DESC, DESC["x-source"])
    assert again["paths"] == DESC["paths"]
    assert again["components"]["schemas"] == DESC["components"]["schemas"]
    assert {(m, p) for p, ops in DESC["paths"].items() for m in ops} == set(tool.OPERATIONS)
