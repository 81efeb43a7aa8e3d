"""Old import paths keep working for one release: the same module object, and a warning.

Each check runs in a fresh interpreter, as a module once imported is not imported (nor warned
about) again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from jr2_core._moved import MOVED, new_name

SUBMODULES = {  # a module inside a moved package follows it
    "jr2_sources.github.adapter": "jr2_sources.trackers.github.adapter",
    "jr2_sources.local.backlog": "jr2_sources.trackers.local.backlog",
    "jr2_sources.jira.jql": "jr2_sources.trackers.jira.jql",
}

CHECK = '''
import importlib, json, sys, warnings
old, new = sys.argv[1], sys.argv[2]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    __import__(old)
mod = sys.modules[old]
real = importlib.import_module(new)
print(json.dumps({
    "same": mod is real and sys.modules[old] is real,
    "spec": real.__spec__.name,
    "warnings": [str(w.message) for w in caught if w.category is DeprecationWarning
                 and old in str(w.message)],
    "where": [w.filename for w in caught if w.category is DeprecationWarning
              and old in str(w.message)],
}))
'''


def _run(code: str, *args: str) -> Any:
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_every_old_module_path_is_the_new_module_and_warns() -> None:
    pairs = {**MOVED, **SUBMODULES}
    assert len(pairs) >= 20
    for old, new in pairs.items():
        assert new_name(old) == new
        out = _run(CHECK, old, new)
        assert out["same"], old
        assert out["spec"] == new  # the module keeps its own spec
        assert len(out["warnings"]) == 1 and f"use {new}" in out["warnings"][0], out
        assert out["where"] == ["<string>"]  # the warning points at the importing line


def test_names_that_left_jr2_core_resolve_with_a_warning() -> None:
    code = '''
import json, warnings
import jr2_core, jr2_sources
out = {}
for name in ("Snapshot", "SnapshotItem", "BlockerRef", "Claim", "ReadySet", "Reason",
             "compute_ready_set", "SourceEnv", "SourceKind"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(jr2_core, name)
    out[name] = [value is getattr(jr2_sources, name),
                 [str(w.message) for w in caught if w.category is DeprecationWarning]]
try:
    jr2_core.NoSuchName
except AttributeError as exc:
    out["missing"] = str(exc)
out["all"] = sorted(set(out) & set(jr2_core.__all__))
print(json.dumps(out))
'''
    out = _run(code)
    assert out.pop("missing") == "module 'jr2_core' has no attribute 'NoSuchName'"
    assert out.pop("all") == []  # no longer advertised by `from jr2_core import *`
    for name, (same, warned) in out.items():
        assert same, name
        assert len(warned) == 1 and f"jr2_core.{name} is deprecated" in warned[0]


def test_new_paths_do_not_warn() -> None:
    code = '''
import importlib, json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for name in NAMES:
        importlib.import_module(name)
    import jr2_core, jr2_sources, jr2_sources.kit
print(json.dumps([str(w.message) for w in caught if w.category is DeprecationWarning]))
'''
    names = sorted(set(MOVED.values()) | set(SUBMODULES.values()))
    assert _run(f"NAMES = {names!r}\n" + code) == []
