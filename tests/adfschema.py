"""The vendored Atlassian Document Format schema (fixtures/adf/full.json, from
@atlaskit/adf-schema) as one validator compiled per process: `valid(doc)`.

`jsonschema` tries the schema's `anyOf` over every node kind branch by branch and builds an
error for each branch that fails, so a 32,000-character dashboard took it 15 to 25 s (most of
the dashboard tests' time); `fastjsonschema` compiles the same draft-04 schema to Python once
and checks that document in milliseconds. `tests/sources/test_dashboard_adf.py` shows that the
two agree on documents of each kind, valid and broken.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema

SCHEMA: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "adf" / "full.json").read_text())


@functools.cache
def _compiled() -> Callable[[Any], Any]:
    return fastjsonschema.compile(SCHEMA)


def valid(doc: Any) -> None:
    """Raise AssertionError naming the first problem unless `doc` is a valid ADF document."""
    try:
        _compiled()(doc)
    except fastjsonschema.JsonSchemaException as exc:
        raise AssertionError(f"not valid ADF: {exc.message}") from None
