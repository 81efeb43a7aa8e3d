"""`jr2_core.records.record` behaves as `dataclasses.dataclass` (repr, equality, hashing, the
frozen guard, `replace`/`asdict`, methods the class defines itself) while compiling only what
must be the class's own: `__init__` and a frozen class's guards (issue 18: start-up cost)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from dataclasses import FrozenInstanceError, asdict, dataclass, field, replace
from typing import Any

import pytest

from jr2_core.records import record


def _make(deco: Any, **kw: Any) -> Any:
    @deco(**kw)
    class A:
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)
        d: float = field(default=0.0, compare=False, repr=False)
        e: int = field(default=1, hash=False)

    return A


VALUES = [(1,), (1, "y"), (2, "x", [1]), (1, "x", [], 5.0), (1, "x", [], 0.0, 7), (float("nan"),)]


@pytest.mark.parametrize("frozen, slots", list(itertools.product([False, True], [False, True])))
def test_a_record_answers_as_the_dataclass_does(frozen: bool, slots: bool) -> None:
    want, got = _make(dataclass, frozen=frozen, slots=slots), _make(record, frozen=frozen,
                                                                      slots=slots)
    assert (want.__hash__ is None) == (got.__hash__ is None) == (not frozen)
    for args in VALUES:
        w, g = want(*args), got(*args)
        assert repr(w) == repr(g)
        assert (w == 1) is (g == 1) is False
        for other in VALUES:
            assert (w == want(*other)) == (g == got(*other))
            assert (w != want(*other)) == (g != got(*other))
        assert asdict(w) == asdict(g) and replace(g, a=5).a == 5
    if frozen:
        with pytest.raises(FrozenInstanceError):
            got(1).a = 2
        assert hash(want(1, "y", (), 2.0, 3)) == hash(got(1, "y", (), 2.0, 3))  # type: ignore[arg-type]
        assert hash(got(1, "y", (), 2.0, 3)) == hash(got(1, "y", (), 9.0, 4))  # type: ignore[arg-type]


def test_methods_the_class_defines_are_kept_and_hashing_follows_dataclass_rules() -> None:
    @record(frozen=True)
    class Eq:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    @dataclass(frozen=True)
    class EqDc:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    assert Eq(1) == Eq(2) and (Eq.__hash__ is None) == (EqDc.__hash__ is None)

    @record
    class Shown:
        a: int

        def __repr__(self) -> str:
            return "mine"

        def __hash__(self) -> int:
            return 7

    assert repr(Shown(1)) == "mine" and hash(Shown(1)) == 7


def test_a_recursive_record_repr_stops() -> None:
    @record
    class Node:
        kids: list[Any]

    n = Node([])
    n.kids.append(n)
    assert repr(n) == "test_a_recursive_record_repr_stops.<locals>.Node(kids=[...])"


_COUNT = """
import sys
from dataclasses import dataclass
from jr2_core.records import record
n = 0
def hook(event, args):
    global n
    n += event == "compile"
sys.addaudithook(hook)
@{deco}
class A:
    a: int
    b: str = ""
print(n)
"""


@pytest.mark.parametrize("deco, compiled", [("dataclass(frozen=True)", 6),
                                             ("record(frozen=True)", 3),
                                             ("dataclass", 3), ("record", 1)])
def test_a_record_compiles_only_its_init_and_frozen_guards(deco: str, compiled: int) -> None:
    out = subprocess.run([sys.executable, "-c", _COUNT.format(deco=deco)], capture_output=True,
                         text=True, check=True)
    assert int(out.stdout) == compiled
