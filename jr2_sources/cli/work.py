"""`jr2 work SOURCE -- COMMAND`: the command line of `compose.work`, and its summary lines.

The options of each capability come from its slice (`WORK_OPTIONS` of `capabilities.webhooks`,
`.retries`, `.feedback.options`, `.limits.options`, `.gates.options`, `.dashboard.options`),
applied here where they stand in `--help`, and reach `work()` as its keywords of the same
names; `jr2 work KIND: --help` lists only those the kind supports.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from jr2_core.cli import fail, state_option
from jr2_core.jsondata import jsonable
from jr2_core.text import one_line
from jr2_sources.capabilities import attempts, webhooks
from jr2_sources.capabilities.approvals import options as gates_options
from jr2_sources.capabilities.dashboard import options as dashboard_options
from jr2_sources.capabilities.feedback import options as feedback_options
from jr2_sources.capabilities.limits import options as limits_options
from jr2_sources.report import describe_reasons

from .compose import WorkResult, work
from .heap import share_malloc_arena
from .source import SourceCommand, source_or_help


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
@click.option("--wait", is_flag=True,
              help="Keep waiting for new work instead of ending when drained (Ctrl-C ends).")
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="Port of the run host on 127.0.0.1 (0: any free port).")
@webhooks.WORK_OPTIONS
@attempts.WORK_OPTIONS
@feedback_options.WORK_OPTIONS
@limits_options.WORK_OPTIONS
@gates_options.WORK_OPTIONS
@click.option("--workdir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Run COMMAND in this directory (default: the current one).")
@click.option("--worktree", metavar="BASE", is_flag=False, flag_value="HEAD",
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
@dashboard_options.WORK_OPTIONS
@state_option
@click.pass_context
def work_cmd(ctx: click.Context, /, source: str | None, as_json: bool, state_dir: Path | None,
             **options: Any) -> None:
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
    share_malloc_arena()  # before the worker threads: a burst leaves no per-thread high water
    # every option but --json and --state is `work()`'s keyword of the same name
    result = work(source, ctx.meta.get("jr2.command", []), options=list(ctx.args),
                  state=state_dir, **options)
    _summary(result, quiet=options["quiet"])
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
    for word, whys, text in (
            ("failed", tally.failed, "{}"),
            ("stopped", tally.stopped, "a person took it back ({}); nothing recorded"),
            ("skipped", tally.skipped, "the tracker refused the claim ({})"),
            ("retried", dict.fromkeys(sorted(tally.retried), ""),
             "a person cleared its failure during the run"),
            ("parked", tally.parked, "awaits approval of gate {}"),
            ("not settled", tally.unsettled, "{}")):
        for iid, why in whys.items():
            click.echo(f"jr2:   {word} {one_line(iid)}: {text.format(one_line(why))}", err=True)
    rs = work.ready_set
    if not quiet and rs is not None and status == "deadlocked" and rs.blocked:
        click.echo("jr2: blocked:", err=True)
        for entry in rs.blocked:
            click.echo(f"jr2:   {one_line(entry.item.id)}: "
                       f"{one_line(describe_reasons(entry.reasons))}", err=True)
