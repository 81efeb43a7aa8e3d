"""Wake latency: a signed webhook POST to the run host until the Pool calls `next`, p50/p99
over N deliveries on loopback, beside the poll-only default (a waiting pool that polls every
`--poll` seconds), measured in the same process.

    python bench/wake_latency.py [--deliveries 1000] [--poll 0.5] [--json]

Target (issue 9): p99 under 50 ms on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp

from jr2_core import Next, define_event, pool, source, start
from jr2_core.host import RunHost
from jr2_sources.capabilities.webhooks import (
    DeliveryDeduper,
    Verdict,
    attach_webhook,
    header,
    hmac_sha256,
)
from jr2_sources.capabilities.webhooks import verify_signature as verify

SECRET = "bench-secret-value"


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


async def measure(deliveries: int, poll: float, poll_samples: int) -> dict[str, Any]:
    called = asyncio.Event()

    def nxt(active: list[str]) -> Next:
        called.set()
        return Next(item=None, open=0, held=1)

    dedupe = DeliveryDeduper()

    def receive(headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        if not verify(secret or "", body, header(headers, "X-Hub-Signature-256")):
            return Verdict(401)
        if dedupe.seen(header(headers, "X-GitHub-Delivery")):
            return Verdict(200)
        return Verdict(202, wake=True)

    wake = define_event(name="wake")
    with tempfile.TemporaryDirectory() as tmp:
        run = start(pool(lambda i, c: None, id="bench", item_id=str,
                         source=source(nxt, wake=wake, idle_poll=3600)), state_dir=Path(tmp))
        host = RunHost(run)
        attach_webhook(host, run, receive, SECRET)
        await host.start()
        await called.wait()
        body = b'{"action": "edited", "repository": {"full_name": "o/r"}}'
        sig = "sha256=" + hmac_sha256(SECRET, body)
        lat: list[float] = []
        async with aiohttp.ClientSession() as s:
            for i in range(deliveries):
                called.clear()
                t0 = time.perf_counter()
                async with s.post(f"{host.address}/webhook", data=body,
                                  headers={"X-Hub-Signature-256": sig,
                                           "X-GitHub-Delivery": f"d-{i}"}) as r:
                    assert r.status == 202
                await called.wait()
                lat.append(time.perf_counter() - t0)
        run.interrupt()
        await run.result()
        await host.stop()

        # poll-only: a change happens at a random moment; the pool sees it at its next poll
        called2 = asyncio.Event()

        def nxt2(active: list[str]) -> Next:
            called2.set()
            return Next(item=None, open=0, held=1)

        run2 = start(pool(lambda i, c: None, id="poll", item_id=str,
                          source=source(nxt2, idle_poll=poll)), state_dir=Path(tmp))
        await called2.wait()
        plat: list[float] = []
        loop = asyncio.get_running_loop()
        for k in range(poll_samples):
            await asyncio.sleep(poll * ((k * 0.618) % 1))  # spread the change moments
            called2.clear()
            t0 = loop.time()
            await called2.wait()
            plat.append(loop.time() - t0)
        run2.interrupt()
        await run2.result()
    ms = [x * 1000 for x in lat]
    pms = [x * 1000 for x in plat]
    return {"deliveries": deliveries, "webhook_p50_ms": statistics.median(ms),
            "webhook_p99_ms": pct(ms, 99), "poll_every_s": poll,
            "poll_p50_ms": statistics.median(pms), "poll_p99_ms": pct(pms, 99)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--deliveries", type=int, default=1000)
    ap.add_argument("--poll", type=float, default=0.5)
    ap.add_argument("--poll-samples", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = asyncio.run(measure(args.deliveries, args.poll, args.poll_samples))
    if args.json:
        print(json.dumps(r, indent=2))
        return
    print(f"{'wake by':<26} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"{'signed webhook (n=' + str(r['deliveries']) + ')':<26} "
          f"{r['webhook_p50_ms']:>8.2f} {r['webhook_p99_ms']:>8.2f}")
    print(f"{'poll every ' + str(r['poll_every_s']) + ' s':<26} "
          f"{r['poll_p50_ms']:>8.1f} {r['poll_p99_ms']:>8.1f}")
    print(f"ratio poll/webhook at p50: {r['poll_p50_ms'] / r['webhook_p50_ms']:.0f}x; "
          "target: webhook p99 < 50 ms")


if __name__ == "__main__":
    main()
