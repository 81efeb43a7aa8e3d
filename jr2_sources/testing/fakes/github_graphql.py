"""The fake GitHub's check of each GraphQL request against GitHub's schema, before it answers.

* The schema is the vendored subset of GitHub's own (`fixtures/github/graphql/schema.graphql`
  of a jr2 checkout, cut by `tools/vendor_github_schema.py`), built once per process. The fake
  ships without fixtures/ and graphql-core is a development dependency: without either, no
  request is checked; the tests run from a checkout with both, and check that it refuses.
* A request is refused when its query does not parse or validate, or its variables do not
  match what the query declares, as GitHub refuses one: HTTP 200 with `errors` (each a
  `message` and its `locations`) and no `data`.
* Each query text is parsed and validated once (jr2 asks the same few again at every poll).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphql import DocumentNode, GraphQLSchema

SCHEMA = Path(__file__).resolve().parents[3] / "fixtures" / "github" / "graphql" / "schema.graphql"


@functools.cache
def schema() -> GraphQLSchema | None:
    """The vendored schema, or None when it or graphql-core is not here (see the notes)."""
    try:
        from graphql import build_schema
    except ImportError:
        return None
    if not SCHEMA.is_file():
        return None
    return build_schema(SCHEMA.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=256)
def _checked(query: str) -> tuple[DocumentNode | None, tuple[dict[str, Any], ...]]:
    """The parsed query and GitHub's errors for it (none: valid)."""
    from graphql import GraphQLError, parse, validate

    try:
        doc = parse(query)
    except GraphQLError as e:
        return None, (dict(e.formatted),)
    found = schema()
    assert found is not None
    return doc, tuple(dict(e.formatted) for e in validate(found, doc))


def errors(query: str, variables: dict[str, Any]) -> list[dict[str, Any]]:
    """GitHub's `errors` for a request it refuses ([]: valid, or nothing to check it with)."""
    found = schema()
    if found is None:
        return []
    from graphql import get_operation_ast
    from graphql.execution.values import get_variable_values

    doc, problems = _checked(query)
    if problems or doc is None:
        return [dict(p) for p in problems]
    operation = get_operation_ast(doc)
    if operation is None:
        return [{"message": "An operation name is required with more than one operation"}]
    coerced = get_variable_values(found, operation.variable_definitions or (), variables)
    return [dict(e.formatted) for e in coerced] if isinstance(coerced, list) else []
