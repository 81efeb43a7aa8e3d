"""Hostile input to the run host: webhooks and control routes. It never answers 500, never
wakes on invalid input, and keeps serving (hypothesis generates the deliveries)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jr2_core import Next, define_event, pool, source, start
from jr2_core.host import RunHost
from jr2_sources.capabilities.webhooks import (
    DeliveryDeduper,
    Verdict,
    attach_webhook,
    header,
    hmac_sha256,
    verify_signature,
)

SECRET = "abuse-test-secret"


class Harness:
    """A waiting pool behind a host with a GitHub-style webhook receiver; counts `next` calls."""

    def __init__(self, tmp: Path) -> None:
        self.calls = 0
        self.tmp = tmp

    def receiver(self) -> Any:
        dedupe = DeliveryDeduper()

        def receive(headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
            if not verify_signature(secret or "", body, header(headers, "X-Hub-Signature-256")):
                return Verdict(401)
            if dedupe.seen(header(headers, "X-GitHub-Delivery")):
                return Verdict(200)
            return Verdict(202, wake=True)

        return receive

    async def __aenter__(self) -> Harness:
        def nxt(active: list[str]) -> Next:
            self.calls += 1
            return Next(item=None, open=0, held=1)

        self.run = start(pool(lambda i, c: None, id="p", item_id=str,
                              source=source(nxt, wake=define_event(name="wake"), idle_poll=3600)),
                         state_dir=self.tmp)
        self.host = RunHost(self.run, max_body=64 * 1024)
        attach_webhook(self.host, self.run, self.receiver(), SECRET)
        await self.host.start()
        await asyncio.sleep(0.02)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.run.interrupt()
        await self.run.result()
        await self.host.stop()


bodies = st.one_of(st.binary(max_size=2048), st.text(max_size=512).map(str.encode),
                   st.just(b'{"action": "opened"'), st.just(b"x" * (70 * 1024)))
# header values a client can send (the client itself refuses control characters)
printable = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
sigs = st.one_of(st.none(), st.just("sha256="), printable,
                 st.just("sha256=" + "0" * 64))
methods = st.sampled_from(["GET", "PUT", "DELETE", "PATCH", "POST"])
ctypes = st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded",
                          "multipart/form-data; boundary=x", ""])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(cases=st.lists(st.tuples(methods, bodies, sigs, ctypes), min_size=1, max_size=8))
def test_hostile_webhooks_never_500_and_never_wake(tmp_path: Path, cases: list[Any]) -> None:
    async def go() -> None:
        async with Harness(tmp_path) as h, aiohttp.ClientSession() as s:
            base = h.calls
            for method, body, sig, ctype in cases:
                headers = {"Content-Type": ctype} if ctype else {}
                if sig is not None:
                    headers["X-Hub-Signature-256"] = sig
                async with s.request(method, f"{h.host.address}/webhook", data=body,
                                     headers=headers) as r:
                    assert r.status < 500
                    if method == "POST" and len(body) > 64 * 1024:
                        assert r.status == 413
            await asyncio.sleep(0.01)
            assert h.calls == base, "an invalid delivery woke the pool"
            good = b'{"ok": true}'
            async with s.post(f"{h.host.address}/webhook", data=good, headers={
                    "X-Hub-Signature-256": "sha256=" + hmac_sha256(SECRET, good)}) as r:
                assert r.status == 202  # still serving
            await asyncio.sleep(0.01)
            assert h.calls == base + 1

    asyncio.run(go())


async def test_replayed_deliveries_are_acknowledged_and_ignored(tmp_path: Path) -> None:
    async with Harness(tmp_path) as h, aiohttp.ClientSession() as s:
        body = b"{}"
        hdr = {"X-Hub-Signature-256": "sha256=" + hmac_sha256(SECRET, body),
               "X-GitHub-Delivery": "same"}
        for expected in (202, 200, 200):
            async with s.post(f"{h.host.address}/webhook", data=body, headers=hdr) as r:
                assert r.status == expected
        await asyncio.sleep(0.01)
        assert h.calls == 2  # the first call at start, one wake


control = st.tuples(
    st.sampled_from(["/v1/gates", "/v1/send", "/v1/run", "/v1/nope", "/"]),
    st.sampled_from(["GET", "POST", "PUT"]),
    st.one_of(st.none(), st.just("Bearer nope"), st.just("Basic abc"), printable),
    st.one_of(st.binary(max_size=300),
              st.dictionaries(st.sampled_from(["gate", "event", "data"]),
                              st.one_of(st.text(max_size=10), st.integers(), st.none(),
                                        st.dictionaries(st.text(max_size=5), st.integers())),
                              ).map(lambda d: __import__("json").dumps(d).encode())),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(cases=st.lists(control, min_size=1, max_size=6), with_token=st.booleans())
def test_control_abuse_is_4xx_and_the_run_is_unaffected(tmp_path: Path, cases: list[Any],
                                                        with_token: bool) -> None:
    async def go() -> None:
        async with Harness(tmp_path) as h, aiohttp.ClientSession() as s:
            for path, method, auth, body in cases:
                headers = {}
                if with_token:
                    headers["Authorization"] = f"Bearer {h.host.token}"
                elif auth is not None:
                    headers["Authorization"] = auth
                async with s.request(method, h.host.address + path, data=body,
                                     headers=headers) as r:
                    assert r.status < 500
                    if not with_token and path.startswith("/v1/") and path != "/v1/nope":
                        assert r.status in (401, 405)
            assert not h.run.done and [g.id for g in h.run.gates()] == ["source"]

    asyncio.run(go())
