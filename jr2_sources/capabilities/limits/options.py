"""`jr2 ready`'s and `jr2 work`'s options of the limits (`policy.Limits` parses them)."""

from __future__ import annotations

import click

from jr2_sources.capabilities import options

READY_OPTIONS = options(
    click.option("--global-cap", type=click.IntRange(min=1), default=None, metavar="N",
                 help="Show the report as pools with this --global-cap see it."),
    click.option("--exclusive-by", "exclusive_by", metavar="SPEC", multiple=True,
                 help="Show the report as pools with this --exclusive-by see it (repeatable)."),
    click.option("--control-issue", metavar="ID", default=None,
                 help="GitHub, Jira, GitLab: the pools' --control-issue; its lock comments are "
                      "read (read-only) and counted as the pools count them."),
)

WORK_OPTIONS = options(
    click.option("--global-cap", type=click.IntRange(min=1), default=None, metavar="N",
                 help="At most N items held at once by every pool on this tracker (all "
                      "machines)."),
    click.option("--exclusive-by", "exclusive_by", metavar="SPEC", multiple=True,
                 help="Conflict groups: label:GLOB (each matching label is a group) or touches "
                      "(a 'Touches: a, b' line in the body); two items of one group never run "
                      "at once anywhere (repeatable)."),
    click.option("--control-issue", metavar="ID", default=None,
                 help="GitHub, Jira, GitLab: the issue whose comments hold the claims of "
                      "--global-cap and --exclusive-by (every pool names the same one, e.g. "
                      "o/r#1)."),
)
