"""`jr2 --help` and `jr2 --version` import no optional tracker client and no HTTP server, and
the commands are loaded lazily (click's lazy subcommands): listing them imports none of their
modules, and each is listed with its own help. Registering the plugins imports only what
registering needs: the tracker seam, and of each tracker only its registering module. Time
itself is measured by bench/cli_start.py (a test would flake on a busy machine); what a test can
pin down is that those modules are not imported at all.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("aiohttp", "requests", "jira", "github")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"],
                         capture_output=True, text=True, check=False)
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_and_version_import_no_tracker_client_nor_http_server(argv: list[str]) -> None:
    code = ("from jr2_core.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "jr2_core.cli" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


NOT_FOR_REGISTERING = ("rich", "tenacity", "jr2_sources.cli.compose", "jr2_sources.cli.liveview",
                       "jr2_sources.worksource", "jr2_sources.report",
                       "jr2_sources.kit.comment_claims", "jr2_sources.kit.markers",
                       "jr2_sources.kit.rest", "jr2_sources.capabilities.dashboard.sync",
                       "jr2_sources.capabilities.approvals.comments")


def test_help_imports_of_each_tracker_only_its_registering_module() -> None:
    code = ("from jr2_core.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert {"jr2_sources.trackers.local.plugin", "jr2_sources.trackers.github.plugin",
            "jr2_sources.hooks"} <= loaded  # the plugins were registered
    assert sorted(m for m in NOT_FOR_REGISTERING if m in loaded) == []
    trackers = sorted(m for m in loaded if m.startswith("jr2_sources.trackers.")
                      and m.count(".") > 2 and not m.endswith(".plugin"))
    assert trackers == []  # no LocalConfig, no LocalTracker, no adapter


def test_help_still_lists_the_commands_plugins_register() -> None:
    out = subprocess.run([sys.executable, "-m", "jr2_core", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for name in ("ready", "work", "local", "plugins", "run", "gates", "send"):
        assert f"  {name} " in out


def test_jr2_plugins_still_names_the_source_kinds() -> None:
    out = subprocess.run([sys.executable, "-m", "jr2_core", "plugins", "--json"],
                         capture_output=True, text=True, check=True).stdout
    kinds = {k for p in json.loads(out) for k in p["kinds"]}
    assert {"local", "github", "jira"} <= kinds


def test_help_imports_none_of_the_lazy_commands_modules() -> None:
    code = ("from jr2_core.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "jr2_sources.cli.commands" in loaded  # the registering plugin was loaded
    lazy = ("jr2_sources.cli.ready", "jr2_sources.cli.work", "jr2_sources.cli.local",
            "jr2_sources.playground.cli")
    assert sorted(m for m in lazy if m in loaded) == []


def test_each_lazy_command_is_listed_with_its_own_help() -> None:
    import click

    from jr2_core.cli import main

    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert {"ready", "work", "local", "dashboard", "playground", "run", "gates", "send",
            "plugins"} <= set(main.lazy) & set(names)
    stand_ins = {name: main.listed(ctx, name) for name in main.lazy}
    for name, stand_in in stand_ins.items():
        command = main.get_command(ctx, name)
        assert command is not None and stand_in is not None
        for limit in (30, 45, 60, 80, 120, 400):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), name


def test_a_lazy_command_given_to_a_plain_click_group_is_added_at_once() -> None:
    import click

    from jr2_core.cli import add_lazy_command
    from jr2_sources.cli.local import local_group

    group = click.Group()
    add_lazy_command(group, "local", "jr2_sources.cli.local:local_group", "Commands of ...")
    assert group.commands == {"local": local_group}
