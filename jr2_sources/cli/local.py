"""`jr2 local retry|approve|reject`: what a person does to the local Work Source's items."""

from __future__ import annotations

import getpass
from pathlib import Path

import click

from jr2_core.cli import fail, resolve_state, state_option
from jr2_sources.capabilities.approvals.policy import answer

from .source import open_source


@click.group("local")
def local_group() -> None:
    """Commands of the local Work Source."""


@local_group.command("retry")
@click.argument("backlog", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("item_ids", nargs=-1, required=True)
@state_option
def retry_cmd(backlog: Path, item_ids: tuple[str, ...], state_dir: Path | None) -> None:
    """Clear the failure of ITEM_IDS in BACKLOG so that they are offered again."""
    tracker, _ = open_source(f"local:{backlog}", [], resolve_state(state_dir, create=True),
                         read_only=False)
    try:
        for iid in item_ids:
            cleared = tracker.retry(iid)
            click.echo(f"{iid}: {'failure cleared' if cleared else 'had no failure'}")
    finally:
        tracker.close()


def _answer(backlog: Path, item_id: str, gate: str, state_dir: Path | None, *,
            approve: bool, reason: str | None) -> None:
    """Answer the gate GATE of ITEM in BACKLOG (`jr2 local approve|reject`)."""
    tracker, _ = open_source(f"local:{backlog}", [], resolve_state(state_dir, create=True),
                             read_only=False)
    try:
        try:
            who = getpass.getuser()
        except (KeyError, OSError):
            who = None
        try:
            ok = answer(tracker, item_id, gate, approve=approve, reason=reason, by=who)
        except ValueError as exc:
            fail(str(exc), 2)
    finally:
        tracker.close()
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
