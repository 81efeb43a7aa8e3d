"""`jr2 work KIND: --help` and `jr2 ready KIND: --help` list the command's options that the kind
supports: an option whose capability the kind's tracker class does not declare (its mixins,
`jr2_sources.capabilities`) is left out, and the capabilities are named."""

from __future__ import annotations

from importlib.util import find_spec

import pytest
from click.testing import CliRunner

from jr2_core.cli import main
from jr2_sources.capabilities import CAPABILITIES
from jr2_sources.hooks import load_registry
from jr2_sources.registry import kind_capabilities

KINDS = ["github", "jira", "local"] + [
    kind for kind, module in (("gitlab", "jr2_gitlab"), ("httpbacklog", "jr2_httpbacklog"),
                              ("linear", "jr2_linear"), ("redmine", "jr2_redmine"))
    if find_spec(module) is not None]


def options_shown(command: str, kind: str) -> set[str]:
    res = CliRunner().invoke(main, [command, f"{kind}:", "--help"])
    assert res.exit_code == 0, res.output
    return {word for line in res.output.splitlines() for word in line.split()
            if word.startswith("--")}


@pytest.mark.parametrize("command", ["work", "ready"])
@pytest.mark.parametrize("kind", KINDS)
def test_kind_help_lists_only_the_options_the_kind_supports(kind: str, command: str) -> None:
    caps = kind_capabilities(load_registry().get(kind))
    assert caps is not None, f"{kind}: its SourceKind declares no tracker class"
    shown = options_shown(command, kind)
    assert "--json" in shown  # an option every kind supports
    for cap in CAPABILITIES:
        for option in cap.options:
            if cap.name in caps:
                continue  # shown when the command has it
            if any(option in c.options for c in CAPABILITIES if c.name in caps):
                continue  # another capability of the kind gives it
            assert option not in shown, f"{kind}: {option} needs {cap.name}"


def test_each_kind_shows_what_its_tracker_declares() -> None:
    assert kind_capabilities(load_registry().get("local")) == (
        "deltas", "attempts", "limits", "bodies", "approvals", "dashboard")
    github = options_shown("work", "github")
    assert {"--gate", "--control-issue", "--webhook-secret-env", "--dashboard"} <= github
    local = options_shown("work", "local")
    assert "--gate" in local and "--webhook-secret-env" not in local
    assert "--control-issue" not in local  # local's claims keep the limits themselves


def shadowed(cls: type) -> list[str]:
    """The methods of `cls` found on a capability mixin while a later, non-mixin base of its
    MRO implements them: a mixin listed before the base that implements it hides the real
    method behind its abstract (or default) one."""
    from jr2_sources.capabilities import mixin_of

    mixins = {mixin_of(c) for c in CAPABILITIES}
    found = []
    for name in dir(cls):
        if name.startswith("__"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner not in mixins:
            continue
        rest = cls.__mro__[cls.__mro__.index(owner) + 1:]
        found += [f"{name}: {owner.__name__} hides {k.__name__}'s" for k in rest
                  if name in vars(k) and k not in mixins and k is not object]
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_no_mixin_hides_a_method_its_tracker_implements(kind: str) -> None:
    from jr2_sources.registry import tracker_class

    cls = tracker_class(load_registry().get(kind))
    assert cls is not None
    assert shadowed(cls) == []


def test_a_mixin_listed_before_the_base_that_implements_it_is_found() -> None:
    from jr2_sources.capabilities.approvals import KeepsApprovals
    from jr2_sources.kit.labeltracker import LabelCommentTracker

    class Wrong(KeepsApprovals, LabelCommentTracker):
        pass

    class Right(LabelCommentTracker, KeepsApprovals):
        pass

    assert "park: KeepsApprovals hides LabelCommentTracker's" in shadowed(Wrong)
    assert shadowed(Right) == []
