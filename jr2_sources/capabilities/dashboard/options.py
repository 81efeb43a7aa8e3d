"""`jr2 work`'s options of the dashboard issue (`command.open_dashboard` opens it)."""

from __future__ import annotations

import click

from jr2_sources.capabilities import options

WORK_OPTIONS = options(
    click.option("--dashboard", "dashboard", metavar="N|PATH", default=None,
                 help="Keep issue N's body up to date with the Ready-set while the run lasts "
                      "(see `jr2 dashboard`; GitHub, GitLab, Jira: N a key; on local: a "
                      "markdown file PATH)."),
    click.option("--dashboard-interval", metavar="DURATION", default="1m", show_default=True,
                 help="Least time between two writes of the --dashboard issue (at least 10s on "
                      "GitHub, GitLab and Jira, 1s on local)."),
)
