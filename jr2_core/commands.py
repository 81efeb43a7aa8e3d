"""The engine's own commands (`jr2 run`, `jr2 gates`, `jr2 send`, `jr2 plugins`) and what
running a Machine from a command line takes (`progress_printer`, `observers`, `host_and_wait`),
which `jr2 work` reuses. Loaded only when one of its commands runs or shows its help.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from .cli import EXIT_INTERRUPTED, parse_json_arg, resolve_state, state_option
from .client import call, pick_run
from .errors import UsageError
from .loader import load_machine
from .plugins import load, plugin_observer
from .runs import start
from .text import one_line

HEARTBEAT = 60.0
"""Seconds between the progress lines that name the items still running (off a terminal)."""


def progress_printer(verbose: bool, *, heartbeat: float = HEARTBEAT,
                     clock: Callable[[], float] | None = None) -> Callable[[Any], None]:
    """An observer that prints workers and gates as they come and go, to stderr (ids and
    reasons with their control characters blanked: they come from trackers and commands).
    While workers run, a line every `heartbeat` seconds names those running that long, so a
    log shows a long item is alive; the timer runs on the run's event loop (none without one)."""
    now = clock or time.monotonic
    running: dict[str, float] = {}
    timer: list[Any] = []  # the pending heartbeat (an asyncio TimerHandle), if any

    def say(line: str) -> None:  # click.echo(line, err=True); stderr looked up per line
        stream = sys.stderr
        stream.write(line + "\n")
        stream.flush()

    def beat() -> None:
        timer.clear()
        t = now()
        long = [(iid, t - t0) for iid, t0 in sorted(running.items(), key=lambda kv: kv[1])
                if t - t0 >= heartbeat]
        if long:
            say("jr2: running  " + ", ".join(f"{iid} ({_took(s)})" for iid, s in long))
        arm()

    def arm() -> None:
        if timer or not running:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # observed off an event loop: no heartbeat
            return
        timer.append(loop.call_later(heartbeat, beat))

    def show(ev: Any) -> None:
        iid = one_line(str(ev.item_id))
        if ev.kind == "worker_started":
            say(f"jr2: started  {iid}")
            running[iid] = now()
            arm()
        elif ev.kind in ("worker_finished", "worker_failed", "worker_cancelled"):
            running.pop(iid, None)
            if ev.kind == "worker_finished":
                say(f"jr2: finished {iid}")
            elif ev.kind == "worker_failed":
                say(f"jr2: failed   {iid}: {one_line(str(ev.detail))}")
            else:
                say(f"jr2: cancelled {iid}")
        elif ev.kind == "gate_opened" and (verbose or not (ev.detail or {}).get("persistent")):
            # a Pool's wake gate is open all run long: news only with --verbose
            say(f"jr2: gate open   {one_line(str(ev.gate_id))}")
        elif ev.kind == "gate_closed" and verbose:
            say(f"jr2: gate closed {one_line(str(ev.gate_id))}")
        elif ev.kind == "run_ended":
            running.clear()
            for handle in timer:
                handle.cancel()
            timer.clear()

    return show


def _took(seconds: float) -> str:
    """A running time in whole minutes and seconds: `2m 5s`, `1h 3m 0s`."""
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return (f"{h}h " if h else "") + f"{m}m {s}s"


def observers(*own: Callable[[Any], None]) -> list[Callable[[Any], None]]:
    """The CLI's own observers plus the plugins' `jr2_observe` hooks, if any."""
    extra = plugin_observer()
    return [*own, *([extra] if extra is not None else [])]


async def host_and_wait(
    start_run: Callable[[Any], Any], *, port: int, listen: str = "127.0.0.1",
    setup_host: Callable[[Any], None] | None = None, quiet: bool = False,
    on_signal: Callable[[int], None] | None = None,
    public: tuple[str, int] | None = None, ssl_context: Any = None,
) -> Any:
    """Start a run, serve its host, end cleanly on SIGINT/SIGTERM; return its RunResult.
    `start_run(after)` starts the run held until `after` is done, so the host listens first.

    The first signal interrupts the run (claims released); the second hurries the clean-up
    (`on_signal(n)`, n the signal's number in the row, kills what the workers started) and the
    third exits at once. `public` (with `ssl_context`) serves the webhooks on another address."""
    from .host import RunHost  # aiohttp: imported once a run is hosted, not by `import jr2_sources`

    loop = asyncio.get_running_loop()
    listening = loop.create_future()
    handle = start_run(listening)
    host = RunHost(handle, host=listen, port=port, public=public, ssl_context=ssl_context)
    if setup_host is not None:
        setup_host(host)
    signals = 0

    def signalled() -> None:
        nonlocal signals
        signals += 1
        if signals > 2:
            os._exit(EXIT_INTERRUPTED)
        if signals == 2:
            click.echo("jr2: interrupted again: killing the commands now and releasing their "
                       "claims (once more exits at once, leaving the claims to expire)", err=True)
        if on_signal is not None:
            on_signal(signals)
        if signals == 1:
            handle.interrupt()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, signalled)
    try:
        try:
            address = await host.start()
        except OSError as exc:  # the port is taken, or the address is not this machine's
            handle.interrupt()
            await handle.result()
            where = f"{public[0]}:{public[1]}" if public and host.address else f"{listen}:{port}"
            raise UsageError(f"cannot listen on {where}: {exc.strerror or exc}") from None
        listening.set_result(None)
        if not quiet:
            click.echo(f"jr2: run {handle.id} serving {address} (jr2 gates / jr2 send)", err=True)
            if host.public_address is not None:
                click.echo(f"jr2: webhooks at {host.public_address}/webhook", err=True)
        return await handle.result()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await host.stop()


