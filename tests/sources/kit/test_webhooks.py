"""The shared webhook pieces and the run host's /webhook route."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp

from clihelp import jr2
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

SECRET = "It's a Secret to Everybody"


def test_githubs_documented_test_vector_verifies() -> None:
    sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert verify_signature(SECRET, b"Hello, World!", sig)
    assert not verify_signature(SECRET, b"Hello, World?", sig)
    assert not verify_signature("wrong secret", b"Hello, World!", sig)
    assert not verify_signature(SECRET, b"Hello, World!", None)


def test_the_deduper_remembers_a_bounded_number_of_ids() -> None:
    d = DeliveryDeduper(size=2)
    assert [d.seen("a"), d.seen("a"), d.seen("b"), d.seen("c"), d.seen("a")] == [
        False, True, False, False, False]
    assert d.seen(None) is False and d.seen(None) is False


def receiver() -> Any:
    dedupe = DeliveryDeduper()

    def receive(headers: Mapping[str, str], body: bytes, secret: str | None) -> Verdict:
        if secret is not None and not verify_signature(secret, body,
                                                       header(headers, "X-Hub-Signature-256")):
            return Verdict(401, reason="bad signature")
        if dedupe.seen(header(headers, "X-GitHub-Delivery")):
            return Verdict(200, reason="duplicate")
        return Verdict(202, wake=True)

    return receive


async def test_signed_deliveries_wake_the_pool_and_bad_ones_do_not(tmp_path: Path) -> None:
    calls: list[int] = []

    def nxt(active: list[str]) -> Next:
        calls.append(1)
        return Next(item=None, open=0, held=1)  # keep waiting

    wake = define_event(name="wake")
    run = start(pool(lambda i, c: None, id="p", source=source(nxt, wake=wake, idle_poll=60),
                     item_id=str), state_dir=tmp_path)
    host = RunHost(run)
    attach_webhook(host, run, receiver(), SECRET)
    await host.start()
    await asyncio.sleep(0.05)
    body = b'{"action": "opened"}'
    good = {"X-Hub-Signature-256": "sha256=" + hmac_sha256(SECRET, body),
            "X-GitHub-Delivery": "d-1"}
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{host.address}/webhook", data=body,
                          headers={"X-Hub-Signature-256": "sha256=00"}) as r:
            assert r.status == 401
        async with s.post(f"{host.address}/webhook", data=body) as r:
            assert r.status == 401
        await asyncio.sleep(0.05)
        assert len(calls) == 1
        async with s.post(f"{host.address}/webhook", data=body, headers=good) as r:
            assert r.status == 202 and (await r.json())["woke"] is True
        await asyncio.sleep(0.05)
        assert len(calls) == 2
        async with s.post(f"{host.address}/webhook", data=body, headers=good) as r:
            assert r.status == 200 and (await r.json())["woke"] is False
    run.interrupt()
    await run.result()
    await host.stop()


def test_listen_off_loopback_needs_a_secret(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    res = jr2("work", "local:b.toml", "--listen", "0.0.0.0:8799", "--", "true", cwd=tmp_path)
    assert res.returncode == 2 and "loopback only" in res.stderr


def test_a_source_without_webhooks_refuses_a_secret(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    env_res = jr2("work", "local:b.toml", "--webhook-secret-env", "HOOK_SECRET", "--", "true",
                  cwd=tmp_path, env={**__import__("os").environ, "HOOK_SECRET": "s3cret-value"})
    assert env_res.returncode == 2 and "takes no webhooks" in env_res.stderr
    assert "s3cret-value" not in env_res.stderr
