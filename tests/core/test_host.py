"""The run host: bearer token, the control API, size limit, run files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from jr2_core import Context, define_event, pool, source, start
from jr2_core.client import live_runs, pick_run
from jr2_core.errors import NoLiveRun
from jr2_core.host import RunHost

approve = define_event(name="approve")


async def review(item: str, ctx: Context) -> str:
    await ctx.gate("review", accepts=[approve])
    return item


async def hosted(tmp_path: Path, **kw: Any) -> tuple[Any, RunHost]:
    items = ["a"]
    r = start(pool(review, id="p", source=source(lambda act: items.pop() if items else None),
                   item_id=str), state_dir=tmp_path)
    host = RunHost(r, **kw)
    await host.start()
    for _ in range(10):
        await asyncio.sleep(0)
    return r, host


async def test_control_routes_need_the_bearer_token(tmp_path: Path) -> None:
    r, host = await hosted(tmp_path)
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{host.address}/v1/gates") as resp:
            assert resp.status == 401
        async with s.get(f"{host.address}/v1/gates",
                         headers={"Authorization": "Bearer wrong"}) as resp:
            assert resp.status == 401
        auth = {"Authorization": f"Bearer {host.token}"}
        async with s.get(f"{host.address}/v1/gates", headers=auth) as resp:
            assert [g["id"] for g in await resp.json()] == ["a.review"]
        async with s.post(f"{host.address}/v1/send", headers=auth,
                          json={"gate": "nope", "event": "approve"}) as resp:
            assert resp.status == 404
        async with s.post(f"{host.address}/v1/send", headers=auth, data=b"{not json") as resp:
            assert resp.status == 400
        async with s.post(f"{host.address}/v1/send", headers=auth,
                          json={"gate": "a.review", "event": "x"}) as resp:
            assert resp.status == 422
        async with s.post(f"{host.address}/v1/send", headers=auth,
                          json={"gate": "a.review", "event": "approve"}) as resp:
            assert resp.status == 200
    assert (await r.result()).state == "done"
    await host.stop()


async def test_a_body_over_the_limit_gets_413(tmp_path: Path) -> None:
    r, host = await hosted(tmp_path, max_body=1024)
    async with aiohttp.ClientSession() as s, s.post(f"{host.address}/v1/send",
                      headers={"Authorization": f"Bearer {host.token}"},
                      data=b"x" * 5000) as resp:
        assert resp.status == 413
    assert [g.id for g in r.gates()] == ["a.review"]
    r.interrupt()
    await r.result()
    await host.stop()


async def test_the_run_file_is_private_and_removed_at_the_end(tmp_path: Path) -> None:
    r, host = await hosted(tmp_path)
    assert host.run_file is not None
    mode = stat.S_IMODE(host.run_file.stat().st_mode)
    assert mode == 0o600
    data = json.loads(host.run_file.read_text())
    assert data["pid"] == os.getpid() and data["run_id"] == r.id
    assert pick_run(tmp_path, None).run_id == r.id
    r.interrupt()
    await r.result()
    await host.stop()
    assert not host.run_file.exists()


def test_run_files_of_dead_processes_are_ignored_and_cleaned(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    dead = runs / "r-dead.json"
    dead.write_text(json.dumps({"run_id": "r-dead", "address": "http://127.0.0.1:1",
                                "token": "t", "pid": 2**22 + 12345, "machine": "m"}))
    assert live_runs(tmp_path) == []
    assert not dead.exists()
    with pytest.raises(NoLiveRun, match="no live run"):
        pick_run(tmp_path, None)


def test_several_live_runs_need_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for rid in ("r-1", "r-2"):
        (runs / f"{rid}.json").write_text(json.dumps(
            {"run_id": rid, "address": "http://127.0.0.1:1", "token": "t", "pid": os.getpid(),
             "machine": "m"}))
    with pytest.raises(NoLiveRun, match="several live runs; pick one with --run: r-1"):
        pick_run(tmp_path, None)
    assert pick_run(tmp_path, "r-2").run_id == "r-2"


async def test_unsigned_requests_are_capped_in_count_and_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jr2_core.host as host_mod

    monkeypatch.setattr(host_mod, "UNSIGNED_TIMEOUT", 0.5)

    async def hook(request: Any) -> Any:
        await request.read()
        return aiohttp.web.json_response({"ok": True})

    items = ["a"]
    r = start(pool(review, id="p", source=source(lambda act: items.pop() if items else None),
                   item_id=str), state_dir=tmp_path)
    host = RunHost(r)
    host.add_route("POST", "/webhook", hook, auth=False)
    await host.start()
    assert host.address is not None
    port = int(host.address.rsplit(":", 1)[1])

    async def half_sent(peer: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                       local_addr=(f"127.0.0.{peer}", 0))
        writer.write(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        await writer.drain()
        return reader, writer

    async def answer(conn: tuple[asyncio.StreamReader, Any], within: float) -> bytes:
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(conn[0].readline(), within)
        return b"(none yet)"

    try:  # peers 2-5 take the cap; then one more from each is 503 at once
        held = [await half_sent(2 + i % 4) for i in range(host_mod.MAX_UNSIGNED)]
        await asyncio.sleep(0.1)
        extra = [await half_sent(peer) for peer in (2, 3, 4, 5)]
        assert {await answer(c, 0.4) for c in extra} == {b"HTTP/1.1 503 Service Unavailable\r\n"}
        fresh = await half_sent(6)  # an address holding none is let in past the cap
        assert await answer(fresh, 0.2) == b"(none yet)"
        again = await half_sent(6)  # but only one
        assert (await answer(again, 0.4)).startswith(b"HTTP/1.1 503")
        extra.append(again)
        # the held ones time out
        assert (await answer(held[0], 2)).startswith(b"HTTP/1.1 408")
        assert (await answer(fresh, 2)).startswith(b"HTTP/1.1 408")
        for _, w in [*held, *extra, fresh]:
            w.close()
    finally:
        await host.stop()
        r.interrupt()
        await r.result()


async def test_a_request_aiohttp_cannot_parse_is_one_line_not_a_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    r, host = await hosted(tmp_path)
    assert host.address is not None
    port = int(host.address.rsplit(":", 1)[1])
    try:
        for length in (b"-1", b"abc"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"POST /v1/send HTTP/1.1\r\nHost: x\r\nContent-Length: " + length
                         + b"\r\n\r\n{}")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), 5)
            assert b" 400 " in line
            writer.close()
    finally:
        await host.stop()
        r.interrupt()
        await r.result()
    said = [rec for rec in caplog.records if rec.name == "jr2.host"]
    assert len(said) == 2 and all(rec.exc_info is None for rec in said)
    assert said[0].getMessage() == ("jr2: refused a malformed request from 127.0.0.1 "
                                    "(400: Invalid character in Content-Length)")


async def test_the_host_listens_before_the_run_begins(tmp_path: Path) -> None:
    """A webhook caused by a run's very first write must find the host listening."""
    import socket

    from jr2_core.commands import host_and_wait

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])

    async def first_step(data: Any, ctx: Any) -> str:
        _, writer = await asyncio.open_connection("127.0.0.1", port)  # refused if not yet bound
        writer.close()
        return "reached"

    result = await host_and_wait(lambda after: start(first_step, state_dir=tmp_path, after=after),
                                 port=port, quiet=True)
    assert (result.state, result.output) == ("done", "reached"), result


def test_dropping_a_request_whose_deadline_has_fired_raises_nothing() -> None:
    """The body-rate watch may drop a request once its own deadline has fired (in the same
    loop turn, or before its handler ended): asyncio refuses to move such a deadline, so the
    drop only marks it."""
    from jr2_core.host import _InHand

    async def main() -> _InHand:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0) as limit:
                entry = _InHand(None, limit)  # type: ignore[arg-type]
                await asyncio.sleep(1)
        entry.drop()
        return entry

    assert asyncio.run(main()).dropped
