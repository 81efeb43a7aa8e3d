"""The renderers of a Ready-set (jr2_sources.report): one test per promise."""

from __future__ import annotations

import io
import json
import random
import re
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console

from jr2_sources.readyset import (
    BlockerRef,
    BlockerState,
    Claim,
    ReadySet,
    Snapshot,
    SnapshotItem,
    compute_ready_set,
)
from jr2_sources.report import (
    GITHUB_COMMENT_BUDGET,
    explain,
    render_dot,
    render_json,
    render_markdown,
    render_mermaid,
    render_rich,
    render_text,
)

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def needs(*ids: str, state: BlockerState = "open") -> list[BlockerRef]:
    return [BlockerRef(i, state) for i in ids]


def compute(*items: SnapshotItem, done: int | None = 0) -> ReadySet:
    return compute_ready_set(Snapshot("local:backlog.toml", list(items), done), now=NOW)


def seed() -> ReadySet:
    """The seed's four tickets, with T-1 held by a pool."""
    return compute(
        SnapshotItem("T-1", "one", claim=Claim("pool-a@host", NOW - HOUR, NOW + HOUR)),
        SnapshotItem("T-2", "two", url="https://example.test/T-2"),
        SnapshotItem("T-3", "three", blockers=needs("T-1", "T-2")),
        SnapshotItem("T-4", "four", blockers=needs("T-9", state="missing")),
    )


def cycle() -> ReadySet:
    return compute(
        SnapshotItem("C-1", blockers=needs("C-2")), SnapshotItem("C-2", blockers=needs("C-1"))
    )


def big(n: int, seed_: int = 7) -> ReadySet:
    """n items, each needing up to 3 earlier ones (a DAG), with long titles."""
    rng = random.Random(seed_)
    items = [
        SnapshotItem(
            f"T-{i}",
            f"a rather long title for item {i} | with a pipe",
            url=f"https://example.test/T-{i}",
            blockers=needs(*{f"T-{rng.randrange(i)}" for _ in range(3)}) if i and i % 7 else [],
        )
        for i in range(n)
    ]
    return compute(*items)


# ---------------------------------------------------------------------------- json


def test_json_round_trips_to_the_contract_object() -> None:
    rs = seed()
    assert json.loads(render_json(rs)) == rs.to_json_obj()


def test_json_keys_are_in_the_documented_order() -> None:
    assert list(json.loads(render_json(seed()))) == [
        "schema_version",
        "source",
        "generated_at",
        "ready",
        "blocked",
        "claimed",
        "cycles",
        "counts",
    ]


def test_json_is_indented_by_two() -> None:
    assert render_json(seed()).splitlines()[1] == '  "schema_version": 1,'


def test_json_cycle_reason_keys() -> None:
    obj = json.loads(render_json(cycle()))
    assert obj["blocked"][0]["reasons"][-1] == {
        "kind": "cycle",
        "cycle": 0,
    }


def test_json_serializes_datetimes_in_extra() -> None:
    rs = compute(SnapshotItem("A", extra={"updated": NOW}))
    assert json.loads(render_json(rs))["ready"][0]["extra"] == {"updated": "2026-01-01T12:00:00Z"}


# ---------------------------------------------------------------------------- text


def test_text_says_what_a_blocked_item_waits_on_and_who_holds_it() -> None:
    assert "  T-3  waits on T-1 (held by pool-a@host), T-2" in render_text(seed()).splitlines()


def test_text_says_a_missing_blocker_does_not_exist() -> None:
    assert "  T-4  needs T-9, which does not exist" in render_text(seed()).splitlines()


def test_text_names_the_cycle() -> None:
    assert "  C-1  waits on C-2; in cycle C-1 → C-2 → C-1" in render_text(cycle()).splitlines()


def test_text_shows_claims_with_holder_and_lease() -> None:
    line = (
        "  T-1  held by pool-a@host  since 2026-01-01T11:00:00Z  lease until 2026-01-01T13:00:00Z"
    )
    assert line in render_text(seed()).splitlines()


def test_text_sections_are_in_order() -> None:
    heads = [line for line in render_text(seed()).splitlines() if not line.startswith(" ")]
    assert heads == [
        "READY (1)",
        "BLOCKED (2)",
        "CLAIMED (1)",
        "1 ready, 2 blocked, 1 claimed, 0 done",
    ]


