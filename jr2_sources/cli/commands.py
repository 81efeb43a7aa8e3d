"""The built-in commands that need sources: `jr2 ready`, `jr2 work`, `jr2 local retry`.

They are registered through the `jr2_register_commands` hook like any plugin's commands, so
jr2_core's command line holds no tracker code. SOURCE is `kind:target`; the options after it
belong to the kind's config model (`jr2 ready KIND: --help` lists them); everything after `--`
in `jr2 work` is the COMMAND.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from jr2_core.cli import (
    EXIT_DEADLOCKED,
    fail,
    resolve_state,
    state_option,
)
from jr2_core.errors import UsageError
from jr2_core.hookspecs import hookimpl
from jr2_sources.capabilities.feedback.options import on_feedback_option

from .compose import WorkResult
from .source import SourceCommand, open_source, source_or_help

FORMATS = ("table", "json", "markdown", "mermaid", "dot")


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
@click.option("--global-cap", type=click.IntRange(min=1), default=None, metavar="N",
              help="Show the report as pools with this --global-cap see it.")
@click.option("--exclusive-by", "exclusive_by", metavar="SPEC", multiple=True,
              help="Show the report as pools with this --exclusive-by see it (repeatable).")
@click.option("--control-issue", metavar="ID", default=None,
              help="GitHub, Jira, GitLab: the pools' --control-issue; its lock comments are "
                   "read (read-only) and counted as the pools count them.")
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
    import gc

    from jr2_sources import report

    # a one-shot command that builds many small objects and then exits: the cyclic GC only
    # costs time here (about a quarter of the run on a 100k-item backlog)
    gc.disable()
    adapter, config = open_source(source, list(ctx.args), resolve_state(state_dir), read_only=True)
    from jr2_core.text import terminal_safe
    from jr2_sources.capabilities.limits.lockreport import held_locks
    from jr2_sources.capabilities.limits.policy import Limits
    from jr2_sources.readyset import compute_ready_set
    from jr2_sources.registry import layer_options
    from jr2_sources.tracker import ReadOnly

    limits = Limits.parse(global_cap, exclusive_by)
    limits.prepare(adapter)
    locks = held_locks(adapter, limits, control_issue)
    snap = ReadOnly(adapter).snapshot()
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
                   "EX_TEMPFAIL). Only with --max-attempts above 1.")
@click.option("--retry-backoff", metavar="DURATION", default=None, show_default="30s",
              help="Wait after the first transient failure; doubled after each next one. "
                   "Only with --max-attempts above 1.")
@click.option("--retry-backoff-max", metavar="DURATION", default=None, show_default="1h",
              help="The longest wait between attempts. Only with --max-attempts above 1.")
@on_feedback_option
@click.option("--global-cap", type=click.IntRange(min=1), default=None, metavar="N",
              help="At most N items held at once by every pool on this tracker (all machines).")
@click.option("--exclusive-by", "exclusive_by", metavar="SPEC", multiple=True,
              help="Conflict groups: label:GLOB (each matching label is a group) or touches "
                   "(a 'Touches: a, b' line in the body); two items of one group never run "
                   "at once anywhere (repeatable).")
@click.option("--control-issue", metavar="ID", default=None,
              help="GitHub, Jira, GitLab: the issue whose comments hold the claims of "
                   "--global-cap and --exclusive-by (every pool names the same one, e.g. o/r#1).")
@click.option("--gate", "gates", metavar="NAME", multiple=True,
              help="An approval gate a command may ask for (exit 79 after printing `jr2: "
                   "await-approval NAME [reason]`): the item waits for a person's answer on "
                   "the tracker. Repeatable.")
@click.option("--workdir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Run COMMAND in this directory (default: the current one).")
@click.option("--worktree", "worktree_base", metavar="BASE", is_flag=False, flag_value="HEAD",
              default=None,
              help="Run COMMAND in a git worktree of its own per item, on JR2_ITEM_BRANCH "
                   "from BASE (default HEAD); removed after success, kept after a failure.")
@click.option("--pass-env", "pass_env", metavar="NAME", multiple=True,
              help="Pass this credential (a token, a key, a URL with a password) on to "
                   "COMMAND; by default COMMAND gets none of them (repeatable). The marker "
                   "key (JR2_MARKER_KEY) is never passed.")
@click.option("--log-limit", "log_limit", metavar="SIZE", default="10MiB", show_default=True,
              help="The most output one item's log keeps (e.g. 512K, 1G); the cut is noted in "
                   "the log.")
@click.option("-q", "--quiet", is_flag=True,
              help="Print only errors and failed items (no progress, no summary line).")
@click.option("--json", "as_json", is_flag=True, help="Print the run result as JSON on stdout.")
@click.option("--dashboard", "dashboard", metavar="N|PATH", default=None,
              help="Keep issue N's body up to date with the Ready-set while the run lasts "
                   "(see `jr2 dashboard`; GitHub, GitLab, Jira: N a key; on local: a markdown "
                   "file PATH).")
@click.option("--dashboard-interval", metavar="DURATION", default="1m", show_default=True,
              help="Least time between two writes of the --dashboard issue (at least 10s on "
                   "GitHub, GitLab and Jira, 1s on local).")
@state_option
@click.pass_context
def work_cmd(ctx: click.Context, source: str | None, cap: int, timeout: str | None, lease: str,
             wait_forever: bool, port: int, listen: str | None, tls_cert: Path | None,
             tls_key: Path | None, webhook_secret_env: str | None, max_attempts: int,
             transient_exit: tuple[int, ...], retry_backoff: str | None,
             retry_backoff_max: str | None,
             global_cap: int | None, exclusive_by: tuple[str, ...], control_issue: str | None,
             gates: tuple[str, ...], workdir: Path | None, worktree_base: str | None,
             pass_env: tuple[str, ...], log_limit: str, quiet: bool, as_json: bool,
             dashboard: str | None, dashboard_interval: str, state_dir: Path | None) -> None:
    """Run COMMAND once for each ready item of SOURCE, claiming each so that no other pool
    (here or on another machine) runs it too:

    \b
        jr2 work local:backlog.toml --cap 3 -- python agent.py

    COMMAND runs in the current directory (or --workdir, or a git worktree per item with
    --worktree) with JR2_ITEM_ID, JR2_ITEM_TITLE, JR2_ITEM_URL, JR2_ITEM_JSON, JR2_ITEM_BRANCH,
    JR2_SANDBOX (a scratch directory of its own) and JR2_RUN_ID set, and without jr2's tokens
    and secrets (--pass-env NAME passes one); its output goes to a log per item under the state
    directory. Exit 0 succeeds the item, anything else fails it (with --max-attempts, exit 75
    or a --transient-exit code retries it; with --gate, exit 79 asks for approval). Exit
    codes: 0 drained, 1 failed, 2 bad usage (a bad option or an unreadable SOURCE at the start:
    nothing claimed), 3 deadlocked, 4 error, 130 interrupted.
    """
    source = source_or_help(ctx, source)
    if source is None:
        return
    from .compose import work

    result = work(source, ctx.meta.get("jr2.command", []), options=list(ctx.args), cap=cap,
                  lease=lease, timeout=timeout, wait=wait_forever, port=port, listen=listen,
                  tls_cert=tls_cert, tls_key=tls_key, webhook_secret_env=webhook_secret_env,
                  workdir=workdir, worktree=worktree_base, pass_env=pass_env, state=state_dir,
                  quiet=quiet, max_attempts=max_attempts, transient_exit=transient_exit,
                  retry_backoff=retry_backoff, retry_backoff_max=retry_backoff_max,
                  global_cap=global_cap, exclusive_by=exclusive_by,
                  control_issue=control_issue, gates=gates, dashboard=dashboard,
                  dashboard_interval=dashboard_interval, log_limit=log_limit)
    _summary(result, quiet=quiet)
    if as_json:
        data = result.run.to_json()
        data["skipped"] = dict(result.tally.skipped)  # refused by the tracker: why, per item
        click.echo(json.dumps(data, indent=2, default=str))
    if result.run.state == "error":
        fail(result.run.error or "the run ended with an error", result.exit_code)
    sys.exit(result.exit_code)


def run_ending(state: str, status: str) -> str:
    """How a run ended, in words: `drained`, `deadlocked`, `failed`, `failed and deadlocked`,
    `ended with an error`, `interrupted` (the run's state and the Pool's status in one)."""
    if state == "done":
        return status
    if state == "failed":
        return "failed and deadlocked" if status == "deadlocked" else "failed"
    return {"error": "ended with an error", "interrupted": "interrupted"}.get(state, state)


def _summary(work: WorkResult, *, quiet: bool = False) -> None:
    """A few lines on stderr: how the run ended, what ran, and why the rest is blocked (ids and
    reasons come from the tracker and the commands: no control character passes). With
    `quiet`, only the failed items."""
    from jr2_core.jsondata import jsonable
    from jr2_core.text import one_line
    from jr2_sources.report import describe_reasons

    result = work.run
    out = result.output
    if result.state == "failed" and result.failure is not None:
        out = result.failure.get("detail")
    data = jsonable(out)
    status = data.get("status", result.state) if isinstance(data, dict) else result.state
    tally = work.tally
    if not quiet:
        more = f", {len(tally.parked)} parked" if tally.parked else ""
        if tally.retries:
            more += f", {tally.retries} {'retry' if tally.retries == 1 else 'retries'}"
        click.echo(f"jr2: run {result.run_id} {run_ending(result.state, status)}: "
                   f"{tally.done} done, {len(tally.failed)} failed, {tally.cancelled} cancelled"
                   f"{more}", err=True)
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
    for iid, gate in tally.parked.items():
        click.echo(f"jr2:   parked {one_line(iid)}: awaits approval of gate {one_line(gate)}",
                   err=True)
    for iid, reason in tally.unsettled.items():
        click.echo(f"jr2:   not settled {one_line(iid)}: {one_line(reason)}", err=True)
    rs = work.ready_set
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
    adapter, _ = open_source(f"local:{backlog}", [], resolve_state(state_dir, create=True),
                         read_only=False)
    try:
        for iid in item_ids:
            cleared = adapter.retry(iid)
            click.echo(f"{iid}: {'failure cleared' if cleared else 'had no failure'}")
    finally:
        adapter.close()


def _answer(backlog: Path, item_id: str, gate: str, state_dir: Path | None, *,
            approve: bool, reason: str | None) -> None:
    """Answer the gate GATE of ITEM in BACKLOG (`jr2 local approve|reject`)."""
    import getpass

    from jr2_sources.capabilities.gates.policy import answer

    adapter, _ = open_source(f"local:{backlog}", [], resolve_state(state_dir, create=True),
                             read_only=False)
    try:
        try:
            who = getpass.getuser()
        except (KeyError, OSError):
            who = None
        try:
            ok = answer(adapter, item_id, gate, approve=approve, reason=reason, by=who)
        except ValueError as exc:
            fail(str(exc), 2)
    finally:
        adapter.close()
    if not ok:
        fail(f"{item_id}: gate {gate!r} is not awaiting an answer", 1)
    click.echo(f"{item_id}: gate {gate.lower()} {'approved' if approve else 'rejected'}")


@local_group.command("approve")
@click.argument("backlog", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("item_id")
@click.argument("gate")
@state_option
def approve_cmd(backlog: Path, item_id: str, gate: str, state_dir: Path | None) -> None:
    """Approve the gate GATE that ITEM_ID in BACKLOG awaits (`jr2 work --gate GATE`): its
    next attempt runs with JR2_GATE_<GATE>=approved. Exit 1 when the gate awaits no answer."""
    _answer(backlog, item_id, gate, state_dir, approve=True, reason=None)


@local_group.command("reject")
@click.argument("backlog", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("item_id")
@click.argument("gate")
@click.option("--reason", default=None, help="Why: the next attempt gets it in "
                                              "JR2_GATE_<GATE>_REASON.")
@state_option
def reject_cmd(backlog: Path, item_id: str, gate: str, reason: str | None,
               state_dir: Path | None) -> None:
    """Reject the gate GATE that ITEM_ID in BACKLOG awaits: its next attempt runs with
    JR2_GATE_<GATE>=rejected (and the reason), to clean up. Exit 1 when the gate awaits no
    answer."""
    _answer(backlog, item_id, gate, state_dir, approve=False, reason=reason)


@hookimpl
def jr2_register_commands(cli: click.Group) -> None:
    cli.add_command(ready_cmd)
    cli.add_command(work_cmd)
    cli.add_command(local_group)
    from jr2_sources.capabilities.dashboard.command import dashboard_cmd

    cli.add_command(dashboard_cmd)
    from jr2_sources.playground.cli import playground_group

    cli.add_command(playground_group)


