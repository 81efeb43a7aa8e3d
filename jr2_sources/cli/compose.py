"""`jr2 work`'s composition as a Python function: `work()` / `work_async()`.

`jr2 work` is this function plus a command line: everything between parsing and printing (the
source and its Tracker, the WorkSource over it, the worker runner, the workspace, the Pool, the
run host with its webhook and signal handling) is built here, once, so a Python caller of
`work(...)` gets exactly what `jr2 work` does. The checks that need no claim (the COMMAND
exists, the durations parse, `--listen`/`--tls-*`/the webhook secret, the capabilities the
options need, one snapshot of the source) all run before the run starts, so bad input claims
nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex
from typing import Any, TypedDict, TypeVar, Unpack

from jr2_core import define_event, pool, start
from jr2_core.cli import resolve_state
from jr2_core.commands import host_and_wait, progress_printer
from jr2_core.commands import observers as with_plugins
from jr2_core.errors import UsageError
from jr2_core.runs import RunResult
from jr2_sources.capabilities.approvals.live import attach_approvals
from jr2_sources.capabilities.approvals.policy import check_name
from jr2_sources.capabilities.attempts import EX_TEMPFAIL, AttemptPolicy
from jr2_sources.capabilities.dashboard.command import (
    DashboardLoop,
    interval_seconds,
    open_dashboard,
)
from jr2_sources.capabilities.deltas.reader import first_reading
from jr2_sources.capabilities.feedback import policy as feedback_policy
from jr2_sources.capabilities.limits import KeepsLimits, LocksByComment
from jr2_sources.capabilities.limits.comment_locks import LockedClaims
from jr2_sources.capabilities.limits.policy import Limits
from jr2_sources.capabilities.webhooks import TakesWebhooks, attach_webhook
from jr2_sources.hooks import load_registry
from jr2_sources.kit.durations import parse_duration
from jr2_sources.kit.fence import Fence
from jr2_sources.kit.markers import KEY_VAR
from jr2_sources.kit.redact import Redactor, secret_values
from jr2_sources.kit.retry import interrupt_retries
from jr2_sources.kit.sizes import parse_size
from jr2_sources.projectconfig import token_variables
from jr2_sources.readyset import ReadySet
from jr2_sources.registry import layer_options
from jr2_sources.tracker import Tracker
from jr2_sources.worksource import Tally, WorkSource, default_holder

from .heap import IdleTrim
from .liveview import LiveView
from .runner import command_worker, kill_all, resolve_command
from .source import open_source
from .workerenv import withheld, worker_env
from .workspace import Workspace, Worktrees

_T = TypeVar("_T")


@dataclass(frozen=True)
class WorkResult:
    """How a `work()` run ended: the run's `RunResult` (`state`, `output`, `exit_code`), what
    happened per item (`tally`: done ids, failed/stopped/skipped/unsettled items with why,
    retried ids) and the Ready-set last read (`ready_set`, None if none was read), from which
    `jr2 work` prints why the rest is blocked."""

    run: RunResult
    tally: Tally
    ready_set: ReadySet | None

    @property
    def exit_code(self) -> int:
        """`jr2 work`'s exit code: 0 drained, 1 failed, 3 deadlocked, 4 error, 130
        interrupted."""
        return self.run.exit_code


class WorkOptions(TypedDict, total=False):
    """The keywords of `work()` and `work_async()`: `jr2 work`'s options of the same names
    (defaults as there; `quiet` True). `options` are the kind's options as command-line words
    (`["--label", "agent"]`); `worktree` is `--worktree BASE` (`"HEAD"` for a bare
    `--worktree`); durations take seconds or text like `"10m"`, `log_limit` bytes or text like
    `"10MiB"`; `dashboard` is `--dashboard N`."""

    options: Sequence[str]
    cap: int
    lease: float | str
    timeout: float | str | None
    wait: bool
    port: int
    listen: str | None
    tls_cert: Path | None
    tls_key: Path | None
    webhook_secret_env: str | None
    workdir: Path | None
    worktree: str | None
    pass_env: Sequence[str]
    state: Path | None
    quiet: bool
    max_attempts: int
    transient_exit: Sequence[int]
    retry_backoff: float | str | None
    retry_backoff_max: float | str | None
    global_cap: int | None
    exclusive_by: Sequence[str]
    control_issue: str | None
    gates: Sequence[str]
    dashboard: str | int | None
    dashboard_interval: float | str
    log_limit: int | str
    on_feedback: str


def work(source: str, command: Sequence[str], **options: Unpack[WorkOptions]) -> WorkResult:
    """Run `command` once for each ready item of `source` (`kind:target` or a `jr2.toml`
    source name), as `jr2 work` does; return how the run ended (blocks until it has;
    Ctrl-C/SIGTERM end it cleanly as in `jr2 work`).

    The keywords are `WorkOptions`. `quiet=False` prints progress on stderr like `jr2 work`;
    the summary lines stay the command line's. Bad input raises `UsageError` or `ConfigError`
    before anything is claimed. Use `work_async` inside a running event loop.
    """
    # the checks and the first snapshot run before the event loop, so a Ctrl-C during the
    # tracker's retries interrupts them at once (asyncio.run would defer it)
    return asyncio.run(_run(_prepare(source, command, options)))


async def work_async(source: str, command: Sequence[str],
                     **options: Unpack[WorkOptions]) -> WorkResult:
    """`work()` for a caller already in an event loop (same arguments, same result; the checks
    and the first snapshot block the loop briefly, as they run before anything starts)."""
    return await _run(_prepare(source, command, options))


@dataclass(frozen=True)
class _Plan:
    """A checked `work()` call: the WorkSource over the source's Tracker, its fence, the
    worker, the Pool's cap and ending, where the host listens, the state directory, the run
    id, and the dashboard, if any."""

    ws: WorkSource
    fence: Fence
    worker: Any
    cap: int
    wait: bool
    serve: _Serve
    state: Path
    run_id: str
    quiet: bool
    poll: float | None
    dashboard: Any


def _prepare(source: str, command: Sequence[str], o: WorkOptions) -> _Plan:
    """Check the arguments and open the source (synchronously; bad input raises here, before
    anything is claimed)."""
    unknown = set(o) - WorkOptions.__annotations__.keys()
    if unknown:
        raise TypeError(f"work() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    argv = resolve_command(list(command))
    lease = _seconds("--lease", o.get("lease", "10m"))
    timeout = o.get("timeout")
    timeout_s = _seconds("--timeout", timeout) if timeout is not None else None
    log_bytes = _parsed("--log-limit", parse_size, o.get("log_limit", "10MiB"))
    max_attempts = o.get("max_attempts", 1)
    policy = _attempt_policy(max_attempts, o.get("transient_exit", ()), o.get("retry_backoff"),
                             o.get("retry_backoff_max"))
    limits = Limits.parse(o.get("global_cap"), o.get("exclusive_by", ()))
    secret_env = o.get("webhook_secret_env")
    serve = _listen_options(o.get("listen"), o.get("port", 0), secret_env, o.get("tls_cert"),
                            o.get("tls_key"))
    state = resolve_state(o.get("state"), create=True)
    gates = _parsed("--gate", lambda names: frozenset(map(check_name, names)),
                    o.get("gates", ()))
    wait, quiet = o.get("wait", False), o.get("quiet", True)
    tracker, config = open_source(source, list(o.get("options", ())), state, read_only=False)
    locks = _limited(tracker, limits, o.get("control_issue"))
    feedback_policy.apply(tracker, o.get("on_feedback", "nothing"), max_attempts, wait=wait)
    if serve.secret is not None and not isinstance(tracker, TakesWebhooks):
        raise UsageError(f"{tracker.name}: this source takes no webhooks "
                         "(drop --webhook-secret-env)")
    run_id = f"r-{token_hex(4)}"
    opts = layer_options(config)
    fence = Fence()  # one command supervisor for the pool, started with its first command
    wake = define_event(name="wake", description="The tracker changed: look for work again.")
    # refuses what the tracker cannot do (--max-attempts, the limits, --gate) in one line
    ws = WorkSource(tracker, holder=default_holder(run_id), lease=lease,
                    children_block=opts.children_block, poll_every=opts.poll_every,
                    idle_poll=opts.poll_every or 5.0, wake=wake, attempts=policy,
                    resync_every=opts.resync_every, limits=limits, gates=gates, locks=locks,
                    fence=fence)
    workdir, worktree = o.get("workdir") or Path.cwd(), o.get("worktree")
    workspace = (Worktrees.open(workdir, worktree, state, run_id) if worktree is not None
                 else Workspace(workdir.resolve()))
    pass_env = tuple(o.get("pass_env", ()))
    if KEY_VAR in pass_env:
        raise UsageError(f"--pass-env {KEY_VAR}: the marker key is never given to commands "
                         "(a command holding it could sign claims and answers)")
    held = [n for n in (secret_env, *token_variables(source, load_registry())) if n]
    # bad input (a broken backlog, no access) fails here; the pool starts from this reading
    first = first_reading(tracker)
    ws.prime(first)
    dash = None
    if (issue := o.get("dashboard")) is not None:
        dash = open_dashboard(tracker, issue, first,
                              interval=interval_seconds("--dashboard-interval",
                                                        o.get("dashboard_interval", "1m")),
                              option="--dashboard-interval")
    worker = ws.guard(command_worker(argv, log_dir=state / "logs" / run_id, run_id=run_id,
                                     redact=Redactor(secret_values()), timeout=timeout_s,
                                     workspace=workspace, base_env=worker_env(pass_env, held),
                                     log_limit=log_bytes, fence=fence))
    # said once the run is sure to start, so a bad argument stays a one-line error
    if not quiet and (out := withheld(pass_env, held)):
        print(f"jr2: left out of the command's environment (credentials): {', '.join(out)} "
              "(--pass-env NAME passes one)", file=sys.stderr)
    return _Plan(ws, fence, worker, o.get("cap", 1), wait, serve, state, run_id, quiet,
                 opts.poll_every, dash)


def _limited(tracker: Tracker, limits: Any, control_issue: str | None) -> Any:
    """The `LockedClaims` that keep `--global-cap`/`--exclusive-by`
    (`jr2_sources.capabilities.limits`) around a comment tracker (`LocksByComment`) given
    `--control-issue`; None when the tracker's own claims keep them (`KeepsLimits`, `local:`) or
    none is asked; a one-line usage error otherwise."""
    if control_issue is not None and not limits.active:
        raise UsageError("--control-issue holds the claims of --global-cap and --exclusive-by: "
                         "give one of them too, or drop it")
    if not limits.active:
        return None
    limits.prepare(tracker)
    if isinstance(tracker, KeepsLimits):
        if control_issue is not None:
            raise UsageError(f"{tracker.name}: this source keeps the limits in its own claims: "
                             "drop --control-issue")
        return None
    if not isinstance(tracker, LocksByComment):
        raise UsageError(f"{tracker.name}: this source cannot share a global cap or conflict "
                         "groups between pools yet (drop --global-cap and --exclusive-by)")
    if control_issue is None:
        raise UsageError(f"{tracker.name}: --global-cap and --exclusive-by need --control-issue "
                         "ID here: an issue whose comments hold the group and slot claims (every "
                         "pool of the tracker names the same one)")
    locked = LockedClaims(tracker, control_issue)
    locked.check()
    return locked


def _attempt_policy(max_attempts: int, transient: Sequence[int], backoff: float | str | None,
                    backoff_max: float | str | None) -> Any:
    """`--max-attempts`, `--transient-exit` and `--retry-backoff[-max]` (None: 30s, 1h) as an
    AttemptPolicy; the last three only with `--max-attempts` above 1, where they do something."""
    given = [name for name, value in (("--transient-exit", transient),
                                      ("--retry-backoff", backoff),
                                      ("--retry-backoff-max", backoff_max))
             if value is not None and value != ()]
    if given and max_attempts < 2:
        raise UsageError(f"{given[0]} retries an item: it needs --max-attempts above 1 "
                         "(with one attempt every failure is final)")
    base = _seconds("--retry-backoff", "30s" if backoff is None else backoff)
    cap = _seconds("--retry-backoff-max", "1h" if backoff_max is None else backoff_max)
    return AttemptPolicy(max_attempts=max_attempts,
                         transient=frozenset(transient or (EX_TEMPFAIL,)),
                         backoff=base, backoff_max=max(cap, base))


def _parsed(option: str, parse: Callable[[Any], _T], value: Any) -> _T:
    """`parse(value)`; a `ValueError` is a usage error naming the option."""
    try:
        return parse(value)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def _seconds(option: str, value: float | str) -> float:
    """A duration option in seconds (a number, or text like `"10m"`)."""
    return _parsed(option, parse_duration, value)


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


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
    """A server TLS context from PEM files; a bad file is a usage error, and a private key
    every user of the machine can read is warned about (as a mounted secret may well be)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise UsageError(f"--tls-cert {cert}: cannot load the certificate and key: {why}"
                         ) from None
    held = key or cert
    mode = stat.S_IMODE(held.stat().st_mode)
    if mode & stat.S_IROTH:
        logging.getLogger("jr2.work").warning(
            "jr2: warning: %s %s: every user of this machine can read this private key "
            "(mode %04o); chmod o-r it", "--tls-key" if key else "--tls-cert", held, mode)
    return ctx


