"""What every command over a SOURCE shares: its click command class, `KIND: --help`, opening it.

`jr2 ready`, `jr2 work` (`ready`, `work`, `compose`) and `jr2 dashboard` (the dashboard slice)
import this module; it imports none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from jr2_core.errors import ConfigError, UsageError
from jr2_sources.capabilities import unsupported_options
from jr2_sources.hooks import load_registry
from jr2_sources.projectconfig import resolve_source
from jr2_sources.registry import SourceEnv, factory_of, kind_capabilities, kind_help, split_source
from jr2_sources.tracker import as_tracker


class SourceCommand(click.Command):
    """A command whose unknown options belong to the source kind, and whose `--help` after
    SOURCE shows that kind's options. Everything after `--` is kept as the COMMAND (and named
    in the usage line when `takes_command`)."""

    takes_command = False

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = [self.options_metavar or "[OPTIONS]", "SOURCE", "[KIND OPTIONS]"]
        if self.takes_command:
            pieces.append("-- COMMAND [ARGS]...")
        return pieces

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["jr2.command"] = args[i + 1:]
            args = args[:i]
        positional = [a for a in args if not a.startswith("-")]
        helps = {"--help", "-h"}
        if positional and ":" in positional[0] and helps & set(args):
            ctx.meta["jr2.kind_help"] = positional[0]
            args = [a for a in args if a not in helps]
        return super().parse_args(ctx, args)


def _show_kind_help(spec: str, ctx: click.Context) -> None:
    """The kind's own options, its capabilities, then the command's options the kind supports
    (an option whose capability its tracker class does not declare is left out)."""
    kind = load_registry().get(split_source(spec)[0])
    click.echo(kind_help(kind))
    caps = kind_capabilities(kind)
    hidden = unsupported_options(caps) if caps is not None else frozenset()
    if caps is not None:
        click.echo(f"\nCapabilities: {', '.join(caps) or 'none'}")
    rows = [rec for p in ctx.command.get_params(ctx)
            if isinstance(p, click.Option) and not set(p.opts) & hidden and p.name != "help"
            if (rec := p.get_help_record(ctx)) is not None]
    if rows:
        formatter = ctx.make_formatter()
        with formatter.section(f"Options of jr2 {ctx.command.name} for {kind.name}"):
            formatter.write_dl(rows)
        click.echo("\n" + formatter.getvalue().rstrip())


def source_or_help(ctx: click.Context, source: str | None) -> str | None:
    """What a source command does before anything else: `KIND: --help` shows the kind's options
    (None: nothing more to do); no SOURCE shows the command's help and exits 2; else SOURCE."""
    if "jr2.kind_help" in ctx.meta:
        _show_kind_help(ctx.meta["jr2.kind_help"], ctx)
        return None
    if source is None:
        click.echo(ctx.get_help())
        ctx.exit(2)
    return source


def open_source(spec: str, options: list[str], state: Path, *, read_only: bool
                ) -> tuple[Any, Any]:
    """Build the tracker for SOURCE (`kind:target` or a jr2.toml name) and its options."""
    kind, config = resolve_source(spec, options, load_registry())
    try:
        tracker = factory_of(kind)(config, SourceEnv(state_dir=state, read_only=read_only))
    except ModuleNotFoundError as exc:
        raise UsageError(f"{kind.name}: needs the Python package {exc.name!r}, which is not "
                         f"installed (for built-in kinds: pip install 'jr2[{kind.name}]')"
                         ) from None
    try:
        return as_tracker(tracker), config
    except UsageError as exc:
        raise ConfigError(f"source kind {kind.name!r} of plugin {kind.plugin or '?'}: {exc}"
                          ) from None
