"""`jr2 dashboard SOURCE --issue N` and the dashboard of `jr2 work --dashboard N`.

Both open the issue through the tracker (`HasDashboard.dashboard`), check it once
(`Board.check`), refuse one of the backlog's own items, and hide it from the backlog from then
on (`hide_items`); the shortest write interval is the board's target's. `jr2 dashboard` reads
the backlog read-only and writes only the dashboard (and what a tick asks): one update, or one
every `--every` until Ctrl-C. `jr2 work --dashboard N` shows the Ready-set the pool read last,
written at most once per `--dashboard-interval` (a fresh read only after a tick acted), with a
last update when the run ends; a webhook delivery about the dashboard issue never wakes the pool
(`receiver`: a person's edit makes the dashboard look at once, jr2's own is ignored).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from jr2_core.cli import EXIT_INTERRUPTED, resolve_state, state_option
from jr2_core.errors import Jr2Error, UsageError
from jr2_core.timeouts import wait_for
from jr2_sources.capabilities.approvals import KeepsApprovals
from jr2_sources.capabilities.approvals.desk import TrackerApprovals
from jr2_sources.cli.source import SourceCommand, open_source, source_or_help
from jr2_sources.kit.durations import parse_duration
from jr2_sources.readyset import compute_ready_set
from jr2_sources.registry import layer_options
from jr2_sources.tracker import ReadOnly

from .mixin import HasDashboard
from .scope import hide_items
from .sync import Dashboard
from .target import check_interval, target_of

log = logging.getLogger("jr2.dashboard")

__all__ = ["DashboardLoop", "dashboard_cmd", "interval_seconds", "open_dashboard"]


def interval_seconds(option: str, value: float | str) -> float:
    """A write interval in seconds (the target's least is checked by `open_dashboard`)."""
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def open_dashboard(tracker: Any, issue: str | int, first: Any, *, interval: float,
                   gates: Any = None, answering: Callable[[], Any] | None = None,
                   option: str = "--write-interval") -> Any:
    """The `Dashboard` of issue `issue` of `tracker`, refused in one line when it is
    one of the backlog `first`'s items or `interval` is below its target's least. A tracker
    that keeps approval gates gets approve boxes, answered through `tracker` or the tracker
    `answering` opens (when `tracker` is read-only)."""
    if not isinstance(tracker, HasDashboard):
        raise UsageError(f"{tracker.name}: a dashboard issue is not supported on this tracker "
                         "(GitHub, GitLab, Jira, local; see docs/guides/dashboard.md)")
    board = tracker.dashboard(issue)
    check_interval(option, interval, target_of(board))
    board.check()
    if any(it.id == board.item_id and it.in_scope for it in first.items):
        raise UsageError(f"{board.name} is one of the backlog's own items (it matches the "
                         "source's filter, so it would be offered as work); use an issue "
                         "outside the filter, or a closed one")
    hide_items(tracker, [board.item_id])
    if gates is None and isinstance(tracker, KeepsApprovals):
        gates = TrackerApprovals(tracker, board.name, answering=answering)
    return Dashboard(board, interval=interval, gates=gates)


def _said(board: str, step: Any) -> str:
    acted = "".join(f"; {a}" for a in step.acted)
    why = step.why if step.why != "waiting" else f"waiting {step.wait:.0f}s to write"
    return f"jr2: dashboard {board}: {why}{acted}"


# -- jr2 dashboard ------------------------------------------------------------------------------


@click.command(
    "dashboard", cls=SourceCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("source", required=False)
@click.option("--issue", metavar="N|PATH", default=None,
              help="The issue whose body shows the dashboard (required); on Jira its key, on "
                   "local: a markdown file.")
@click.option("--every", metavar="DURATION", default=None,
              help="Keep it up to date: look every DURATION until Ctrl-C (default: one update, "
                   "then exit).")
@click.option("--write-interval", metavar="DURATION", default="1m", show_default=True,
              help="Least time between two writes of the issue (at least 10s on GitHub, "
                   "GitLab and Jira, 1s on local); nothing is written while nothing changed.")
@state_option
@click.pass_context
def dashboard_cmd(ctx: click.Context, source: str | None, issue: str | None, every: str | None,
                  write_interval: str, state_dir: Path | None) -> None:
    """Keep one issue's body up to date with SOURCE's Ready-set: failed items (tick a box to
    retry one), gates awaiting approval (tick to approve), items in progress with holder and
    lease, waiting for a retry, ready, blocked and why, and the graph. jr2 writes only between
    its markers and only when that part changed; the text around it is kept.

    \b
        jr2 dashboard github:acme/app --label agent --issue 7 --every 1m
        jr2 dashboard local:backlog.toml --issue dashboard.md

    Read-only on SOURCE's items, except for what a person's tick asks. GitHub, GitLab (plugin),
    Jira (--issue takes a key; no boxes on Data Center), local (a markdown file, written
    atomically).
    Exit codes: 0 done, 2 bad usage (or an issue that cannot be the dashboard), 4 error, 130
    interrupted.
    """
    source = source_or_help(ctx, source)
    if source is None:
        return
    if issue is None:
        raise UsageError("--issue N: name the issue that shows the dashboard")
    interval = interval_seconds("--write-interval", write_interval)
    period = None if every is None else interval_seconds("--every", every)
    tracker, config = open_source(source, list(ctx.args), resolve_state(state_dir),
                                  read_only=True)
    children_block = layer_options(config).children_block
    reader = ReadOnly(tracker)

    def read() -> Any:
        return compute_ready_set(reader.snapshot(), now=datetime.now(UTC),
                                 children_block=children_block)

    def answering() -> Any:  # a tick approving a gate writes its answer (gates/desk.py)
        return open_source(source, list(ctx.args), resolve_state(state_dir), read_only=False)[0]

    dash = None
    try:
        dash = open_dashboard(tracker, issue, reader.snapshot(), interval=interval,
                              answering=answering)
        while True:
            try:
                step = dash.update(read)
                click.echo(_said(dash.board.name, step), err=True)
            except Jr2Error as exc:
                if period is None:
                    raise
                click.echo(f"jr2: dashboard {dash.board.name}: {exc}; trying again", err=True)
            if period is None:
                return
            time.sleep(max(period, 1.0))
    except KeyboardInterrupt:
        click.echo("jr2: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        for part in (dash.gates, dash.board) if dash is not None else ():
            close = getattr(part, "close", None)
            if close is not None:
                close()
        tracker.close()


# -- jr2 work --dashboard -----------------------------------------------------------------------


class DashboardLoop:
    """The dashboard of a running pool (`run`, `final`, `receiver`)."""

    def __init__(self, dash: Any, last: Callable[[], Any], fresh: Callable[[], Any], *,
                 check_every: float = 5.0, quiet: bool = True) -> None:
        self.dash = dash
        self.last = last
        self.fresh = fresh
        self.check_every = check_every
        self.quiet = quiet
        self._poked = asyncio.Event()

    async def _once(self, current: Callable[[], Any], fresh: Callable[[], Any] | None = None
                    ) -> None:
        try:
            step = await asyncio.to_thread(self.dash.update, current, fresh or self.fresh)
        except Jr2Error as exc:  # a failed update never ends the run: tried again later
            log.warning("dashboard %s: %s; trying again later", self.dash.board.name, exc)
            return
        said = step.wrote or step.acted or step.why.startswith(("broken", "busy", "full"))
        if said and not self.quiet:
            click.echo(_said(self.dash.board.name, step), err=True)

    async def run(self) -> None:
        """Until cancelled, every `check_every` seconds (at once after a person's edit), update
        from the pool's last Ready-set."""
        while True:
            with contextlib.suppress(TimeoutError):
                await wait_for(self._poked.wait(), self.check_every)
            self._poked.clear()
            if self.last() is not None:
                await self._once(self.last)

    async def final(self, *, wait: bool = True) -> None:
        """The last update after the run, from a fresh read, once the interval allows (without
        `wait`, an interrupted run: only if it allows now)."""
        if not wait and self.dash.wait_left() > 0:
            log.warning("dashboard %s: the final update was skipped (interrupted)",
                        self.dash.board.name)
            return
        try:
            await asyncio.sleep(self.dash.wait_left())
            rs = await asyncio.to_thread(self.fresh)
            await self._once(lambda: rs, lambda: rs)
        except (asyncio.CancelledError, KeyboardInterrupt):
            log.warning("dashboard %s: the final update was skipped", self.dash.board.name)

    def receiver(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap a tracker's webhook so a delivery about the dashboard issue wakes no pool (see
        the module notes)."""
        board = self.dash.board

        def receive(headers: Any, body: bytes, secret: str | None) -> Any:
            verdict = hook(headers, body, secret)
            if verdict.status >= 300:
                return verdict
            about = board.about(headers, body)
            if about is None:
                return verdict
            if about == "person":
                self._poked.set()
            return replace(verdict, wake=False, reason=f"the dashboard issue ({about} edit)")
        return receive
