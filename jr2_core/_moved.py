"""Old import paths, kept working for one release with a `DeprecationWarning`.

Design notes
------------
The package layout changed in 0.2 (issue 13): the Ready-set, reports, registry and `jr2.toml`
moved from `jr2_core` to `jr2_sources`; the pieces plugin authors reuse went to
`jr2_sources.kit`, the built-in trackers to `jr2_sources.trackers`, the `ready`/`work` commands
and the worker runner to `jr2_sources.cli`. One mechanism covers every old path: a meta-path
finder that maps an old module name (or a submodule of one) to its new name, imports the new
module and aliases the same object under the old name in `sys.modules`, so `isinstance` checks,
monkeypatching and module state behave as one module. The table below holds strings only:
importing `jr2_core` imports nothing from `jr2_sources` (see tests/core/test_layering.py).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

MOVED: dict[str, str] = {
    "jr2_core.readyset": "jr2_sources.readyset",
    "jr2_core.report": "jr2_sources.report",
    "jr2_core.registry": "jr2_sources.registry",
    "jr2_core.projectconfig": "jr2_sources.projectconfig",
    **{f"jr2_sources.{name}": f"jr2_sources.kit.{name}" for name in (
        "rest", "retry", "webhooks", "comment_claims", "claims", "labeloptions", "redact",
        "durations")},
    **{f"jr2_sources.{name}": f"jr2_sources.trackers.{name}" for name in (
        "local", "github", "jira")},
    "jr2_sources.commands": "jr2_sources.cli.commands",
    "jr2_sources.command": "jr2_sources.cli.runner",
    "jr2_sources.liveview": "jr2_sources.cli.liveview",
}
"""Old module name -> new module name (submodules of an old name follow it)."""

MOVED_NAMES: dict[str, str] = {
    **dict.fromkeys(("BlockerRef", "Claim", "ReadySet", "Reason", "Snapshot", "SnapshotItem",
                     "compute_ready_set"), "jr2_sources.readyset"),
    **dict.fromkeys(("SourceEnv", "SourceKind"), "jr2_sources.registry"),
}
"""Names once exported by `jr2_core` -> the module they live in now (`jr2_core.__getattr__`)."""


def new_name(fullname: str) -> str | None:
    """The new name of an old module path, or None when `fullname` did not move."""
    head = fullname
    while head:
        new = MOVED.get(head)
        if new is not None:
            return new + fullname[len(head):]
        head = head.rpartition(".")[0]
    return None


def warn_moved(old: str, new: str, stacklevel: int = 2) -> None:
    warnings.warn(f"{old} is deprecated and will be removed in jr2 0.3: use {new}",
                  DeprecationWarning, stacklevel=stacklevel + 1)


class _Alias:
    """Loads an old name as the module already known under its new name (an
    `importlib.abc.Loader` by its methods: importing `importlib.abc` costs `jr2 --help` 14 ms)."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.real_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warn_moved(spec.name, self.new)
        module = importlib.import_module(self.new)
        self.real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias's spec on the module: give it its own back
        module.__spec__ = self.real_spec


class _MovedFinder:
    """A meta-path finder (`importlib.abc.MetaPathFinder` by its method)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", _Alias(new)))


def install() -> None:
    """Put the finder first on `sys.meta_path` (once): an old name always means the new one."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
