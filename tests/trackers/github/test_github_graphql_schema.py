"""Every GraphQL query jr2 sends to GitHub is valid against GitHub's schema (the vendored subset
of fixtures/github/graphql/, GitHub's own definitions), and the fake GitHub refuses one that is
not, as GitHub does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from gh_helpers import make_client
from graphql import build_schema, parse, validate

from jr2_core.errors import SourceError
from jr2_sources.testing.fakes import github_graphql
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github import pulls

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "vendor_github_schema.py"
SCHEMA = ROOT / "fixtures" / "github" / "graphql" / "schema.graphql"
QUERIES = {**pulls.every_query(),  # and a full batch of each
           "heads_100": pulls.heads_query(range(1, 101)),
           "judge_100": pulls.query(range(1, 101), reviews=True)}


def problems(text: str) -> list[str]:
    """Why GitHub's schema refuses `text` (graphql-core's strict build of the subset)."""
    return [e.message for e in validate(github_graphql.schema(), parse(text))]  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_query_jr2_sends_validates_against_githubs_schema(name: str) -> None:
    assert problems(QUERIES[name]) == []


@pytest.mark.parametrize(("text", "why"), [
    # a field GitHub does not have
    ('query { repository(owner: "o", name: "r") { jr2Claims } }', "jr2Claims"),
    # an argument GitHub does not declare on a field it has
    (pulls.query([1]).replace("blocking(first: 100)", "blocking(first: 100, open: true)"),
     "Unknown argument 'open'"),
    # the reviews as jr2 once asked for them: GitHub's `latestReviews` takes no `writersOnly`,
    # and the subset holds only what jr2 asks for now
    (pulls.query([1], reviews=True).replace("latestOpinionatedReviews", "latestReviews"),
     "latestReviews"),
    # a field of the real schema the vendored subset leaves out: jr2 asks for nothing else
    ('query { repository(owner: "o", name: "r") { description } }', "description"),
])
def test_a_query_githubs_schema_lacks_is_refused(text: str, why: str) -> None:
    found = problems(text)
    assert found and why in found[0]


def test_the_subset_is_a_valid_schema_and_what_the_tool_gives_from_it() -> None:
    """The subset is a fixed point of the tool: cut again, it is unchanged (a query jr2 changes
    that selects a field more fails here and in the fake until the subset is regenerated)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import vendor_github_schema as tool

    text = SCHEMA.read_text(encoding="utf-8")
    build_schema(text)  # graphql-core's strict rules, unlike GitHub's full schema
    body, names = tool.subset(text)
    assert body == tool.body_of(text)
    assert names == sorted(pulls.every_query())


def test_the_vendored_subset_names_its_source_commit_and_licence() -> None:
    head = SCHEMA.read_text(encoding="utf-8")[:700]
    assert "octokit/graphql-schema" in head and "MIT" in head and "schema.graphql" in head
    assert re.search(r"\b[0-9a-f]{40}\b", head)


@pytest.mark.skipif(not os.environ.get("JR2_GITHUB_FULL_SCHEMA"),
                    reason="set JR2_GITHUB_FULL_SCHEMA to octokit/graphql-schema's schema.graphql")
def test_the_subset_is_what_the_full_schema_gives() -> None:
    res = subprocess.run([sys.executable, str(TOOL), os.environ["JR2_GITHUB_FULL_SCHEMA"],
                          "--check"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_fake_refuses_a_query_or_variables_githubs_schema_refuses(fake: FakeGitHub) -> None:
    """GitHub's way: HTTP 200, `errors` with a message and its locations, no `data`."""
    assert github_graphql.schema() is not None  # the tests run where the fake checks

    def ask(query: str, **variables: object) -> dict:
        resp = requests.post(f"{fake.url}/graphql", json={"query": query,
                                                          "variables": variables}, timeout=5)
        assert resp.status_code == 200
        return resp.json()

    made_up = ask('query { repository(owner: "o", name: "r") { jr2Claims } }')
    assert "data" not in made_up
    assert "jr2Claims" in made_up["errors"][0]["message"]
    assert made_up["errors"][0]["locations"] == [{"line": 1, "column": 45}]
    assert "errors" in ask("query {")  # does not parse
    judge = pulls.query([1])
    assert "$ids" in ask(judge, owner="o", name="r")["errors"][0]["message"]  # not sent
    assert "$name" in ask(judge, owner="o", name=3, ids=[])["errors"][0]["message"]
    assert "data" in ask(judge, owner="o", name="r", ids=[])


def test_jr2_says_what_github_refused(fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query the schema refuses fails the read with GitHub's first error, in one line."""
    fake.add_issue("o/r", "One")
    reader = pulls.PullReader(make_client(fake.url), "o/r")
    reader.reviews = True
    assert reader.read([(1, f"I_{fake.issue('o/r', 1).uid}")]).prs == {1: []}
    monkeypatch.setattr(pulls, "_REVIEWS", "\n  latestReviews(first: 20, writersOnly: true) "
                                           "{ nodes { state } }")
    refused = "GraphQL query failed: Cannot query field 'latestReviews'"
    with pytest.raises(SourceError, match=refused):
        reader.read([(1, f"I_{fake.issue('o/r', 1).uid}")])
