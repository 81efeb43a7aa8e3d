"""`jr2 work`'s option of approval gates (`policy.check_name` checks each name)."""

from __future__ import annotations

import click

from jr2_sources.capabilities import options

WORK_OPTIONS = options(
    click.option("--gate", "gates", metavar="NAME", multiple=True,
                 help="An approval gate a command may ask for (exit 79 after printing `jr2: "
                      "await-approval NAME [reason]`): the item waits for a person's answer on "
                      "the tracker. Repeatable."),
)
