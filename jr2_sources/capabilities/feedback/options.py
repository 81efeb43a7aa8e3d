"""`jr2 work`'s option of the feedback loop, `--on-feedback rerun|nothing`."""

from __future__ import annotations

import click

from jr2_sources.capabilities import options

from .policy import CHOICES

__all__ = ["WORK_OPTIONS"]

WORK_OPTIONS = options(
    click.option("--on-feedback", "on_feedback", type=click.Choice(CHOICES), default="nothing",
                 show_default=True,
                 help="rerun: when an item waiting in review gets red checks or changes "
                      "requested by a writer, run it again on its branch with the feedback in "
                      "JR2_FEEDBACK_JSON / JR2_FEEDBACK_TEXT (needs --max-attempts 2 or more; "
                      "GitHub: --done-when merged --on-success review)."),
)
