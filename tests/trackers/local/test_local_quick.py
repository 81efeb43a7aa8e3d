"""The hand checks that keep pydantic off `jr2 work local:` (`settings.quick_config`,
`plainbacklog.quick_backlog`) agree with the models they stand in for: whatever they accept,
they read exactly as the models do, and they accept nothing the models refuse (the models then
word the error). Generated inputs mix valid and invalid values of every field."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from jr2_sources.registry import option_shapes
from jr2_sources.trackers.local.backlog import BacklogError
from jr2_sources.trackers.local.backlogmodel import validate
from jr2_sources.trackers.local.config import LocalConfig
from jr2_sources.trackers.local.plainbacklog import PlainBacklog, PlainItem, quick_backlog
from jr2_sources.trackers.local.settings import OPTIONS, LocalSettings, quick_config


def _local_kind() -> Any:
    from jr2_sources.hooks import load_registry

    return load_registry().get("local")


def test_the_options_and_defaults_are_the_models() -> None:
    kind = _local_kind()
    assert kind.options == OPTIONS
    assert list(OPTIONS.items()) == list(
        option_shapes(dataclasses.replace(kind, options=None)).items())
    model = LocalConfig(target="b.toml")
    plain = LocalSettings(target="b.toml")
    assert {f.name for f in dataclasses.fields(plain)} == set(LocalConfig.model_fields)
    for f in dataclasses.fields(plain):
        assert getattr(plain, f.name) == getattr(model, f.name), f.name


_ANY = (st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 1e4) | st.just(float("nan"))
        | st.sampled_from(["", "b.toml", "10m", "1h30m", "0", "-1s", "soon", "3650d", "3651d",
                           "0.5", "true", "x"])
        | st.lists(st.sampled_from(["a", "b", ""]), max_size=3)
        | st.lists(st.integers(0, 2), min_size=1, max_size=2))
_KEYS = st.sampled_from(["target", "label", "children_block", "poll_every", "invalid_grace",
                         "resync_every", "nope"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _ANY, max_size=5))
@example({"target": "b.toml"})
@example({"target": "b.toml", "label": ["a"], "poll_every": "1s", "children_block": False})
@example({"target": "b.toml", "resync_every": 0})
@example({"target": "b.toml", "label": ("a",)})
def test_quick_config_agrees_with_the_model(values: dict[str, Any]) -> None:
    quick = quick_config(values)
    try:
        model = LocalConfig.model_validate(values)
    except ValidationError:
        assert quick is None
        return
    if quick is not None:
        for name in LocalConfig.model_fields:
            assert getattr(quick, name) == getattr(model, name), name


_FIELD_VALUES = {
    "id": st.sampled_from(["T-1", "T-2", "", " "]) | st.integers(1, 2),
    "title": st.sampled_from(["t", ""]) | st.none() | st.integers(0, 1),
    "needs": st.lists(st.sampled_from(["T-1", "T-2", "T-9", ""]), max_size=2) | st.just("T-1"),
    "labels": st.lists(st.sampled_from(["a", "b"]), max_size=2) | st.just([1]),
    "priority": st.none() | st.integers(-3, 3) | st.booleans() | st.just("2") | st.just(1.0),
    "status": st.sampled_from(["open", "done", "closed"]) | st.none(),
    "body": st.none() | st.just("b") | st.just(3),
    "parent": st.none() | st.sampled_from(["T-1", "T-2"]) | st.just(1),
    "branch": st.none() | st.just("feat/x") | st.just(["x"]),
    "created": st.none() | st.just(datetime(2026, 1, 2, 3, 4, 5))
    | st.just(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))))
    | st.just("2026-01-02T03:04:05Z") | st.just(date(2026, 1, 2)) | st.just(7),
    "extra": st.just("x"),
}


@st.composite
def _documents(draw: st.DrawFn) -> Any:
    items = []
    for _ in range(draw(st.integers(0, 3))):
        keys = draw(st.sets(st.sampled_from(sorted(_FIELD_VALUES)), max_size=5))
        item = {"id": draw(st.sampled_from(["T-1", "T-2", "T-3"])), "title": "t"}
        item.update({k: draw(_FIELD_VALUES[k]) for k in keys})
        items.append(item)
    doc: Any = {"items": items}
    shape = draw(st.integers(0, 9))
    if shape == 0:
        doc["more"] = 1
    elif shape == 1:
        doc = {"items": {"a": 1}}
    elif shape == 2:
        doc = [items]
    elif shape == 3:
        doc = {}
    return doc


def _fields(item: Any) -> dict[str, Any]:
    return {name: getattr(item, name) for name in (f.name for f in dataclasses.fields(PlainItem))}


@settings(max_examples=600, deadline=None)
@given(_documents())
@example({"items": [{"id": "T-1", "title": "t", "created": datetime(2026, 1, 2)}]})
@example({"items": [{"id": "T-1", "title": "t", "needs": ["T-1"]}]})
@example({"items": [{"id": "T-1", "title": "t"}, {"id": "T-1", "title": "u"}]})
@example({"items": [{"id": "T-1", "title": "t", "priority": True}]})
def test_quick_backlog_agrees_with_the_models(doc: Any) -> None:
    quick = quick_backlog(doc)
    try:
        model = validate(doc, "b.toml")
    except BacklogError:
        assert quick is None
        return
    if quick is not None:
        assert isinstance(quick, PlainBacklog)
        assert [_fields(i) for i in quick.items] == [_fields(i) for i in model.items]
        assert quick.by_id().keys() == model.by_id().keys()
        assert quick.children() == model.children()


def test_a_well_formed_backlog_takes_the_quick_path() -> None:
    doc = {"items": [{"id": "T-1", "title": "t", "created": datetime(2026, 1, 2)},
                     {"id": "T-2", "title": "u", "needs": ["T-1"], "labels": ["a"],
                      "priority": 2, "status": "done", "parent": "T-1", "branch": "b"}]}
    quick = quick_backlog(doc)
    assert quick is not None
    assert quick.items[0].created == datetime(2026, 1, 2, tzinfo=UTC)
    assert quick.children() == {"T-1": ["T-2"]}


@pytest.mark.parametrize("values", [{"target": "b.toml"}, {"target": "b.toml", "label": ["a"]}])
def test_plain_options_take_the_quick_path(values: dict[str, Any]) -> None:
    assert isinstance(quick_config(values), LocalSettings)
