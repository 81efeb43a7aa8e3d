"""What K Redmine pools racing over one project cost, in requests by kind, against a real Redmine.

    python bench/redmine_race.py [--pools 4] [--issues 40] [--cap 2] [--json]

Starts a throwaway Redmine (`jr2_redmine.server`, the Debian packages), seeds a project with N
open issues (every 4th blocks the next, as the real-server race test does), and runs K
`jr2 work redmine:URL --cap C --poll-every 1s -- WORKER` pools at once through a counting proxy
on 127.0.0.1 until they drain. It prints the wall time, whether each issue ran exactly once and
ended closed, and the pools' requests per worked issue by kind: `GET list` (`/issues.json`),
`GET issue` (one issue, `+journals` with its notes), `GET other` (statuses, priorities, the
key's own user, the project), `PUT claim note` (a claim posted), `PUT issue` (fields: marks,
status, notes), `PUT journal` (a note edited or blanked), `POST`; and how many answers were 304s.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "plugins" / "jr2-redmine" / "tests")]

from redmine_helpers import new_project  # noqa: E402

from jr2_redmine import server  # noqa: E402

HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


def kind_of(method: str, path: str, body: bytes) -> str:
    """A request as the rows of the report name it (module notes)."""
    parts = urlsplit(path)
    where, query = parts.path, parts.query
    if method == "GET":
        if where == "/issues.json":
            return "GET list"
        if where.startswith("/issues/"):
            return "GET issue+journals" if "journals" in query else "GET issue"
        return "GET other"
    if method == "PUT" and where.startswith("/journals/"):
        return "PUT journal"
    if method == "PUT" and where.startswith("/issues/"):
        return "PUT claim note" if b"<!-- jr2:claim " in body else "PUT issue"
    return method


class Counter:
    """Requests by kind and the 304s, counted by the proxy's threads."""

    def __init__(self) -> None:
        self.kinds: collections.Counter[str] = collections.Counter()
        self.not_modified = 0
        self.lock = threading.Lock()

    def add(self, kind: str, status: int) -> None:
        with self.lock:
            self.kinds[kind] += 1
            self.not_modified += status == 304


def proxy(upstream: str, counter: Counter) -> ThreadingHTTPServer:
    """A forwarding HTTP proxy to `upstream` that counts every request (started, serving)."""
    up = urlsplit(upstream)
    local = threading.local()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def forward(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            for attempt in range(2):
                conn = getattr(local, "conn", None)
                if conn is None:
                    conn = local.conn = http.client.HTTPConnection(up.hostname, up.port,
                                                                   timeout=120)
                try:
                    conn.request(self.command, self.path, body or None, headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    break
                except (http.client.HTTPException, OSError):
                    conn.close()
                    local.conn = None
                    if attempt:
                        raise
            counter.add(kind_of(self.command, self.path, body), resp.status)
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP and k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = forward

    srv = ThreadingHTTPServer(("127.0.0.1", server.free_port()), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def race(inst: server.Instance, pools: int, issues: int, cap: int) -> dict[str, Any]:
    """Seed a project, run the pools through the proxy, check and count (module notes)."""
    p = new_project(inst)
    subjects = [f"race {i}" for i in range(issues)]
    nums = p.seed(subjects, [(i, i + 1) for i in range(0, issues - 1, 4)])
    counter = Counter()
    srv = proxy(inst.url, counter)
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="jr2-redmine-race-") as tmp:
        log = Path(tmp) / "ran.txt"
        worker = (f"import os; fd = os.open({str(log)!r}, os.O_WRONLY | os.O_APPEND | "
                  "os.O_CREAT); os.write(fd, (os.environ['JR2_ITEM_ID'] + '\\n').encode())")
        env = {**os.environ, "REDMINE_API_KEY": inst.bot_key}
        began = time.perf_counter()
        procs = [subprocess.Popen(
            [sys.executable, "-m", "jr2_core", "work", f"redmine:{url}", "--project",
             p.identifier, "--cap", str(cap), "--poll-every", "1s", "--state",
             str(Path(tmp) / f"st{k}"), "--", sys.executable, "-c", worker],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            for k in range(pools)]
        errs = [proc.communicate(timeout=900)[1] for proc in procs]
        wall = time.perf_counter() - began
        ran = log.read_text().split() if log.exists() else []
    srv.shutdown()
    total = sum(counter.kinds.values())
    return {
        "pools": pools, "issues": issues, "cap": cap, "wall_s": round(wall, 1),
        "exit_codes": [proc.returncode for proc in procs],
        "errors": [e.strip().splitlines()[-1] for e in errs if e.strip()][:4],
        "each_ran_once": sorted(ran) == sorted(f"#{n}" for n in nums),
        "all_closed": all(p.get(n, "")["status"]["is_closed"] for n in nums),
        "requests": total, "per_issue": round(total / issues, 2),
        "not_modified": counter.not_modified,
        "by_kind_per_issue": {k: round(v / issues, 2) for k, v in sorted(counter.kinds.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pools", type=int, default=4)
    ap.add_argument("--issues", type=int, default=40)
    ap.add_argument("--cap", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    why = server.missing()
    if why is not None:
        print(json.dumps({"skipped": why}) if args.json else f"skipped: {why}")
        return
    with tempfile.TemporaryDirectory(prefix="jr2-redmine-bench-") as tmp:
        inst, proc = server.launch(Path(tmp) / "redmine")
        try:
            result = race(inst, args.pools, args.issues, args.cap)
        finally:
            server.stop(proc)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:18} {value}")


if __name__ == "__main__":
    main()
