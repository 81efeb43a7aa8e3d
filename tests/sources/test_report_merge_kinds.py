"""The reasons of `--done-when merged` (`waits_for_merge`, `merged_not_green`): the JSON contract
(new kinds inside `blocked`, schema_version still 1) and every human format names the PR."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from rich.console import Console

from jr2_sources.readyset import (
    SCHEMA_VERSION,
    BlockerRef,
    ReadySet,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)
from jr2_sources.report import (
    explain,
    render_dot,
    render_json,
    render_markdown,
    render_mermaid,
    render_rich,
    render_text,
)

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
PR1, PR2 = "https://github.com/o/r/pull/7", "https://github.com/o/r/pull/8"


def merge_set() -> ReadySet:
    return compute_ready_set(Snapshot("github:o/r", [
        SnapshotItem("o/r#1", "in review"),
        SnapshotItem("o/r#2", "merged red"),
        SnapshotItem("o/r#3", "waits", blockers=[BlockerRef("o/r#1", "unmerged", PR1),
                                                 BlockerRef("o/r#2", "not_green", PR2)]),
        SnapshotItem("o/r#4", "landed", blockers=[BlockerRef("o/r#1", "done", PR1)]),
    ]), now=NOW)


def test_json_has_the_new_kinds_with_the_pr() -> None:
    data = json.loads(render_json(merge_set()))
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert [e["id"] for e in data["ready"]] == ["o/r#1", "o/r#2", "o/r#4"]
    assert data["blocked"][0]["reasons"] == [
        {"kind": "waits_for_merge", "ref": "o/r#1", "pr": PR1},
        {"kind": "merged_not_green", "ref": "o/r#2", "pr": PR2},
    ]
    assert data["cycles"] == []  # a PR wait is no graph edge of its own kind of cycle


def test_every_human_format_names_the_pr() -> None:
    rs = merge_set()
    text = render_text(rs)
    assert f"waits for the merge of o/r#1 ({PR1})" in text
    assert f"waits for green checks on the merge of o/r#2 ({PR2})" in text
    assert PR1 in render_markdown(rs) and PR2 in render_markdown(rs)
    out = io.StringIO()
    render_rich(rs, Console(file=out, width=300, color_system=None))
    assert PR1 in out.getvalue()
    explained = explain(rs, "o/r#3")
    assert f"o/r#1: ready; not merged yet: {PR1}" in explained
    assert f"o/r#2: ready; merged, checks not green: {PR2}" in explained
    assert render_mermaid(rs).count("-->") == 2 and render_dot(rs).count("->") >= 2
