"""Start-up cost of the CLI (issue 18): `jr2 --help` and `jr2 --version` import only what they
need, and the lazy re-exports of `jr2_core` / `jr2_sources` behave like the eager ones did.

Time itself is measured by bench/cli_start.py (a test would flake on a busy machine); what a test
can pin down is that the heavy modules are not imported at all.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pydantic", "asyncio", "aiohttp", "requests", "jira", "github", "sqlite3")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"],
                         capture_output=True, text=True, check=False)
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_and_version_import_nothing_heavy(argv: list[str]) -> None:
    code = ("from jr2_core.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "jr2_core.cli" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_help_lists_plugin_commands_without_importlib_metadata() -> None:
    """`importlib.metadata` (with `email`, `zipfile`) cost `jr2 --help` about 30 ms of its 100:
    the entry points are read by `jr2_core.entrypoints`, and nothing else may bring it back."""
    code = ("from jr2_core.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "jr2_sources.cli.commands" in loaded  # the plugins' commands were listed
    assert sorted(m for m in ("importlib.metadata", "email", "zipfile") if m in loaded) == []


def test_help_still_lists_the_commands_plugins_register() -> None:
    out = subprocess.run([sys.executable, "-m", "jr2_core", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for name in ("ready", "work", "local", "plugins", "run", "gates", "send"):
        assert f"  {name} " in out


def test_a_plugin_module_importing_the_public_api_pays_for_what_it_uses() -> None:
    loaded = _modules_after("from jr2_core import SourceKind, hookimpl\n"
                            "import jr2_sources")
    assert "pydantic" not in loaded and "jr2_core.pool" not in loaded


def test_lazy_exports_resolve_to_the_same_objects() -> None:
    import jr2_core
    import jr2_sources
    from jr2_core.pool import pool as pool_fn  # importing the submodule must not hide `pool`
    from jr2_sources.worksource import WorkSource

    assert jr2_core.pool is pool_fn
    assert jr2_sources.WorkSource is WorkSource
    assert set(jr2_core.__all__) <= set(dir(jr2_core))
    with pytest.raises(AttributeError):
        _ = jr2_core.no_such_name  # type: ignore[attr-defined]


def test_jr2_plugins_still_names_the_source_kinds() -> None:
    out = subprocess.run([sys.executable, "-m", "jr2_core", "plugins", "--json"],
                         capture_output=True, text=True, check=True).stdout
    kinds = {k for p in json.loads(out) for k in p["kinds"]}
    assert {"local", "github", "jira"} <= kinds
