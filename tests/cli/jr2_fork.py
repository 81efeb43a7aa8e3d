"""A `jr2` for the docs examples that starts as a fork of a process that imported jr2 already.

Contract: `serve(sock)` imports jr2, its commands and its own plugins once, then for each
connection forks a process that becomes `python -m jr2_core ARGS` with the caller's arguments,
working directory, environment and standard streams (passed as file descriptors), and reports
its pid, then its exit status. `client(sock, args)` is the `jr2` a page's shell runs: it forwards
the signals it gets to that process and ends as it ended (its exit code, or killed by the same
signal). Every command is a fresh fork of the same imported state, so nothing passes from one
command to the next; only the import of jr2 (most of a short command's start) is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import select
import signal
import socket
import struct
import sys
from typing import Any

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)


def _preload() -> None:
    """Import what a command imports before it runs: the CLI, its lazy commands, jr2's plugins."""
    from importlib import import_module
    from importlib.metadata import entry_points

    from jr2_core.cli import main

    for target, _ in getattr(main, "lazy", {}).values():
        import_module(target.partition(":")[0])
    for ep in entry_points(group="jr2"):
        if ep.module.split(".")[0] in ("jr2_core", "jr2_sources"):
            import_module(ep.module)


def _run(conn: socket.socket, req: dict[str, Any], fds: list[int]) -> None:
    """In the forked process: become `jr2 ARGS` as the request says; never returns."""
    code = 1
    try:
        for sig in (*FORWARDED, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN if req["sigint_ignored"]
                      else signal.default_int_handler)  # as Python starts
        for n, fd in enumerate(fds):
            os.dup2(fd, n)
            os.close(fd)
        conn.sendall(struct.pack("!i", os.getpid()))
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own streams
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.argv = ["jr2", *req["args"]]
        try:
            runpy.run_module("jr2_core", run_name="__main__", alter_sys=False)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
        except KeyboardInterrupt:
            code = 130
        except BaseException:  # as an uncaught exception ends a process: traceback, 1
            import traceback

            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
                stream.flush()
        os._exit(code)


def _supervise(conn: socket.socket, pid: int) -> int:
    """Wait for the command `pid`, send its status to the client; if the client dies first
    (kill -9: it cannot pass that on), kill the command as that signal would have."""
    pidfd = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            break
        if not conn.recv(1, socket.MSG_PEEK):  # the client is gone
            os.kill(pid, signal.SIGKILL)
            break
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        conn.sendall(struct.pack("!i", status))
    return 0


def serve(path: str) -> None:
    """Listen on `path`; one supervising fork per connection, which forks the command and sends
    its status back."""
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped by the kernel
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        if os.fork() == 0:
            srv.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            pid = os.fork()
            if pid == 0:
                _run(conn, json.loads(msg), fds)
            for fd in fds:
                os.close(fd)
            os._exit(_supervise(conn, pid))
        conn.close()


def client(path: str, args: list[str]) -> None:
    """`jr2 ARGS` through the server at `path`; ends as the command ended."""
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(path)
    req = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ),
           "sigint_ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN}
    socket.send_fds(conn, [json.dumps(req).encode()], [0, 1, 2])
    pid = struct.unpack("!i", _read(conn, 4))[0]
    for sig in FORWARDED:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, lambda n, _f: os.kill(pid, n))
    status = struct.unpack("!i", _read(conn, 4))[0]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.waitstatus_to_exitcode(status))


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        try:
            chunk = conn.recv(n - len(data))
        except InterruptedError:
            continue
        if not chunk:
            raise SystemExit(1)
        data += chunk
    return data


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        client(sys.argv[2], sys.argv[3:])
