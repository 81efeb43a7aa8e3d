"""The local source's backlog file: formats, defaults, children, and every error's one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jr2_core.errors import UsageError
from jr2_sources.trackers.local import backlog as backlog_module
from jr2_sources.trackers.local.backlog import (
    Backlog,
    BacklogError,
    BacklogItem,
    load_backlog,
    parse_backlog,
)

FULL_TOML = """\
[[items]]
id = "T-1"
title = "Change one."

[[items]]
id = "T-2"
title = "Change two."
labels = ["code"]
priority = 1
parent = "T-0"

[[items]]
id = "T-3"
title = "Document the two changes."
needs = ["T-1", "T-2"]
labels = ["docs"]
priority = 2
status = "done"
body = "Both of them."
parent = "T-0"
branch = "docs/t-3"
created = 2026-01-02T03:04:05Z
"""

FULL_JSON = {
    "items": [
        {"id": "T-1", "title": "Change one."},
        {"id": "T-2", "title": "Change two.", "labels": ["code"], "priority": 1, "parent": "T-0"},
        {
            "id": "T-3",
            "title": "Document the two changes.",
            "needs": ["T-1", "T-2"],
            "labels": ["docs"],
            "priority": 2,
            "status": "done",
            "body": "Both of them.",
            "parent": "T-0",
            "branch": "docs/t-3",
            "created": "2026-01-02T03:04:05Z",
        },
    ]
}


def toml_error(text: str) -> str:
    """The one-line message parsing `text` as backlog.toml raises."""
    with pytest.raises(BacklogError) as caught:
        parse_backlog(text, name="backlog.toml", fmt="toml")
    return one_line(caught.value)


def json_error(data: Any) -> str:
    """The one-line message parsing `data` (dumped, unless a str) as backlog.json raises."""
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(BacklogError) as caught:
        parse_backlog(text, name="backlog.json", fmt="json")
    return one_line(caught.value)


def one_line(err: BaseException) -> str:
    """The error's message, checked to be one line with none of pydantic's report in it."""
    message = str(err)
    assert isinstance(err, UsageError)
    assert "\n" not in message
    for noise in ("Traceback", "validation error", "errors.pydantic.dev", "type="):
        assert noise not in message
    return message


def items(*entries: str) -> str:
    """TOML for `[[items]]` tables, each given as its body lines."""
    return "".join(f"[[items]]\n{entry}\n" for entry in entries)


def test_toml_reads_every_field_and_defaults() -> None:
    backlog = parse_backlog(FULL_TOML, name="backlog.toml", fmt="toml")
    first, second, third = backlog.items
    assert first == BacklogItem(id="T-1", title="Change one.")
    assert (first.needs, first.labels, first.priority, first.status) == ([], [], None, "open")
    assert (first.body, first.parent, first.branch, first.created) == (None, None, None, None)
    assert (second.labels, second.priority, second.parent) == (["code"], 1, "T-0")
    assert third.needs == ["T-1", "T-2"]
    assert (third.status, third.body, third.branch) == ("done", "Both of them.", "docs/t-3")
    assert third.created == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_json_reads_the_same_backlog_as_toml() -> None:
    from_json = parse_backlog(json.dumps(FULL_JSON), name="backlog.json", fmt="json")
    assert from_json == parse_backlog(FULL_TOML, name="backlog.toml", fmt="toml")


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ('"2026-01-02T03:04:05Z"', datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ('"2026-01-02T04:04:05+01:00"', datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02T03:04:05", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02", datetime(2026, 1, 2, tzinfo=UTC)),
    ],
)
def test_created_takes_toml_times_and_iso_strings_and_is_never_naive(
    written: str, expected: datetime
) -> None:
    text = items(f'id = "T-1"\ntitle = "x"\ncreated = {written}')
    created = parse_backlog(text, name="b.toml", fmt="toml").items[0].created
    assert created == expected
    assert created is not None and created.tzinfo is not None


def test_children_are_derived_from_parent_in_file_order() -> None:
    text = items(
        'id = "E"\ntitle = "epic"',
        'id = "B"\ntitle = "b"\nparent = "E"',
        'id = "A"\ntitle = "a"\nparent = "E"',
        'id = "C"\ntitle = "c"\nparent = "B"',
        'id = "D"\ntitle = "d"\nparent = "elsewhere"',
    )
    backlog = parse_backlog(text, name="b.toml", fmt="toml")
    assert backlog.children() == {"E": ["B", "A"], "B": ["C"], "elsewhere": ["D"]}
    assert list(backlog.by_id()) == ["E", "B", "A", "C", "D"]


def test_unknown_blockers_and_parents_are_not_errors() -> None:
    text = items('id = "T-1"\ntitle = "x"\nneeds = ["T-404"]\nparent = "T-405"')
    assert parse_backlog(text, name="b.toml", fmt="toml").items[0].needs == ["T-404"]


def test_an_empty_document_is_an_empty_backlog() -> None:
    assert parse_backlog("", name="b.toml", fmt="toml") == Backlog(items=[])
    assert parse_backlog('{"items": []}', name="b.json", fmt="json") == Backlog()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[items]]\nid = "T-1"\ntitle = "x"\npriority = \n',
            "backlog.toml:4:12: Invalid value",
        ),
        ('[[items]]\nid = "T-1"\ntitle = "x', "backlog.toml:3:11: Unterminated string"),
        (
            '[[items]]\nid = "T-1"\nid = "T-2"\n',
            "backlog.toml:3:11: Cannot overwrite a value",
        ),
    ],
)
def test_toml_syntax_errors_give_line_and_column(text: str, message: str) -> None:
    assert toml_error(text) == message


def test_toml_errors_that_carry_positions_as_attributes_are_read_too() -> None:
    """tomli and Python 3.14's tomllib give `msg`, `lineno`, `colno`: same line either way."""

    class PositionedError(ValueError):
        msg = "Invalid value"
        lineno = 12
        colno = 5

    err: Any = PositionedError("Invalid value (at line 12, column 5)")
    assert str(backlog_module._toml_error(err, "", "backlog.toml")) == (
        "backlog.toml:12:5: Invalid value"
    )


