"""GitHub's own REST and webhook descriptions (fixtures/github/openapi/, vendored by
`tools/vendor_github.py`), as checks a test can run on one request or one response.

Design note: GitHub's REST description is OpenAPI 3.0.3, whose schemas are JSON Schema plus
`nullable`; `_json_schema` turns `nullable: true` into a `null` alternative (the one difference
that matters for validation) and the document is then checked with `jsonschema`'s 2020-12
validator, `$ref`s resolved inside the same document. The webhook description is OpenAPI 3.1
(plain JSON Schema) and is used as it is.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPECS = Path(__file__).resolve().parents[3] / "fixtures" / "github" / "openapi"
PLANS = ("api.github.com", "ghes-3.17", "ghes-3.18", "ghes-3.19")


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects as JSON Schema (`nullable: true` -> also `null`)."""
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True:
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "type" not in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@functools.cache
def document(plan: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SPECS / f"{plan}.json").read_text())
    return doc if doc["openapi"].startswith("3.1") else _json_schema(doc)


@functools.cache
def _registry(plan: str) -> Registry:  # type: ignore[type-arg]
    resource = Resource.from_contents(document(plan), default_specification=DRAFT202012)
    return Registry().with_resource(f"urn:{plan}", resource)


def errors(plan: str, pointer: str, value: Any) -> list[str]:
    """Why `value` does not validate against the schema at JSON `pointer` of `plan` ([] = valid)."""
    validator = Draft202012Validator({"$ref": f"urn:{plan}#{pointer}"},
                                     registry=_registry(plan))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in validator.iter_errors(value)]


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def operation(plan: str, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
    """The described path template and operation a request names (None: not described)."""
    for template, item in document(plan)["paths"].items():
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path) and method.lower() in item:
            return template, item[method.lower()]
    return None


def _parameter(plan: str, param: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in param:
        name = param["$ref"].rsplit("/", 1)[1]
        param = document(plan)["components"]["parameters"][name]
    return param


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "integer" in kinds and value.lstrip("-").isdigit():
        return int(value)
    if "boolean" in kinds and value in ("true", "false"):
        return value == "true"
    return value


def request_problems(plan: str, method: str, path: str, query: str, body: Any) -> list[str]:
    """What in a request GitHub's description does not describe ([] = all described)."""
    found = operation(plan, method, unquote(path))
    if found is None:
        return [f"{method} {path}: no such operation in {plan}"]
    template, op = found
    where = f"{method} {template}"
    problems = []
    params = {p["name"]: p for p in map(lambda p: _parameter(plan, p), op.get("parameters", []))
              if p.get("in") == "query"}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name not in params:
            problems.append(f"{where}: query parameter {name!r} is not described")
            continue
        schema = params[name].get("schema", {})
        validator = Draft202012Validator(schema)
        for e in validator.iter_errors(_coerce(value, schema)):
            problems.append(f"{where}: ?{name}={value}: {e.message[:200]}")
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if body not in (None, {}) or (content is not None and op["requestBody"].get("required")):
        if content is None:
            problems.append(f"{where}: sends a body, none is described")
        else:
            ptr = (f"/paths/{_escape(template)}/{method.lower()}/requestBody/content/"
                   "application~1json/schema")
            problems += [f"{where} body: {e}" for e in errors(plan, ptr, body)]
    return problems


def response_problems(plan: str, method: str, path: str, status: int, data: Any) -> list[str]:
    """What in a response does not match the description of its operation and status."""
    found = operation(plan, method, unquote(path))
    if found is None:
        return [f"{method} {path}: no such operation in {plan}"]
    template, op = found
    responses = op.get("responses", {})
    key = str(status) if str(status) in responses else "default"
    if key not in responses:
        return [f"{method} {template}: status {status} is not described"]
    answer = responses[key]
    ptr = f"/paths/{_escape(template)}/{method.lower()}/responses/{key}"
    while "$ref" in answer:
        name = answer["$ref"].rsplit("/", 1)[1]
        answer = document(plan)["components"]["responses"][name]
        ptr = f"/components/responses/{_escape(name)}"
    content = answer.get("content", {})
    if "application/json" not in content or data is None:
        return []
    return [f"{method} {template} {status}: {e}"
            for e in errors(plan, f"{ptr}/content/application~1json/schema", data)]


@functools.cache
def webhooks() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SPECS / "webhooks.json").read_text())
    return doc


def webhook_key(event: str, action: str | None) -> str | None:
    """The description's key of an event and action (`issues`, `opened` -> `issues-opened`)."""
    name = event.replace("_", "-")
    for key in (f"{name}-{action}".replace("_", "-") if action else name, name):
        if key in webhooks()["webhooks"]:
            return key
    return None


def webhook_problems(event: str, payload: dict[str, Any]) -> list[str]:
    """Why a payload is not a described delivery of `event` ([] = valid)."""
    key = webhook_key(event, payload.get("action"))
    if key is None:
        return [f"{event}/{payload.get('action')}: not described"]
    ptr = f"/webhooks/{_escape(key)}/post/requestBody/content/application~1json/schema"
    return errors("webhooks", ptr, payload)


def examples() -> list[tuple[str, dict[str, Any]]]:
    """(event, payload) of every vendored real payload example."""
    data = json.loads((SPECS / "webhook-examples.json").read_text())
    return [(e["name"], ex) for e in data for ex in e["examples"]]