def test_text_summary_says_done_is_unknown() -> None:
    assert (
        render_text(compute(done=None)).splitlines()[-1] == "0 ready, 0 blocked, 0 claimed"
    )


def test_text_ends_every_line_with_a_newline() -> None:
    assert render_text(seed()).endswith("0 done\n")


def test_text_keeps_an_item_on_one_line() -> None:
    assert "  A  -  two lines" in render_text(compute(SnapshotItem("A", "two\nlines"))).splitlines()


def test_text_abbreviates_a_long_cycle_in_reasons() -> None:
    n = 50
    rs = compute(
        *(SnapshotItem(f"r{i:02d}", blockers=needs(f"r{(i + 1) % n:02d}")) for i in range(n))
    )
    line = render_text(rs).splitlines()[3]  # READY, (none), BLOCKED, r00
    assert line.endswith("in cycle r00 → r01 → r02 → r03 → r04 → r05 → … → r00 (50 items)")


# ---------------------------------------------------------------------------- rich


def rich_text(rs: ReadySet) -> str:
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    render_rich(rs, console)
    return console.export_text()


def test_rich_shows_the_reasons() -> None:
    assert "waits on T-1 (held by pool-a@host), T-2" in rich_text(seed())


def test_rich_does_not_read_titles_as_markup() -> None:
    assert "[bold]x[/bold]" in rich_text(compute(SnapshotItem("A", "[bold]x[/bold]")))


# ---------------------------------------------------------------------------- markdown


def test_markdown_heading_has_the_counts() -> None:
    assert "**1 ready, 2 blocked, 1 claimed, 0 done**" in render_markdown(seed())


def test_markdown_links_an_item_with_a_url() -> None:
    assert "| [`T-2`](<https://example.test/T-2>) | two |" in render_markdown(seed())


def test_markdown_escapes_pipes_in_titles() -> None:
    md = render_markdown(compute(SnapshotItem("A", "left | right")))
    assert "| `A` | left \\| right |" in md


def test_markdown_defuses_mentions_and_issue_references() -> None:
    md = render_markdown(compute(SnapshotItem("A", "ask @alice about #12")))
    assert "ask @\u200balice about #\u200b12" in md


def test_markdown_blocked_table_gives_reasons() -> None:
    assert "| `T-4` | four | needs `T-9`, which does not exist |" in render_markdown(seed())


def test_markdown_lists_cycles() -> None:
    assert "- cycle 0: `C-1` → `C-2` → `C-1`" in render_markdown(cycle())


def test_markdown_small_graph_is_whole() -> None:
    assert "graph shows" not in render_markdown(seed())


@pytest.fixture(scope="module")
def big_markdown() -> str:
    return render_markdown(big(5_000))


def test_markdown_of_5000_items_fits_a_github_comment(big_markdown: str) -> None:
    assert len(big_markdown) < GITHUB_COMMENT_BUDGET


def test_markdown_of_5000_items_says_what_the_graph_left_out(big_markdown: str) -> None:
    assert re.search(r"_graph shows 300 of 5,000 nodes; left out: .*blocked_", big_markdown)


def test_markdown_of_5000_items_counts_the_rows_it_cut(big_markdown: str) -> None:
    shown = len(re.findall(r"^\| \[`T-\d+`\]", big_markdown, re.M))
    cut = sum(
        int(n.replace(",", "")) for n in re.findall(r"^\| … and ([\d,]+) more", big_markdown, re.M)
    )
    assert shown + cut == 5_000


def test_markdown_cuts_the_blocked_part_to_max_nodes() -> None:
    md = render_markdown(seed(), max_nodes=3)
    # the blocked part is all five nodes (T-3, T-1, T-2, T-4, T-9), so the graph is cut to three
    assert "_graph shows 3 of 5 nodes; left out: 1 blocked, 1 missing_" in md


def test_markdown_blocked_part_leaves_ready_items_without_dependents_out() -> None:
    rs = compute(SnapshotItem("A"), SnapshotItem("B"), SnapshotItem("C", blockers=needs("A")))
    md = render_markdown(rs, max_nodes=2)
    assert (
        "_graph shows only blocked items and their blockers: 2 of 3 nodes; left out: 1 ready_" in md
    )