async def _run(plan: _Plan) -> WorkResult:
    """Run the Pool over the WorkSource, with the run host (and the tracker's webhook, if
    any), the progress observers and the dashboard."""
    ws, run_id, quiet, serve = plan.ws, plan.run_id, plan.quiet, plan.serve
    machine = pool(plan.worker, id="work", source=ws.as_source(), item_id=lambda w: w.id,
                   cap=plan.cap, on_drained="wait" if plan.wait else "final")
    observers: list[Any] = [ws.tally.observe, IdleTrim().observe]
    view = LiveView(ws) if not quiet and sys.stderr.isatty() else None
    if view is not None:
        observers.append(view.observe)
    elif not quiet:
        observers.append(progress_printer(False))

    handle: list[Any] = []

    def begin(after: Any) -> Any:
        handle.append(start(machine, None, state_dir=plan.state,
                            observers=with_plugins(*observers), run_id=run_id, after=after))
        return handle[0]

    board = None
    if plan.dashboard is not None:
        board = DashboardLoop(plan.dashboard, lambda: ws.last, ws.ready_set,
                              check_every=min(max(plan.poll or 5.0, 1.0), 5.0),
                              quiet=quiet or sys.stderr.isatty())  # a live view: no lines

    def setup_host(host: Any) -> None:
        from .doors import Doors  # aiohttp (jr2_core.host): only once a run is hosted

        host.doors = Doors()  # --listen faces the internet: connection caps (doors.py)
        host.backlog = host.doors.backlog
        if ws.gates:  # `jr2 send approvals approve|reject` (approvals.py)
            attach_approvals(handle[0], ws.tracker)
        hook = ws.tracker.webhook if isinstance(ws.tracker, TakesWebhooks) else None
        if hook is not None and board is not None:
            hook = board.receiver(hook)
        if hook is not None:

            def receiver(headers: Any, body: bytes, secret: str | None) -> Any:
                verdict = hook(headers, body, secret)
                if verdict.wake and verdict.status < 300:
                    ws.poke()  # people win: look at the held items at once
                return verdict

            attach_webhook(host, handle[0], receiver, serve.secret)

    keeper = None if board is None else asyncio.create_task(board.run(), name="dashboard")
    try:
        if view is not None:
            view.start()
        result = await host_and_wait(begin, port=serve.control[1], listen=serve.control[0],
                                     setup_host=setup_host, quiet=quiet or view is not None,
                                     on_signal=_on_signal, public=serve.public,
                                     ssl_context=serve.ssl_context)
        if keeper is not None and board is not None:
            keeper.cancel()
            await board.final(wait=result.state != "interrupted")
    finally:
        if keeper is not None:
            keeper.cancel()
        if view is not None:
            view.stop()
        plan.fence.close()
        ws.tracker.close()
    return WorkResult(run=result, tally=ws.tally, ready_set=ws.last)


def _on_signal(n: int) -> None:
    """Ctrl-C: the first abandons the tracker retries in flight (the releases that follow still
    retry); the second also kills every command's process group at once."""
    interrupt_retries()
    if n >= 2:
        kill_all()


