"""The built-in commands that need sources, registered lazily: `jr2 ready`, `jr2 work`,
`jr2 local`, `jr2 dashboard`, `jr2 playground`.

They are added through the `jr2_register_commands` hook like any plugin's commands, so
jr2_core's command line holds no tracker code; each is named by `module:attr` with the first
paragraph of its help (what `jr2 --help` shows), so listing them imports none of their modules
(click's lazy subcommands, `jr2_core.cli.Jr2Group`). A test checks each text against its
command's own.
"""

from __future__ import annotations

import click

from jr2_core.cli import add_lazy_command
from jr2_core.hookspecs import hookimpl

COMMANDS = {
    "ready": ("jr2_sources.cli.ready:ready_cmd",
              "Show what is ready, what is blocked and why, and what is claimed. Read-only, "
              "always: it writes to no tracker and creates no state."),
    "work": ("jr2_sources.cli.work:work_cmd",
             "Run COMMAND once for each ready item of SOURCE, claiming each so that no other "
             "pool (here or on another machine) runs it too:"),
    "local": ("jr2_sources.cli.local:local_group", "Commands of the local Work Source."),
    "dashboard": ("jr2_sources.capabilities.dashboard.command:dashboard_cmd",
                  "Keep one issue's body up to date with SOURCE's Ready-set: failed items (tick a "
                  "box to retry one), gates awaiting approval (tick to approve), items in "
                  "progress with holder and lease, waiting for a retry, ready, blocked and why, "
                  "and the graph. jr2 writes only between its markers and only when that part "
                  "changed; the text around it is kept."),
    "playground": ("jr2_sources.playground.cli:playground_group",
                   "Try jr2 without a tracker: a fake GitHub or Jira on 127.0.0.1, seeded from "
                   "a TOML file, that you act on as a person while pools run "
                   "(docs/guides/playground.md)."),
}
"""Command name -> (`module:attr` of the click command, the first paragraph of its help)."""


@hookimpl
def jr2_register_commands(cli: click.Group) -> None:
    for name, (target, short_help) in COMMANDS.items():
        add_lazy_command(cli, name, target, short_help)