def test_json_syntax_errors_give_line_and_column() -> None:
    text = '{"items": [\n  {"id": "T-1", "title": "x",}\n]}'
    assert json_error(text) == (
        "backlog.json:2:30: Expecting property name enclosed in double quotes"
    )


TABLE_ERRORS = [
    (
        items('id = "T-1"\ntitle = "a"', 'id = "T-2"\ntitle = "b"', 'id = "T-3"\nnedds = ["T-1"]'),
        "backlog.toml: item 3 (id \"T-3\"): unknown key 'nedds' (and 1 more)",
    ),
    (
        items('id = "T-3"\ntitle = "x"\nnedds = ["T-1"]'),
        "backlog.toml: item 1 (id \"T-3\"): unknown key 'nedds'",
    ),
    (
        items('id = "T-1"\ntitle = "x"', 'id = "T-2"\ntitel = "y"\npriority = "2"'),
        "backlog.toml: item 2 (id \"T-2\"): unknown key 'titel' (and 2 more)",
    ),
    (
        items('id = "T-3"\ntitle = "x"\npriority = "2"'),
        "backlog.toml: item 1 (id \"T-3\"): field 'priority': expected a valid integer",
    ),
    (
        items('id = "T-3"\ntitle = "x"\npriority = true'),
        "backlog.toml: item 1 (id \"T-3\"): field 'priority': expected a valid integer",
    ),
    (
        items('id = "T-3"\ntitle = "x"\nneeds = "T-1"'),
        "backlog.toml: item 1 (id \"T-3\"): field 'needs': expected a valid list",
    ),
    (
        items('id = "T-3"\ntitle = "x"\nlabels = ["docs", 7]'),
        "backlog.toml: item 1 (id \"T-3\"): field 'labels' entry 2: expected a valid string",
    ),
    (
        items('id = "T-3"\ntitle = "x"\nneeds = "T-1"\npriority = "high"'),
        "backlog.toml: item 1 (id \"T-3\"): field 'needs': expected a valid list "
        "(and 1 more)",
    ),
    (
        items('id = "T-3"\ntitle = "x"\nstatus = "closed"'),
        "backlog.toml: item 1 (id \"T-3\"): field 'status': expected 'open' or 'done'",
    ),
    (
        items('id = "T-3"\ntitle = "x"\ncreated = "yesterday"'),
        "backlog.toml: item 1 (id \"T-3\"): field 'created': "
        "expected a valid datetime or date, input is too short",
    ),
    (items('id = "T-3"'), "backlog.toml: item 1 (id \"T-3\"): missing key 'title'"),
    (items('title = "x"'), "backlog.toml: item 1: missing key 'id'"),
    (
        items('id = 3\ntitle = "x"'),
        "backlog.toml: item 1: field 'id': expected a valid string",
    ),
    ('foo = 1\n[[items]]\nid = "T-1"\ntitle = "x"\n', "backlog.toml: unknown top-level key 'foo'"),
    (
        'items = "T-1"\n',
        "backlog.toml: 'items' must be a list of tables ([[items]]): expected a valid list",
    ),
    (
        items('id = "T-1"\ntitle = "a"', 'id = "T-2"\ntitle = "b"', 'id = "T-3"\ntitle = "c"')
        + items('id = "T-1"\ntitle = "again"'),
        'backlog.toml: duplicate id "T-1" (items 1 and 4)',
    ),
    (
        items('id = "T-1"\ntitle = "a"', 'id = "T-1"\ntitle = "b"', 'id = "T-1"\ntitle = "c"'),
        'backlog.toml: duplicate id "T-1" (items 1 and 2) (and 1 more)',
    ),
    (
        items('id = "T-5"\ntitle = "x"\nneeds = ["T-4", "T-5"]'),
        'backlog.toml: item "T-5" needs itself',
    ),
    (
        items('id = "T-5"\ntitle = "x"\nparent = "T-5"'),
        'backlog.toml: item "T-5" is its own parent',
    ),
    (
        items('id = "T-1"\ntitle = "a"', 'id = ""\ntitle = "x"'),
        "backlog.toml: item 2 has an empty id",
    ),
    (items('id = "  "\ntitle = "x"'), "backlog.toml: item 1 has an empty id"),
    (items('id = "T-5"\ntitle = "x"\nneeds = [""]'), 'backlog.toml: item "T-5" needs an empty id'),
    (
        items('id = "T-\\"5\\"\\n"\ntitle = "x"\nneeds = ["T-\\"5\\"\\n"]'),
        'backlog.toml: item "T-\\"5\\"\\n" needs itself',
    ),
]


