"""The `jr2` command line (click).

Every command turns a `Jr2Error` into `error: <one line>` and its exit code; a traceback is kept
for defects only (`jr2 run` prints it with `--verbose`). Exit codes: 0 drained or done, 1 failed,
2 bad usage, 3 deadlocked, 4 error, 130 interrupted. Commands are loaded lazily (click's lazy
subcommands, `Jr2Group`): `jr2 --help` lists each by the help text it was registered with and
imports none of their modules; the engine's own are in `jr2_core.commands`, plugins register
theirs through `jr2_register_commands` (eagerly with `cli.add_command`, or with
`add_lazy_command`). Plugin source kinds register on first use of the registry.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from . import __version__
from .errors import Jr2Error, UsageError, error_words
from .paths import default_state_dir, prepare_state_dir
from .plugins import load

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_DEADLOCKED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


def fail(message: str, code: int = EXIT_USAGE) -> None:
    """Print `error: message` to stderr and exit with `code`."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def one_line(exc: ValidationError, where: str = "") -> str:
    """A pydantic error as one line: the first field and message, and how many more."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(value)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}{loc}: {error_words(first)}{more}"


class Jr2Group(click.Group):
    """A click group that turns jr2's errors into one line and an exit code, adds the plugins'
    commands when first asked for its commands (a plugin's command module may import this one),
    and imports a lazy command (`lazy`: name -> (`module:attr`, its help's first paragraph))
    only when it is run or asked for its own help."""

    _plugins_added = False

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, tuple[str, str]] = dict(lazy or {})

    def _add_plugins(self) -> None:
        if not self._plugins_added:
            self._plugins_added = True
            _add_plugin_commands(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._add_plugins()
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._add_plugins()
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attr = self.lazy[cmd_name][0].partition(":")
            command = vars(import_module(module))[attr]
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy[cmd_name][0]} is not a click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def listed(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command as `--help` lists it: loaded if it is, else a stand-in that carries
        the help text it was registered with."""
        if cmd_name in self.lazy and cmd_name not in self.commands:
            return click.Command(cmd_name, help=self.lazy[cmd_name][1])
        return self.get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing, from `listed`, so that `--help` imports no lazy command."""
        commands = [(name, cmd) for name in self.list_commands(ctx)
                    if (cmd := self.listed(ctx, name)) is not None and not cmd.hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit))
                                    for name, cmd in commands])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Jr2Error as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:  # Ctrl-C outside a run (a read retrying): 130, not click's 1
            click.echo("jr2: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except ValidationError as exc:
            fail(one_line(exc))


def add_lazy_command(cli: click.Group, name: str, target: str, short_help: str) -> None:
    """Add the command `target` (`module:attr`) to `cli` as `name`, imported when it is first
    run or asked for its help; `short_help` (the first paragraph of its help) is what `jr2
    --help` lists meanwhile. A group that is not jr2's imports it now."""
    if isinstance(cli, Jr2Group):
        cli.lazy[name] = (target, short_help)
        return
    module, _, attr = target.partition(":")
    cli.add_command(vars(import_module(module))[attr], name)


def state_option(f: F) -> F:
    return click.option(
        "--state", "state_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="State directory (default: $JR2_STATE_DIR, else .jr2 beside jr2.toml, else ./.jr2).",
    )(f)


def resolve_state(state_dir: Path | None, *, create: bool = False) -> Path:
    """`--state`, else the default state directory; created (with its `.gitignore`) when the
    command writes state."""
    path = state_dir if state_dir is not None else default_state_dir()
    return prepare_state_dir(path) if create else path


def parse_json_arg(value: str | None, what: str) -> Any:
    """`--input` values: JSON text, or `@file` holding JSON."""
    if value is None:
        return None
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{what}: {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                         ) from None


ENGINE_COMMANDS = {
    "run": ("jr2_core.commands:run_cmd",
            "Run a workflow: TARGET is FILE.py:ATTR or module:attr naming a Machine (e.g. a "
            "Pool)."),
    "gates": ("jr2_core.commands:gates_cmd", "List the open gates of a live run: what needs "
              "you now."),
    "send": ("jr2_core.commands:send_cmd", "Send EVENT to the gate GATE of a live run (ids are "
             "matched exactly)."),
    "plugins": ("jr2_core.commands:plugins_cmd", "List the plugins: name, distribution, "
                "version, hooks, source kinds, and any error."),
}
"""The engine's own commands (`jr2_core.commands`), loaded lazily like the plugins' ones."""


@click.group(cls=Jr2Group, lazy=ENGINE_COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="jr2")
def main() -> None:
    """jr2: point a Pool of workers at an issue tracker.

    \b
    jr2 ready SOURCE          what is ready, blocked and claimed (read-only)
    jr2 work SOURCE -- CMD    run CMD once per ready item, claiming each safely
    jr2 run FILE.py:ATTR      run a Python workflow (a Pool)
    jr2 gates / jr2 send      see and answer the gates of a live run
    """


def _add_plugin_commands(cli: click.Group) -> None:
    host = load(complete=False)  # the commands only: no source registry for `jr2 --help`
    for impl in host.pm.hook.jr2_register_commands.get_hookimpls():
        try:
            impl.function(cli=cli)
        except Exception as exc:  # a broken plugin must not break the CLI
            for info in host.plugins:
                if info.name == impl.plugin_name:
                    info.error = f"registering commands failed: {type(exc).__name__}: {exc}"


if __name__ == "__main__":
    main()
