"""`jr2 ready SOURCE`: the Ready-set report, read-only (`jr2_sources.report` renders it).

SOURCE is `kind:target`; the options after it belong to the kind's config model (`jr2 ready
KIND: --help` lists them, and only the command's options the kind supports). The limits' options
come from their slice (`capabilities.limits.options`).
"""

from __future__ import annotations

import gc
import sys
from datetime import UTC, datetime
from pathlib import Path

import click
from rich.console import Console

from jr2_core.cli import EXIT_DEADLOCKED, resolve_state, state_option
from jr2_core.errors import UsageError
from jr2_core.text import terminal_safe
from jr2_sources import report
from jr2_sources.capabilities.limits import options as limits_options
from jr2_sources.capabilities.limits.lockreport import held_locks
from jr2_sources.capabilities.limits.policy import Limits
from jr2_sources.readyset import compute_ready_set
from jr2_sources.registry import layer_options
from jr2_sources.tracker import ReadOnly

from .source import SourceCommand, open_source, source_or_help

FORMATS = ("table", "json", "markdown", "mermaid", "dot")
_RENDER = {"markdown": report.render_markdown, "mermaid": report.render_mermaid,
           "dot": report.render_dot}


@click.command(
    "ready", cls=SourceCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("source", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report (schema_version 1).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="table (default), json, markdown (for a PR or $GITHUB_STEP_SUMMARY), "
                   "mermaid or dot.")
@click.option("--explain", "explain_id", metavar="ID",
              help="Print the chain that blocks one item, down to its roots.")
@click.option("--fail-on", type=click.Choice(["deadlock"]), default=None,
              help="deadlock: exit 3 when nothing is ready or claimed and items are blocked.")
@limits_options.READY_OPTIONS
@state_option
@click.pass_context
def ready_cmd(ctx: click.Context, source: str | None, as_json: bool, fmt: str | None,
              explain_id: str | None, fail_on: str | None, global_cap: int | None,
              exclusive_by: tuple[str, ...], control_issue: str | None,
              state_dir: Path | None) -> None:
    """Show what is ready, what is blocked and why, and what is claimed. Read-only, always:
    it writes to no tracker and creates no state.

    SOURCE is KIND:TARGET (e.g. local:backlog.toml); `jr2 ready KIND: --help` lists the options
    of a kind. Exit 0 when the report was made, whatever it shows.
    """
    source = source_or_help(ctx, source)
    if source is None:
        return
    # a one-shot command that builds many small objects and then exits: the cyclic GC only
    # costs time here (about a quarter of the run on a 100k-item backlog)
    gc.disable()
    tracker, config = open_source(source, list(ctx.args), resolve_state(state_dir), read_only=True)
    limits = Limits.parse(global_cap, exclusive_by)
    limits.prepare(tracker)
    locks = held_locks(tracker, limits, control_issue)
    snap = ReadOnly(tracker).snapshot()
    limits.tag(snap)
    if locks is not None:
        locks.mark(snap)  # forged locks on the coordination issue: named on their items
    rs = compute_ready_set(snap, now=datetime.now(UTC), global_cap=limits.global_cap,
                           children_block=layer_options(config).children_block, locks=locks)
    fmt = "json" if as_json else (fmt or "table")
    if explain_id is not None:
        try:
            click.echo(terminal_safe(report.explain(rs, explain_id)))
        except KeyError:
            raise UsageError(f"{explain_id!r} is not an open item of {source} and no open item "
                             "refers to it (it is done, outside the source's scope, or unknown)"
                             ) from None
    elif fmt == "json":
        # indented for people; compact (C-encoded, ~5x faster on big backlogs) when piped
        click.echo(report.render_json(rs, indent=2 if sys.stdout.isatty() else None))
    elif fmt in _RENDER:
        click.echo(_RENDER[fmt](rs))
    elif sys.stdout.isatty():
        report.render_rich(rs, Console())
    else:
        click.echo(report.render_text(rs).rstrip("\n"))
    if fail_on == "deadlock" and not rs.ready and not rs.claimed and rs.blocked:
        sys.exit(EXIT_DEADLOCKED)