@pytest.mark.parametrize(("text", "message"), TABLE_ERRORS)
def test_validation_errors_are_one_line_naming_the_item(text: str, message: str) -> None:
    assert toml_error(text) == message


def test_json_validation_errors_have_the_same_shape() -> None:
    bad = {"items": [{"id": "T-1", "title": "x"}, {"id": "T-2", "title": "y", "nedds": []}]}
    assert json_error(bad) == "backlog.json: item 2 (id \"T-2\"): unknown key 'nedds'"
    assert json_error({"items": [{"id": "T-1", "title": "x", "priority": 2.0}]}) == (
        "backlog.json: item 1 (id \"T-1\"): field 'priority': expected a valid integer"
    )
    assert json_error([1, 2]) == (
        "backlog.json: the top level must be a table (TOML) or an object (JSON) holding 'items'"
    )
    assert json_error({"items": [{"id": "T-1", "title": "x"}] * 2}) == (
        'backlog.json: duplicate id "T-1" (items 1 and 2)'
    )


def test_backlog_built_in_python_keeps_the_rules() -> None:
    with pytest.raises(ValueError, match='item "T-1" needs itself'):
        Backlog(items=[BacklogItem(id="T-1", title="x", needs=["T-1"])])


def test_load_reads_toml_and_json_by_suffix(tmp_path: Path) -> None:
    toml_path, json_path = tmp_path / "backlog.toml", tmp_path / "backlog.JSON"
    toml_path.write_text(FULL_TOML, encoding="utf-8")
    json_path.write_text(json.dumps(FULL_JSON), encoding="utf-8")
    assert load_backlog(toml_path) == load_backlog(json_path)
    assert len(load_backlog(toml_path).items) == 3