@click.command("run")
@click.argument("target")
@click.option("--input", "input_", metavar="JSON|@FILE", help="The run input, as JSON.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the run host on 127.0.0.1 (0: any free port).")
@click.option("-v", "--verbose", is_flag=True, help="Print gates closing and defect tracebacks.")
@state_option
def run_cmd(target: str, input_: str | None, port: int, verbose: bool,
            state_dir: Path | None) -> None:
    """Run a workflow: TARGET is FILE.py:ATTR or module:attr naming a Machine (e.g. a Pool).

    Progress goes to stderr; the final output is printed as JSON on stdout. Exit code: 0 drained,
    1 failed, 3 deadlocked, 4 error, 130 interrupted.
    """
    machine = load_machine(target)
    data = parse_json_arg(input_, "--input")
    state = resolve_state(state_dir, create=True)

    def begin(after: Any) -> Any:
        return start(machine, data, state_dir=state, observers=observers(progress_printer(verbose)),
                     after=after)

    result = asyncio.run(host_and_wait(begin, port=port))
    click.echo(json.dumps(result.to_json(), indent=2, default=str))
    if result.state == "error":
        click.echo(f"error: {result.error}", err=True)
        if verbose and result.traceback:
            click.echo(result.traceback, err=True)
    sys.exit(result.exit_code)


# -- jr2 gates / jr2 send ---------------------------------------------------------------------


@click.command("gates")
@click.option("--run", "run_id", help="The run to ask (needed when several are live).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@state_option
def gates_cmd(run_id: str | None, as_json: bool, state_dir: Path | None) -> None:
    """List the open gates of a live run: what needs you now."""
    rf = pick_run(resolve_state(state_dir), run_id)
    gates = call(rf, "GET", "/v1/gates")
    if as_json:
        click.echo(json.dumps({"run_id": rf.run_id, "gates": gates}, indent=2))
        return
    if not gates:
        click.echo(f"run {rf.run_id}: no open gates")
        return
    width = max(len(g["id"]) for g in gates)
    for g in gates:
        meta = " ".join(f"{k}={v}" for k, v in g.get("meta", {}).items())
        click.echo(f"{g['id']:<{width}}  accepts {', '.join(g['accepts'])}  {meta}".rstrip())


@click.command("send")
@click.argument("gate")
@click.argument("event")
@click.option("--input", "input_", metavar="JSON|@FILE", help="The event's data, as JSON.")
@click.option("--run", "run_id", help="The run to send to (needed when several are live).")
@state_option
def send_cmd(gate: str, event: str, input_: str | None, run_id: str | None,
             state_dir: Path | None) -> None:
    """Send EVENT to the gate GATE of a live run (ids are matched exactly)."""
    data = parse_json_arg(input_, "--input")
    rf = pick_run(resolve_state(state_dir), run_id)
    call(rf, "POST", "/v1/send", {"gate": gate, "event": event, "data": data})
    click.echo(f"sent {event} to {gate}", err=True)


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins_cmd(as_json: bool) -> None:
    """List the plugins: name, distribution, version, hooks, source kinds, and any error."""
    host = load()
    infos = host.plugins
    for info in infos:
        for kind in info.kinds:
            try:
                info.capabilities[kind] = host.pm.hook.jr2_kind_capabilities(kind=kind)
            except Exception:  # a kind that cannot say is listed as not known
                info.capabilities[kind] = None
    if as_json:
        click.echo(json.dumps([asdict(i) for i in infos], indent=2))
        return
    for i in infos:
        where = f"{i.distribution or '?'} {i.version or ''}".strip()
        tag = " (built-in)" if i.builtin else ""
        click.echo(f"{i.name}{tag}  [{where}]")
        if i.kinds:
            click.echo(f"  source kinds: {', '.join(i.kinds)}")
        for kind, caps in i.capabilities.items():
            words = "not known" if caps is None else ", ".join(caps) or "none"
            click.echo(f"  capabilities of {kind}: {words}")
        if i.hooks:
            click.echo(f"  hooks: {', '.join(i.hooks)}")
        if i.error:
            click.echo(f"  BROKEN: {i.error}")
