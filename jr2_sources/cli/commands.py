"""The built-in commands that need sources: `jr2 ready`, `jr2 work`, `jr2 local retry`.

They are registered through the `jr2_register_commands` hook like any plugin's commands, so
jr2_core's command line holds no tracker code. SOURCE is `kind:target`; the options after it
belong to the kind's config model (`jr2 ready KIND: --help` lists them); everything after `--`
in `jr2 work` is the COMMAND.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from jr2_core.cli import (
    EXIT_DEADLOCKED,
    fail,
    host_and_wait,
    progress_printer,
    resolve_state,
    state_option,
)
from jr2_core.cli import (
    observers as with_plugins,
)
from jr2_core.errors import UsageError
from jr2_core.hookspecs import hookimpl
from jr2_sources.registry import SourceEnv, kind_help, split_source

FORMATS = ("table", "json", "markdown", "mermaid", "dot")


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


def _source(spec: str, options: list[str], state: Path, *, read_only: bool) -> tuple[Any, Any]:
    """Build the adapter for SOURCE (`kind:target` or a jr2.toml name) and its options."""
    from jr2_core.errors import ConfigError
    from jr2_sources.hooks import load_registry
    from jr2_sources.projectconfig import resolve_source
    from jr2_sources.tracker import as_tracker

    kind, config = resolve_source(spec, options, load_registry())
    try:
        adapter = kind.factory(config, SourceEnv(state_dir=state, read_only=read_only))
    except ModuleNotFoundError as exc:
        raise UsageError(f"{kind.name}: needs the Python package {exc.name!r}, which is not "
                         f"installed (for built-in kinds: pip install 'jr2[{kind.name}]')"
                         ) from None
    try:
        return as_tracker(adapter), config
    except UsageError as exc:
        raise ConfigError(f"source kind {kind.name!r} of plugin {kind.plugin or '?'}: {exc}"
                          ) from None


def _show_kind_help(spec: str) -> None:
    from jr2_sources.hooks import load_registry

    kind = load_registry().get(split_source(spec)[0])
    click.echo(kind_help(kind))


# -- jr2 ready ----------------------------------------------------------------------------------


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
@state_option
@click.pass_context
def ready_cmd(ctx: click.Context, source: str | None, as_json: bool, fmt: str | None,
              explain_id: str | None, fail_on: str | None, state_dir: Path | None) -> None:
    """Show what is ready, what is blocked and why, and what is claimed. Read-only, always:
    it writes to no tracker and creates no state.

    SOURCE is KIND:TARGET (e.g. local:backlog.toml); `jr2 ready KIND: --help` lists the options
    of a kind. Exit 0 when the report was made, whatever it shows.
    """
    if "jr2.kind_help" in ctx.meta:
        _show_kind_help(ctx.meta["jr2.kind_help"])
        return
    if source is None:
        click.echo(ctx.get_help())
        ctx.exit(2)
    import gc

    from jr2_sources import report

    # a one-shot command that builds many small objects and then exits: the cyclic GC only
    # costs time here (about a quarter of the run on a 100k-item backlog)
    gc.disable()
    adapter, config = _source(source, list(ctx.args), resolve_state(state_dir), read_only=True)
    from jr2_core.text import terminal_safe
    from jr2_sources.readyset import compute_ready_set
    from jr2_sources.tracker import ReadOnly, layer_options

    rs = compute_ready_set(ReadOnly(adapter).snapshot(), now=datetime.now(UTC),
                           children_block=layer_options(config).children_block)
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
    elif fmt == "markdown":
        click.echo(report.render_markdown(rs))
    elif fmt == "mermaid":
        click.echo(report.render_mermaid(rs))
    elif fmt == "dot":
        click.echo(report.render_dot(rs))
    elif sys.stdout.isatty():
        from rich.console import Console

        report.render_rich(rs, Console())
    else:
        click.echo(report.render_text(rs).rstrip("\n"))
    if fail_on == "deadlock" and not rs.ready and not rs.claimed and rs.blocked:
        sys.exit(EXIT_DEADLOCKED)


# -- jr2 work -----------------------------------------------------------------------------------


class WorkCommand(SourceCommand):
    takes_command = True


@click.command(
    "work", cls=WorkCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("source", required=False)
@click.option("--cap", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="How many commands run at once.")
@click.option("--timeout", metavar="DURATION", default=None,
              help="Stop a command that runs longer (e.g. 30m); it fails.")
@click.option("--lease", metavar="DURATION", default="10m", show_default=True,
              help="How long a claim lasts unless renewed (renewed every third of it).")
@click.option("--wait", "wait_forever", is_flag=True,
              help="Keep waiting for new work instead of ending when drained (Ctrl-C ends).")
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="Port of the run host on 127.0.0.1 (0: any free port).")
@click.option("--listen", metavar="HOST:PORT", default=None,
              help="Serve POST /webhook here (a non-loopback address serves only the webhook: "
                   "the control API stays on 127.0.0.1:--port).")
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Serve --listen over HTTPS with this certificate (PEM; chain included).")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The private key of --tls-cert (PEM), unless the certificate file holds it.")
@click.option("--webhook-secret-env", metavar="NAME", default=None,
              help="Verify webhook deliveries with the secret in this environment variable.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per item: a transient failure (see --transient-exit) is offered again "
                   "after a backoff until they are spent; 1: every failure is final.")
@click.option("--transient-exit", "transient_exit", type=click.IntRange(1, 255), multiple=True,
              metavar="CODE",
              help="An exit code that is a transient failure (repeatable; default 75, "
                   "EX_TEMPFAIL).")
@click.option("--retry-backoff", metavar="DURATION", default="30s", show_default=True,
              help="Wait after the first transient failure; doubled after each next one.")
@click.option("--retry-backoff-max", metavar="DURATION", default="1h", show_default=True,
              help="The longest wait between attempts.")
@click.option("--workdir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Run COMMAND in this directory (default: the current one).")
@click.option("--worktree", "worktree_base", metavar="BASE", is_flag=False, flag_value="HEAD",
              default=None,
              help="Run COMMAND in a git worktree of its own per item, on JR2_ITEM_BRANCH "
                   "from BASE (default HEAD); removed after success, kept after a failure.")
@click.option("--pass-env", "pass_env", metavar="NAME", multiple=True,
              help="Pass this secret-named variable (a token, a key) on to COMMAND; by default "
                   "COMMAND gets none of them (repeatable).")
@click.option("-q", "--quiet", is_flag=True,
              help="Print only errors and failed items (no progress, no summary line).")
@click.option("--json", "as_json", is_flag=True, help="Print the run result as JSON on stdout.")
@state_option
@click.pass_context
def work_cmd(ctx: click.Context, source: str | None, cap: int, timeout: str | None, lease: str,
             wait_forever: bool, port: int, listen: str | None, tls_cert: Path | None,
             tls_key: Path | None, webhook_secret_env: str | None, max_attempts: int,
             transient_exit: tuple[int, ...], retry_backoff: str, retry_backoff_max: str,
             workdir: Path | None, worktree_base: str | None, pass_env: tuple[str, ...],
             quiet: bool, as_json: bool, state_dir: Path | None) -> None:
    """Run COMMAND once for each ready item of SOURCE, claiming each so that no other pool
    (here or on another machine) runs it too:

    \b
        jr2 work local:backlog.toml --cap 3 -- python agent.py

    COMMAND runs in the current directory (or --workdir, or a git worktree per item with
    --worktree) with JR2_ITEM_ID, JR2_ITEM_TITLE, JR2_ITEM_URL, JR2_ITEM_JSON, JR2_ITEM_BRANCH,
    JR2_SANDBOX (a scratch directory of its own) and JR2_RUN_ID set, and without jr2's tokens
    and secrets (--pass-env NAME passes one); its output goes to a log per item under the state
    directory. Exit 0 succeeds the item, anything else fails it (with --max-attempts, exit 75
    or a --transient-exit code retries it). Exit codes: 0 drained, 1 failed, 3 deadlocked,
    4 error, 130 interrupted.
    """
    if "jr2.kind_help" in ctx.meta:
        _show_kind_help(ctx.meta["jr2.kind_help"])
        return
    if source is None:
        click.echo(ctx.get_help())
        ctx.exit(2)
    from jr2_sources.kit.durations import parse_duration

    from .runner import resolve_command

    argv = resolve_command(ctx.meta.get("jr2.command", []))
    try:
        lease_s = parse_duration(lease)
        timeout_s = parse_duration(timeout) if timeout is not None else None
    except ValueError as exc:
        raise UsageError(f"--lease/--timeout: {exc}") from None
    policy = _attempt_policy(max_attempts, transient_exit, retry_backoff, retry_backoff_max)
    serve = _listen_options(listen, port, webhook_secret_env, tls_cert, tls_key)
    secret = serve.secret
    state = resolve_state(state_dir, create=True)
    adapter, config = _source(source, list(ctx.args), state, read_only=False)
    if secret is not None and adapter.webhook is None:
        raise UsageError(f"{adapter.name}: this source takes no webhooks "
                         "(drop --webhook-secret-env)")
    import secrets as _secrets

    from .workerenv import worker_env
    from .workspace import Workspace, Worktrees

    run_id = f"r-{_secrets.token_hex(4)}"
    workspace = (Worktrees.open(workdir or Path.cwd(), worktree_base, state, run_id)
                 if worktree_base is not None else Workspace((workdir or Path.cwd()).resolve()))
    held = [n for n in (webhook_secret_env, getattr(config, "token_env", None)) if n]
    env = worker_env(pass_env, held)
    adapter.snapshot()  # bad input (a broken backlog, no access) fails here, nothing claimed
    import asyncio

    result, ws = asyncio.run(_work(adapter, config, argv, cap=cap, lease=lease_s,
                                   timeout=timeout_s, wait=wait_forever, serve=serve,
                                   state=state, run_id=run_id, workspace=workspace, env=env,
                                   quiet=quiet, policy=policy))
    _summary(result, ws, quiet=quiet)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, default=str))
    if result.state == "error":
        fail(result.error or "the run ended with an error", result.exit_code)
    sys.exit(result.exit_code)


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _attempt_policy(max_attempts: int, transient: tuple[int, ...], backoff: str,
                    backoff_max: str) -> Any:
    """`--max-attempts`, `--transient-exit` and `--retry-backoff[-max]` as an AttemptPolicy."""
    from jr2_sources.kit.durations import parse_duration
    from jr2_sources.retries import EX_TEMPFAIL, AttemptPolicy

    try:
        base, cap = parse_duration(backoff), parse_duration(backoff_max)
    except ValueError as exc:
        raise UsageError(f"--retry-backoff/--retry-backoff-max: {exc}") from None
    return AttemptPolicy(max_attempts=max_attempts,
                         transient=frozenset(transient or (EX_TEMPFAIL,)),
                         backoff=base, backoff_max=max(cap, base))


@dataclass(frozen=True)
class _Serve:
    """Where the run host listens: the control API (always loopback), the webhook's public
    address when it differs (`--listen` off loopback, or with TLS), and the webhook secret."""

    control: tuple[str, int]
    public: tuple[str, int] | None
    ssl_context: Any
    secret: str | None


def _listen_options(listen: str | None, port: int, secret_env: str | None,
                    tls_cert: Path | None = None, tls_key: Path | None = None) -> _Serve:
    """Check `--listen`, `--port`, `--tls-*` and `--webhook-secret-env`; without a secret,
    loopback only."""
    import os

    host, lport = "127.0.0.1", port
    if listen is not None:
        h, sep, p = listen.rpartition(":")
        if not sep or not p.isdigit() or int(p) > 65535:
            raise UsageError(f"--listen {listen!r}: expected HOST:PORT with a port from 0 to "
                             "65535, e.g. 127.0.0.1:8787")
        host, lport = h.strip("[]") or "127.0.0.1", int(p)
    secret = None
    if secret_env is not None:
        secret = os.environ.get(secret_env)
        if not secret:
            raise UsageError(f"--webhook-secret-env {secret_env}: that variable is not set")
    if secret is None and host not in _LOOPBACK:
        raise UsageError(f"--listen {listen}: without --webhook-secret-env the host listens on "
                         "loopback only (127.0.0.1)")
    if (tls_cert or tls_key) and listen is None:
        raise UsageError("--tls-cert/--tls-key serve the webhook of --listen: give --listen too")
    if tls_key and not tls_cert:
        raise UsageError("--tls-key needs --tls-cert")
    ctx = _tls_context(tls_cert, tls_key) if tls_cert is not None else None
    if host in _LOOPBACK and ctx is None:
        return _Serve((host, lport), None, None, secret)
    return _Serve(("127.0.0.1", port), (host, lport), ctx, secret)


def _tls_context(cert: Path, key: Path | None) -> Any:
    """A server TLS context from PEM files; a bad file is a usage error."""
    import ssl

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise UsageError(f"--tls-cert {cert}: cannot load the certificate and key: {why}"
                         ) from None
    return ctx


async def _work(adapter: Any, config: Any, argv: list[str], *, cap: int, lease: float,
                timeout: float | None, wait: bool, serve: _Serve, state: Path, run_id: str,
                workspace: Any, env: dict[str, str], quiet: bool,
                policy: Any = None) -> tuple[Any, Any]:
    from jr2_core import define_event, pool, start
    from jr2_sources.kit.redact import Redactor, secret_values
    from jr2_sources.tracker import layer_options
    from jr2_sources.worksource import WorkSource, default_holder

    from .runner import command_worker

    wake = define_event(name="wake", description="The tracker changed: look for work again.")
    opts = layer_options(config)
    poll = opts.poll_every
    ws = WorkSource(adapter, holder=default_holder(run_id), lease=lease,
                    children_block=opts.children_block, poll_every=poll, idle_poll=poll or 5.0,
                    wake=wake, attempts=policy)
    worker = command_worker(argv, log_dir=state / "logs" / run_id, run_id=run_id,
                            redact=Redactor(secret_values()), timeout=timeout,
                            workspace=workspace, base_env=env)
    machine = pool(worker, id="work", source=ws.as_source(), item_id=lambda w: w.id, cap=cap,
                   on_drained="wait" if wait else "final")
    observers: list[Any] = [ws.tally.observe]
    view = None
    if quiet:
        pass
    elif sys.stderr.isatty():
        from .liveview import LiveView

        view = LiveView(ws)
        observers.append(view.observe)
    else:
        observers.append(progress_printer(False))

    handle: list[Any] = []

    def begin() -> Any:
        handle.append(start(machine, None, state_dir=state, observers=with_plugins(*observers),
                            run_id=run_id))
        return handle[0]

    def setup_host(host: Any) -> None:
        hook = ws.tracker.webhook
        if hook is not None:
            from jr2_sources.kit.webhooks import attach_webhook

            def receiver(headers: Any, body: bytes, secret: str | None) -> Any:
                verdict = hook(headers, body, secret)
                if verdict.wake and verdict.status < 300:
                    ws.poke()  # people win: look at the held items at once
                return verdict

            attach_webhook(host, handle[0], receiver, serve.secret)

    try:
        if view is not None:
            view.start()
        result = await host_and_wait(begin, port=serve.control[1], listen=serve.control[0],
                                     setup_host=setup_host, quiet=quiet or view is not None,
                                     on_signal=_on_signal, public=serve.public,
                                     ssl_context=serve.ssl_context)
    finally:
        if view is not None:
            view.stop()
        ws.tracker.close()
    return result, ws


def _on_signal(n: int) -> None:
    """Ctrl-C: the first abandons the tracker retries in flight (the releases that follow still
    retry); the second also kills every command's process group at once."""
    from jr2_sources.kit.retry import interrupt_retries

    from .runner import kill_all

    interrupt_retries()
    if n >= 2:
        kill_all()


