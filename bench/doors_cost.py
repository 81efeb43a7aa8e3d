"""What the webhook host's caps and timeouts cost per delivery: signed deliveries (a 25 kB
body, a new connection each, as GitHub sends them) to three hosts in the same run, in turns:

- `plain`: aiohttp serving the same handler, nothing in front of it (the baseline);
- `caps`: jr2's run host (`jr2_core.host.RunHost`): the unsigned-request caps, their timeout
  and the body-rate watch;
- `doors`: the same behind `jr2_sources.cli.doors.Doors` (header timeout, connection caps), as
  `jr2 work --listen` serves it.

The client is another process (`--client`), so the host's CPU time (`getrusage` of this
process) is the host's alone; the handler checks the signature, as `attach_webhook`'s does.

    python bench/doors_cost.py [--deliveries 2000] [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from jr2_core import pool, source, start
from jr2_core.host import RunHost
from jr2_sources.capabilities.webhooks import hmac_sha256
from jr2_sources.capabilities.webhooks import verify_signature as verify
from jr2_sources.cli.doors import Doors

SECRET = "bench-secret-value"
BODY = json.dumps({"action": "opened", "pad": "x" * 25_000}).encode()


async def handle(request: web.Request) -> web.Response:
    body = await request.read()
    ok = verify(SECRET, body, request.headers.get("X-Hub-Signature-256", ""))
    return web.json_response({"ok": ok}, status=202 if ok else 401)


def client(port: int, n: int) -> None:
    """`--client`: N signed deliveries, a connection each, every answer read."""
    head = (f"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"X-Hub-Signature-256: sha256={hmac_sha256(SECRET, BODY)}\r\n"
            f"Content-Length: {len(BODY)}\r\nConnection: close\r\n\r\n").encode()
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(head + BODY)
            answer = b""
            while chunk := s.recv(1 << 16):
                answer += chunk
            if b" 202 " not in answer.split(b"\r\n", 1)[0]:
                raise SystemExit(f"unexpected answer: {answer[:80]!r}")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def one_round(kind: str, n: int, state: Path) -> tuple[float, float]:
    """Wall and host CPU seconds of N deliveries to a host of `kind`."""
    run = None
    if kind == "plain":
        app = web.Application(client_max_size=1 << 20)
        app.router.add_post("/webhook", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        stop: Any = runner.cleanup
    else:
        run = start(pool(lambda item, ctx: None, id="p", item_id=str,
                         source=source(lambda act: None)), None, state_dir=state)
        host = RunHost(run, port=0)
        if kind == "doors":
            host.doors = Doors()
            host.backlog = host.doors.backlog
        host.add_route("POST", "/webhook", handle, auth=False)
        await host.start()
        assert host.address is not None
        port = int(host.address.rsplit(":", 1)[1])
        stop = host.stop
    c0, t0 = _cpu(), time.perf_counter()
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--client", str(port),
                                                str(n))
    if await proc.wait() != 0:
        raise SystemExit(f"{kind}: the client failed")
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    await stop()
    if run is not None:
        run.interrupt()
        await run.result()
    return wall, cpu


async def main_async(n: int, rounds: int) -> dict[str, dict[str, float]]:
    best = {k: {"wall_s": float("inf"), "cpu_s": float("inf")} for k in ("plain", "caps",
                                                                       "doors")}
    with tempfile.TemporaryDirectory(prefix="jr2-doors-") as tmp:
        for r in range(rounds):  # in turns, best of each: the machine is shared
            order = list(best) if r % 2 == 0 else list(reversed(best))
            for kind in order:
                wall, cpu = await one_round(kind, n, Path(tmp) / f"{kind}{r}")
                best[kind]["wall_s"] = min(best[kind]["wall_s"], wall)
                best[kind]["cpu_s"] = min(best[kind]["cpu_s"], cpu)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--deliveries", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--client", nargs=2, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        client(*args.client)
        return
    n = args.deliveries
    best = asyncio.run(main_async(n, args.rounds))
    base = best["plain"]
    rows = {k: {**v, "wall_us": v["wall_s"] / n * 1e6, "cpu_us": v["cpu_s"] / n * 1e6,
                "wall_ratio": v["wall_s"] / base["wall_s"], "cpu_ratio": v["cpu_s"] / base["cpu_s"]}
            for k, v in best.items()}
    if args.json:
        print(json.dumps({"deliveries": n, "body_bytes": len(BODY), "hosts": rows}, indent=2))
        return
    for k, v in rows.items():
        print(f"{k:>6}: {v['wall_us']:7.0f} us a delivery ({v['wall_ratio']:.2f}x plain), host CPU "
              f"{v['cpu_us']:6.0f} us ({v['cpu_ratio']:.2f}x plain)")
    print(f"{n:,} signed deliveries of {len(BODY):,} bytes, a connection each; best of "
          f"{args.rounds}")


if __name__ == "__main__":
    main()