def test_markdown_of_a_20k_cycle_fits_a_github_comment() -> None:
    n = 20_000
    rs = compute(*(SnapshotItem(f"r{i}", blockers=needs(f"r{(i + 1) % n}")) for i in range(n)))
    assert len(render_markdown(rs)) < GITHUB_COMMENT_BUDGET


# ---------------------------------------------------------------------------- graphs


def mermaid_names(text: str) -> dict[str, str]:
    """Label id -> node name, read back from `nK["id: title"]` lines."""
    return {m[2]: m[1] for m in re.finditer(r'^  (n\d+)\["([^:"#]+)', text, re.M)}


def test_mermaid_has_an_edge_from_blocker_to_blocked() -> None:
    text = render_mermaid(seed())
    names = mermaid_names(text)
    assert f"  {names['T-2']} --> {names['T-3']}" in text.splitlines()


def test_mermaid_classes_nodes_by_state() -> None:
    text = render_mermaid(seed())
    classes = dict(re.findall(r'^  n\d+\["([^:"#]+?)(?::| #40;)[^"]*"\]:::(\w+)', text, re.M))
    assert classes == {
        "T-1": "claimed",
        "T-2": "ready",
        "T-3": "blocked",
        "T-4": "blocked",
        "T-9": "missing",
    }


def test_mermaid_draws_open_children_dotted() -> None:
    text = render_mermaid(compute(SnapshotItem("P", children=needs("K")), SnapshotItem("K")))
    names = mermaid_names(text)
    assert f"  {names['K']} -.-> {names['P']}" in text.splitlines()


def test_mermaid_escapes_quotes_and_brackets() -> None:
    text = render_mermaid(compute(SnapshotItem('A"]', 'say "hi" [now]')))
    assert 'n0["A#34;#93;: say #34;hi#34; #91;now#93;"]:::ready' in text


def test_dot_has_quoted_edges() -> None:
    assert '  "T-1" -> "T-3";' in render_dot(seed()).splitlines()


def test_dot_escapes_quotes_in_ids() -> None:
    text = render_dot(compute(SnapshotItem('A"B'), SnapshotItem("C", blockers=needs('A"B'))))
    assert '  "A\\"B" -> "C";' in text.splitlines()


# ---------------------------------------------------------------------------- explain


def test_explain_walks_to_the_root() -> None:
    rs = compute(
        SnapshotItem("A", blockers=needs("B")),
        SnapshotItem("B", blockers=needs("C")),
        SnapshotItem("C", claim=Claim("pool-a@host", NOW - HOUR)),
    )
    assert explain(rs, "A").splitlines() == [
        "A: blocked",
        "- B: blocked",
        "  - C: claimed by pool-a@host",
    ]


def test_explain_shows_missing_blockers() -> None:
    assert explain(seed(), "T-4").splitlines()[1] == "- T-9: missing"


def test_explain_stops_at_repeats() -> None:
    rs = compute(
        SnapshotItem("A", blockers=needs("B", "C")),
        SnapshotItem("B", blockers=needs("D")),
        SnapshotItem("C", blockers=needs("D")),
        SnapshotItem("D"),
    )
    assert explain(rs, "A").splitlines()[-1] == "  - D: ready (see above)"


def test_explain_names_the_cycle_and_stops() -> None:
    assert explain(cycle(), "C-1").splitlines() == [
        "C-1: blocked, in cycle 0 (C-1 → C-2 → C-1)",
        "- C-2: blocked, in cycle 0 (C-1 → C-2 → C-1)",
        "  - C-1: blocked, in cycle 0 (C-1 → C-2 → C-1) (see above)",
    ]


def test_explain_unknown_id_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        explain(seed(), "NOPE")
    assert explain(seed(), "T-9") == "T-9: missing"  # not open, but an item refers to it


def test_explain_a_200k_chain_without_recursion() -> None:
    n = 200_000
    rs = compute_ready_set(
        Snapshot(
            "chain",
            [
                SnapshotItem(f"c{i}", blockers=needs(f"c{i + 1}") if i + 1 < n else [])
                for i in range(n)
            ],
        ),
        now=NOW,
    )
    assert explain(rs, "c0").splitlines()[-1].endswith("- [depth 199,999] c199999: ready")
