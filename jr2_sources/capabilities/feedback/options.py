"""The click option of the feedback loop, `jr2 work --on-feedback rerun|nothing`.

The option keeps its value in the click context (`chosen` reads it), so a command composes it
with one decorator; `jr2 work KIND: --help` lists it only for kinds that declare the capability.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .policy import CHOICES

__all__ = ["META", "chosen", "on_feedback_option"]

META = "jr2.on_feedback"
_F = TypeVar("_F", bound=Callable[..., Any])


def _keep(ctx: click.Context, _param: click.Parameter, value: str) -> str:
    ctx.meta[META] = value
    return value


_OPTION = click.option(
    "--on-feedback", type=click.Choice(CHOICES), default="nothing", show_default=True,
    expose_value=False, callback=_keep,
    help="rerun: when an item waiting in review gets red checks or changes requested by a "
         "writer, run it again on its branch with the feedback in JR2_FEEDBACK_JSON / "
         "JR2_FEEDBACK_TEXT (needs --max-attempts 2 or more; GitHub: --done-when merged "
         "--on-success review).")


def on_feedback_option(fn: _F) -> _F:
    """Add `--on-feedback` to a click command (its value: `chosen()`)."""
    return _OPTION(fn)


def chosen(given: str | None = None) -> str:
    """`given`, else the value of `--on-feedback` in the running click command, else
    `nothing`."""
    if given is not None:
        return given
    ctx = click.get_current_context(silent=True)
    value = ctx.meta.get(META) if ctx is not None else None
    return str(value) if value else "nothing"
