"""A reference HTTP backlog tracker, in memory, for tests and for trying the plugin.

    python -m jr2_httpbacklog.server backlog.json --port 8765

One lock makes every claim a check-and-set. `writes` counts the mutating requests it served.
Each request acts as an account: `accounts` maps a bearer token to it (no token, or one it does
not know: `anonymous`); a claim and a failure record who wrote them (`by`), `GET /me` names the
caller's own, and a claim that passes `trust` (accounts) treats a live claim by anyone else as
free: it holds nothing.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Tracker:
    """The tracker's state: items by id, with claims and outcomes."""

    def __init__(self, items: list[dict[str, Any]], clock: Any = time.time,
                 accounts: dict[str, str] | None = None) -> None:
        self.items = {i["id"]: {"needs": [], "labels": [], "priority": None, "status": "open",
                                "parent": None, "claim": None, "failed": None,
                                "failed_by": None, **i}
                      for i in items}
        self.accounts = dict(accounts or {})
        self.lock = threading.Lock()
        self.clock = clock
        self.writes = 0

    def handle(self, method: str, path: str, body: dict[str, Any],
               token: str | None = None) -> tuple[int, Any]:
        who = self.accounts.get(token or "", "anonymous")
        if method == "GET" and path == "/me":
            return 200, {"account": who}
        if method == "GET" and path == "/items":
            with self.lock:
                return 200, {"items": list(self.items.values()), "now": self.clock()}
        parts = path.strip("/").split("/")
        if method != "POST" or len(parts) != 3 or parts[0] != "items":
            return 404, {"error": "no such route"}
        iid, verb = urllib.parse.unquote(parts[1]), parts[2]
        with self.lock:
            self.writes += 1
            item = self.items.get(iid)
            if item is None:
                return 404, {"error": f"no item {iid}"}
            now, claim, holder = self.clock(), item["claim"], body.get("holder")
            trust = ({str(a).lower() for a in body["trust"]}
                     if isinstance(body.get("trust"), list) else None)
            if verb == "claim":
                free = (claim is None or claim["expires"] <= now
                        or (claim["holder"] == holder and claim.get("by") == who)
                        or (trust is not None and str(claim.get("by")).lower() not in trust))
                failed = item["failed"] and (
                    trust is None or str(item["failed_by"]).lower() in trust)
                if item["status"] == "done" or failed or not free:
                    return 200, {"won": False}
                item["claim"] = {"holder": holder, "since": now, "expires": now + body["lease"],
                                 "by": who}
                return 200, {"won": True}
            mine = claim is not None and claim["holder"] == holder and claim.get("by") == who
            if verb == "renew":
                if mine:
                    claim["expires"] = now + body["lease"]
                return 200, {"ok": mine}
            if verb == "release":
                if mine:
                    item["claim"] = None
                return 200, {"ok": mine}
            if verb == "record":
                if mine:
                    item["claim"] = None
                    if body["status"] == "done":
                        item["status"] = "done"
                    else:
                        item["failed"] = body.get("reason") or "failed"
                        item["failed_by"] = who
                return 200, {"ok": mine}
        return 404, {"error": f"no such verb {verb}"}


def serve(tracker: Tracker, port: int = 0) -> ThreadingHTTPServer:
    """Serve `tracker` on 127.0.0.1 in a daemon thread; return the server."""

    class Handler(BaseHTTPRequestHandler):
        def _do(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}") if n else {}
            auth = self.headers.get("Authorization") or ""
            token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
            status, data = tracker.handle(self.command, self.path, body, token)
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _do

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("backlog", help="a JSON file: {\"items\": [...]}")
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()
    with open(args.backlog, encoding="utf-8") as fh:
        tracker = Tracker(json.load(fh)["items"])
    server = serve(tracker, args.port)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