def test_load_sniffs_other_suffixes(tmp_path: Path) -> None:
    as_toml, as_json = tmp_path / "backlog", tmp_path / "backlog.txt"
    as_toml.write_text(FULL_TOML, encoding="utf-8")
    as_json.write_text("\ufeff" + json.dumps(FULL_JSON), encoding="utf-8")
    assert load_backlog(as_toml) == load_backlog(as_json)


def test_sniffed_files_report_the_likelier_formats_error(tmp_path: Path) -> None:
    broken_json, broken_toml = tmp_path / "a.backlog", tmp_path / "b.backlog"
    broken_json.write_text('{"items": [}', encoding="utf-8")
    broken_toml.write_text('[[items]]\nid = "T-1"\ntitle = \n', encoding="utf-8")
    with pytest.raises(BacklogError) as json_err:
        load_backlog(broken_json)
    assert one_line(json_err.value) == f"{broken_json}:1:12: Expecting value"
    with pytest.raises(BacklogError) as toml_err:
        load_backlog(broken_toml)
    assert one_line(toml_err.value) == f"{broken_toml}:3:9: Invalid value"


def test_load_names_the_file_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("backlog.toml").write_text(items('id = "T-3"\ntitle = "x"\nnedds = []'), encoding="utf-8")
    with pytest.raises(BacklogError) as caught:
        load_backlog(Path("backlog.toml"))
    assert one_line(caught.value) == "backlog.toml: item 1 (id \"T-3\"): unknown key 'nedds'"


def test_load_errors_for_missing_unreadable_and_binary_files(tmp_path: Path) -> None:
    cases = {
        tmp_path / "backlog.toml": "no such file",
        tmp_path: "is a directory, not a backlog file",
    }
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b'[[items]]\nid = "\xff"\n')
    cases[binary] = "not UTF-8 text (bad byte at offset 16)"
    for path, tail in cases.items():
        with pytest.raises(BacklogError) as caught:
            load_backlog(path)
        assert one_line(caught.value) == f"{path}: {tail}"


item_ids = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8).filter(str.strip)


@st.composite
def backlogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid backlog data: unique ids, needs and parents among them (or unknown), no self-edges."""
    ids = draw(st.lists(item_ids, unique=True, max_size=12))
    known = st.sampled_from([*ids, "elsewhere"]) if ids else st.just("elsewhere")
    result: list[dict[str, Any]] = []
    for item_id in ids:
        entry: dict[str, Any] = {"id": item_id, "title": draw(st.text(max_size=10))}
        needs = draw(st.lists(known, max_size=3))
        if needs := [need for need in needs if need != item_id]:
            entry["needs"] = needs
        parent = draw(st.none() | known)
        if parent is not None and parent != item_id:
            entry["parent"] = parent
        if draw(st.booleans()):
            entry["priority"] = draw(st.integers(-5, 5))
        result.append(entry)
    return result


@settings(max_examples=60, deadline=None)
@given(backlogs())
def test_any_valid_backlog_round_trips_and_children_mirror_parents(
    data: list[dict[str, Any]],
) -> None:
    backlog = parse_backlog(json.dumps({"items": data}), name="b.json", fmt="json")
    assert [item.model_dump(exclude_defaults=True) for item in backlog.items] == data
    children = backlog.children()
    assert sum(len(kids) for kids in children.values()) == sum("parent" in e for e in data)
    for entry in data:
        if "parent" in entry:
            assert entry["id"] in children[entry["parent"]]


@pytest.mark.soak
def test_a_100k_item_backlog_parses_in_seconds(tmp_path: Path) -> None:
    import time

    path = tmp_path / "big.toml"
    path.write_text(
        "".join(
            f'[[items]]\nid = "T-{i}"\ntitle = "Item {i}."\nneeds = ["T-{i + 1}"]\n'
            f"priority = {i % 5}\ncreated = 2026-01-02T03:04:05Z\n\n"
            for i in range(100_000)
        ),
        encoding="utf-8",
    )
    started = time.perf_counter()
    assert len(load_backlog(path).items) == 100_000
    print(f"100k TOML items: {time.perf_counter() - started:.2f} s")
