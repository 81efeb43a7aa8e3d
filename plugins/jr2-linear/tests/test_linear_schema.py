"""Every operation jr2-linear sends is valid against Linear's schema (the vendored subset, whose
definitions are Linear's own), and each read stays under Linear's 10,000 points a query."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_linear import MAX_COMPLEXITY, SCHEMA_PATH, complexity, schema
from graphql import parse, validate

from jr2_linear import operations as ops

TOOL = Path(__file__).resolve().parents[1] / "tools" / "vendor_schema.py"


@pytest.mark.parametrize("name", sorted(ops.ALL))
def test_every_operation_validates_against_linears_schema(name: str) -> None:
    errors = validate(schema(), parse(ops.ALL[name]))
    assert errors == [], f"{name}: {errors[0].message}"


def test_a_page_of_issues_fits_linears_complexity_limit() -> None:
    points = complexity(parse(ops.ISSUES), {"first": ops.PAGE}, "Jr2Issues")
    assert points <= MAX_COMPLEXITY
    # one more issue a page would not: PAGE is as large as the limit allows
    bigger = complexity(parse(ops.ISSUES), {"first": ops.PAGE + 1}, "Jr2Issues")
    assert bigger > MAX_COMPLEXITY


@pytest.mark.parametrize("name", ["Jr2Changed", "Jr2Held", "Jr2IssueMore", "Jr2Markers",
                                  "Jr2Setup", "Jr2Check"])
def test_other_reads_fit_the_limit(name: str) -> None:
    assert complexity(parse(ops.ALL[name]), {}, name) <= MAX_COMPLEXITY


def test_a_poll_is_cheap_in_complexity_too() -> None:
    """Linear budgets complexity per hour: the question a poll asks costs a few hundred points,
    not the ~10,000 of a page of whole issues."""
    assert complexity(parse(ops.CHANGED), {}, "Jr2Changed") <= 500


def test_the_vendored_subset_names_its_source_commit_and_licence() -> None:
    head = SCHEMA_PATH.read_text(encoding="utf-8")[:600]
    assert "linear/linear" in head and "MIT" in head and "packages/sdk/src/schema.graphql" in head
    assert any(len(w) == 40 and all(c in "0123456789abcdef" for c in w) for w in head.split())


@pytest.mark.skipif(not os.environ.get("JR2_LINEAR_FULL_SCHEMA"),
                    reason="set JR2_LINEAR_FULL_SCHEMA to Linear's full schema.graphql")
def test_the_subset_is_what_the_full_schema_gives() -> None:
    full = os.environ["JR2_LINEAR_FULL_SCHEMA"]
    res = subprocess.run([sys.executable, str(TOOL), full, "--check"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_fake_refuses_a_query_over_the_limit_and_a_field_linear_lacks() -> None:
    import json

    from fake_linear import KEY, FakeLinear

    fake = FakeLinear()
    body = json.dumps({"query": ops.ISSUES, "operationName": "Jr2Issues",
                       "variables": {"filter": {}, "first": ops.PAGE + 10}}).encode()
    status, _headers, answer = fake.answer(KEY, body)
    assert status == 400 and "too complex" in answer["errors"][0]["message"]
    made_up = json.dumps({"query": "query { viewer { id jr2Claims } }"}).encode()
    status, _headers, answer = fake.answer(KEY, made_up)
    assert status == 400 and "jr2Claims" in answer["errors"][0]["message"]