def run_ending(state: str, status: str) -> str:
    """How a run ended, in words: `drained`, `deadlocked`, `failed`, `failed and deadlocked`,
    `ended with an error`, `interrupted` (the run's state and the Pool's status in one)."""
    if state == "done":
        return status
    if state == "failed":
        return "failed and deadlocked" if status == "deadlocked" else "failed"
    return {"error": "ended with an error", "interrupted": "interrupted"}.get(state, state)


def _summary(result: Any, ws: Any, *, quiet: bool = False) -> None:
    """A few lines on stderr: how the run ended, what ran, and why the rest is blocked (ids and
    reasons come from the tracker and the commands: no control character passes). With
    `quiet`, only the failed items."""
    from jr2_core.text import one_line
    from jr2_sources.report import describe_reasons

    out = result.output
    if result.state == "failed" and result.failure is not None:
        out = result.failure.get("detail")
    data = out.model_dump(mode="json") if hasattr(out, "model_dump") else out
    status = data.get("status", result.state) if isinstance(data, dict) else result.state
    tally = ws.tally
    if not quiet:
        click.echo(f"jr2: run {result.run_id} {run_ending(result.state, status)}: "
                   f"{tally.done} done, {len(tally.failed)} failed, {tally.cancelled} cancelled",
                   err=True)
    for iid, reason in tally.failed.items():
        click.echo(f"jr2:   failed {one_line(iid)}: {one_line(reason)}", err=True)
    for iid, reason in tally.stopped.items():
        click.echo(f"jr2:   stopped {one_line(iid)}: a person took it back ({one_line(reason)}); "
                   "nothing recorded", err=True)
    for iid, reason in tally.skipped.items():
        click.echo(f"jr2:   skipped {one_line(iid)}: the tracker refused the claim "
                   f"({one_line(reason)})", err=True)
    for iid in sorted(tally.retried):
        click.echo(f"jr2:   retried {one_line(iid)}: a person cleared its failure during the run",
                   err=True)
    for iid, reason in tally.unsettled.items():
        click.echo(f"jr2:   not settled {one_line(iid)}: {one_line(reason)}", err=True)
    rs = ws.last
    if not quiet and rs is not None and status == "deadlocked" and rs.blocked:
        click.echo("jr2: blocked:", err=True)
        for entry in rs.blocked:
            click.echo(f"jr2:   {one_line(entry.item.id)}: "
                       f"{one_line(describe_reasons(entry.reasons))}", err=True)


# -- jr2 local ----------------------------------------------------------------------------------


@click.group("local")
def local_group() -> None:
    """Commands of the local Work Source."""


@local_group.command("retry")
@click.argument("backlog", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("item_ids", nargs=-1, required=True)
@state_option
def retry_cmd(backlog: Path, item_ids: tuple[str, ...], state_dir: Path | None) -> None:
    """Clear the failure of ITEM_IDS in BACKLOG so that they are offered again."""
    adapter, _ = _source(f"local:{backlog}", [], resolve_state(state_dir, create=True),
                         read_only=False)
    try:
        for iid in item_ids:
            cleared = adapter.retry(iid)
            click.echo(f"{iid}: {'failure cleared' if cleared else 'had no failure'}")
    finally:
        adapter.close()


@hookimpl
def jr2_register_commands(cli: click.Group) -> None:
    cli.add_command(ready_cmd)
    cli.add_command(work_cmd)
    cli.add_command(local_group)


