"""The run host of `jr2 work` as seen from the network (issue 14): `--listen` off loopback serves
the webhook only, over TLS when asked; unsigned bodies are capped before any signature check;
bad headers are 4xx; `jr2 gates` never goes through a proxy to reach its run on loopback."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from clihelp import jr2, wait_for
from jr2_sources.capabilities.webhooks import hmac_sha256
from jr2_sources.testing.fakes.github_server import FakeGitHub

JR2 = [sys.executable, "-m", "jr2_core"]
SECRET = "hook-secret-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_file(tmp_path: Path) -> dict[str, str]:
    files = list((tmp_path / ".jr2" / "runs").glob("*.json"))
    return json.loads(files[0].read_text()) if files else {}


@contextmanager
def github_pool(tmp_path: Path, *opts: str) -> Iterator[tuple[subprocess.Popen[str], dict[str,
                                                                                          str]]]:
    """`jr2 work github:o/r --wait` against a fake GitHub, its one worker sleeping."""
    with FakeGitHub() as fake:
        fake.add_issue("o/r", "one")
        env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x", HOOK=SECRET)
        proc = subprocess.Popen([*JR2, "work", "github:o/r", "--wait", "--write-spacing",
                                 "0.001", "--webhook-secret-env", "HOOK", *opts, "--", "sleep",
                                 "60"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: run_file(tmp_path) or proc.poll() is not None, timeout=30)
            assert proc.poll() is None, proc.communicate()
            yield proc, run_file(tmp_path)
        finally:
            proc.terminate()
            proc.communicate(timeout=30)


def request(port: int, method: str, path: str, headers: dict[str, str | bytes],
            body: bytes = b"", tls: bool = False) -> int:
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            "127.0.0.1", port, timeout=10, context=ctx)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path)
    for k, v in {**headers, "Content-Length": str(len(body))}.items():
        conn.putheader(k, v)
    conn.endheaders(body)
    status = conn.getresponse().status
    conn.close()
    return status


def test_listen_off_loopback_serves_the_webhook_only_and_control_stays_on_loopback(
        tmp_path: Path) -> None:
    port = free_port()
    with github_pool(tmp_path, "--listen", f"0.0.0.0:{port}") as (_, rf):
        bearer = {"Authorization": f"Bearer {rf['token']}"}
        assert rf["address"].startswith("http://127.0.0.1:")
        assert not rf["address"].endswith(f":{port}")
        assert request(port, "GET", "/v1/gates", bearer) == 404  # not on the public address
        assert request(port, "POST", "/webhook", {}, b"{}") == 401  # unsigned
        control = int(rf["address"].rsplit(":", 1)[1])
        assert request(control, "GET", "/v1/gates", bearer) == 200
        # a bearer header that is not UTF-8 is a wrong token, not a server error
        assert request(control, "GET", "/v1/gates", {"Authorization": b"Bearer \xff\xfe"}) == 401


def test_the_webhook_can_be_served_over_tls(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    port = free_port()
    with github_pool(tmp_path, "--listen", f"127.0.0.1:{port}", "--tls-cert", str(cert),
                     "--tls-key", str(key)) as (_, rf):
        assert request(port, "POST", "/webhook", {}, b"{}", tls=True) == 401
        assert rf["address"].startswith("http://127.0.0.1:")  # the control API: plain loopback
    res = jr2("work", "local:b.toml", "--listen", f"127.0.0.1:{port}", "--tls-cert",
              str(tmp_path / "nope.pem"), "--", "true", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr


def test_a_private_key_anyone_can_read_is_warned_about(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    said = []
    for mode in (0o644, 0o640):
        key.chmod(mode)
        res = jr2("work", "local:b.toml", "--listen", "127.0.0.1:0", "--tls-cert", str(cert),
                  "--tls-key", str(key), "--", "true", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        said.append([line for line in res.stderr.splitlines() if "private key" in line])
    assert said == [[f"jr2: warning: --tls-key {key}: every user of this machine can read this "
                     "private key (mode 0644); chmod o-r it"], []]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_two_hundred_half_sent_unsigned_bodies_do_not_grow_the_process(tmp_path: Path) -> None:
    port = free_port()
    with github_pool(tmp_path, "--listen", f"127.0.0.1:{port}") as (proc, _):
        # one whole unsigned delivery first: what the first webhook loads (imported lazily,
        # since jr2 starts fast) is not growth caused by the half-sent bodies
        assert request(port, "POST", "/webhook", {}, b"{}") == 401
        time.sleep(1)
        before = rss_mb(proc.pid)
        socks = []
        chunk = b"x" * (900 << 10)
        try:
            for i in range(200):  # from 8 addresses, within the connections one may hold
                s = socket.create_connection(("127.0.0.1", port), timeout=10,
                                             source_address=(f"127.0.0.{2 + i % 8}", 0))
                s.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                          b"\r\nContent-Length: 1040000\r\n\r\n")
                s.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    s.send(chunk)  # as much as the socket takes; the rest never comes
                socks.append(s)
            time.sleep(2)
            grown = rss_mb(proc.pid) - before
        finally:
            for s in socks:
                s.close()
        print(f"RSS grew {grown:.1f} MB with 200 half-sent unsigned bodies")
        # unbounded it grew 210 MB; bounded, 25-40 MB alone and up to 77 MB in a loaded full run
        assert grown < 110, f"grew {grown:.0f} MB"
        assert proc.poll() is None


def test_jr2_gates_reaches_its_run_on_loopback_despite_a_proxy(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    proc = subprocess.Popen([*JR2, "work", "local:b.toml", "--wait", "--", "true"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: run_file(tmp_path))
        dead_proxy = f"http://127.0.0.1:{free_port()}"
        env = {k: v for k, v in os.environ.items() if k.lower() != "no_proxy"}
        env.update(http_proxy=dead_proxy, HTTP_PROXY=dead_proxy, https_proxy=dead_proxy)
        res = jr2("gates", cwd=tmp_path, env=env)
        assert res.returncode == 0, res.stderr
        assert "no open gates" in res.stdout or "source" in res.stdout
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _open(n: int, port: int, peers: list[str], head: bytes = b"") -> list[socket.socket]:
    """`n` connections to the host from `peers` in turn, each sending `head` (or nothing)."""
    socks, end = [], time.monotonic() + 30
    for i in range(n):
        s = socket.socket()
        s.bind((peers[i % len(peers)], 0))
        s.settimeout(1)
        with contextlib.suppress(OSError):  # the host may close one over its caps at once
            s.connect(("127.0.0.1", port))
            if head:
                s.sendall(head)
        socks.append(s)
        assert time.monotonic() < end, f"the host stopped accepting after {i} connections"
    return socks


def _closed_by_the_host(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        s.recv(1 << 16)  # EOF (or an answer the host sent before closing)
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset


def _signed_issue_body() -> bytes:
    """GitHub's documented `issues` delivery, for the repository the pools work on."""
    fixture = Path(__file__).resolve().parents[2] / "fixtures/github/webhooks/issues.opened.json"
    payload = json.loads(fixture.read_text())
    payload["repository"]["full_name"] = "o/r"
    return json.dumps(payload).encode()


def _waiting_pool(tmp_path: Path, fake: FakeGitHub, port: int, ran: Path,
                  preexec_fn: Callable[[], None] | None = None) -> subprocess.Popen[str]:
    """A `--wait` GitHub pool listening on `port` that appends each item it runs to `ran`."""
    env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN="x", HOOK=SECRET)
    return subprocess.Popen(
        [*JR2, "work", "github:o/r", "--wait", "--poll-every", "60s", "--write-spacing",
         "0.001", "--listen", f"127.0.0.1:{port}", "--webhook-secret-env", "HOOK", "--",
         "sh", "-c", f'echo "$JR2_ITEM_ID" >> {ran}'], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)


def _until_first_item_ran(tmp_path: Path, proc: subprocess.Popen[str], ran: Path) -> None:
    wait_for(lambda: run_file(tmp_path) or proc.poll() is not None, timeout=30)
    assert proc.poll() is None, proc.communicate()
    wait_for(lambda: ran.exists(), timeout=30)  # o/r#1 done: the pool waits


def _deliver_until_o_r_2_runs(port: int, body: bytes, ran: Path, wait: float) -> list[int]:
    """Signed deliveries, each answered within 10 s: a second only if the first one's wake
    came before the new issue was listed; the statuses."""
    sent, statuses = time.monotonic(), []
    for i in range(2):
        headers: dict[str, str | bytes] = {
            "X-Hub-Signature-256": "sha256=" + hmac_sha256(SECRET, body),
            "X-GitHub-Event": "issues", "X-GitHub-Delivery": f"d-{i}",
            "Content-Type": "application/json"}
        statuses.append(request(port, "POST", "/webhook", headers, body))
        assert time.monotonic() - sent < 10, statuses
        with contextlib.suppress(AssertionError):
            wait_for(lambda: "o/r#2" in ran.read_text(), timeout=wait)
        if "o/r#2" in ran.read_text():
            break
    return statuses


def _flood(tmp_path: Path, headerless: int, slow: int, limit_fds: bool) -> None:
    """Header-less connections from 127.0.0.2 and slow bodies from 127.0.0.3-9 against a waiting
    GitHub pool; a signed delivery from 127.0.0.1 is served within 10 s and its issue runs."""
    import resource

    def few_fds() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    port, ran, body = free_port(), tmp_path / "ran", _signed_issue_body()
    with FakeGitHub() as fake:
        fake.add_issue("o/r", "done before the flood")
        proc = _waiting_pool(tmp_path, fake, port, ran, few_fds if limit_fds else None)
        socks: list[socket.socket] = []
        try:
            _until_first_item_ran(tmp_path, proc, ran)
            t0 = time.monotonic()
            bare = _open(headerless, port, ["127.0.0.2"])
            socks += bare
            head = (b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100000\r\n\r\n{")
            socks += _open(slow, port, [f"127.0.0.{i}" for i in range(3, 10)], head)
            fake.add_issue("o/r", "arrives during the flood")
            statuses = _deliver_until_o_r_2_runs(port, body, ran, wait=5)
            assert statuses and all(200 <= s < 300 for s in statuses), statuses
            assert ran.read_text().split() == ["o/r#1", "o/r#2"]
            # every header-less connection is closed within the header timeout (10 s)
            wait_for(lambda: all(_closed_by_the_host(s) for s in bare),
                     timeout=max(1.0, t0 + 12.5 - time.monotonic()), every=0.25)
        finally:
            for s in socks:
                s.close()
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert len(err) < 100_000 and "Traceback" not in err, err[-3000:]
    said = err.splitlines()
    for words in ("refusing connections", "sent no headers within 10s", "answering 503"):
        assert len([ln for ln in said if words in ln]) == 1, err[-3000:]


def test_a_flood_of_connections_is_capped_and_a_signed_delivery_still_runs_its_issue(
        tmp_path: Path) -> None:
    _flood(tmp_path, headerless=200, slow=40, limit_fds=False)


@pytest.mark.soak
def test_eleven_hundred_headerless_connections_under_1024_descriptors_leave_a_delivery_served(
        tmp_path: Path) -> None:
    _flood(tmp_path, headerless=1100, slow=400, limit_fds=True)


def test_when_every_connection_is_taken_a_newcomer_closes_the_busiest_addresss_oldest() -> None:
    import asyncio

    from jr2_sources.cli.doors import MAX_PEER, Doors

    class Transport:
        def __init__(self, ip: str) -> None:
            self.ip, self.aborted = ip, False

        def get_extra_info(self, name: str) -> object:
            return (self.ip, 1234) if name == "peername" else None

        def abort(self) -> None:
            self.aborted = True

    class Inner:
        transport = None

        def connection_made(self, transport: object) -> None:
            pass

        def connection_lost(self, exc: object) -> None:
            pass

    async def scene() -> None:
        doors = Doors()
        doors.total = 4
        conns = {}
        for name, ip in [("a1", "10.0.0.1"), ("a2", "10.0.0.1"), ("a3", "10.0.0.1"),
                         ("b1", "10.0.0.2"), ("c1", "10.0.0.3"), ("b2", "10.0.0.2"),
                         ("v6", "2001:db8::1"), ("v6b", "2001:db8::2")]:
            conns[name] = Transport(ip)
            doors(Inner)().connection_made(conns[name])
        closed = {name for name, t in conns.items() if t.aborted}
        # c1 closed a1 (10.0.0.1 held 3); b2 found no address with 2 more than its own: closed;
        # v6 closed a2; v6b shares v6's /64, which holds as many as the busiest: closed
        assert closed == {"a1", "b2", "a2", "v6b"}
        assert doors.count == 4 and sorted(map(len, doors.open.values())) == [1, 1, 1, 1]
        doors.total = 1000
        flood = [Transport("10.9.9.9") for _ in range(MAX_PEER + 5)]
        for t in flood:
            doors(Inner)().connection_made(t)
        assert [t.aborted for t in flood] == [False] * MAX_PEER + [True] * 5

    asyncio.run(scene())


def test_over_tls_connections_that_never_say_hello_are_capped_too(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    key.chmod(0o600)
    port = free_port()
    with github_pool(tmp_path, "--listen", f"127.0.0.1:{port}", "--tls-cert", str(cert),
                     "--tls-key", str(key)):
        from jr2_sources.cli.doors import MAX_PEER

        silent = _open(MAX_PEER + 36, port, ["127.0.0.2"])  # TCP only: no TLS hello
        try:
            time.sleep(1)
            assert sum(_closed_by_the_host(s) for s in silent) == 36  # over the cap: at once
            assert request(port, "POST", "/webhook", {}, b"{}", tls=True) == 401  # served
        finally:
            for s in silent:
                s.close()


def test_asyncios_out_of_descriptors_traceback_is_one_line_per_burst(
        caplog: pytest.LogCaptureFixture) -> None:
    import errno
    import logging

    from jr2_sources.cli.doors import Doors

    Doors()
    err = OSError(errno.EMFILE, os.strerror(errno.EMFILE))
    for _ in range(50):  # asyncio says it once a second per listening address, traceback and all
        logging.getLogger("asyncio").error("socket.accept() out of system resource",
                                           exc_info=(OSError, err, None))
    said = [r for r in caplog.records if "accept" in r.getMessage()]
    assert [(r.name, r.getMessage(), r.exc_info) for r in said] == [
        ("jr2.host", "jr2: webhook host: cannot accept connections: Too many open files "
         "(said once per burst)", None)]


class _SlowBodies:
    """Slow bodies held open from `peers`, `each` per address, by a thread: every connection
    sends its headers and one byte of a 100,000-byte body, then nothing; one the host closes
    (or answers) is opened again a fifth of a second later, as a persistent attacker would."""

    HEAD = (b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n{")

    def __init__(self, port: int, peers: list[str], each: int) -> None:
        import threading

        self.port, self.slots = port, [p for p in peers for _ in range(each)]
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)

    def _connect(self, peer: str) -> socket.socket | None:
        s = socket.socket()
        try:
            s.bind((peer, 0))
            s.settimeout(1)
            s.connect(("127.0.0.1", self.port))
            s.sendall(self.HEAD)
        except OSError:
            s.close()
            return None
        self.opened += 1
        return s

    def _hold(self) -> None:
        import select

        socks: dict[int, socket.socket | None] = dict.fromkeys(range(len(self.slots)))
        due = dict.fromkeys(range(len(self.slots)), 0.0)
        while not self._stop.is_set():
            now = time.monotonic()
            for i, s in socks.items():
                if s is None and due[i] <= now:
                    socks[i] = self._connect(self.slots[i])
                    due[i] = now + 0.2
            live = {s: i for i, s in socks.items() if s is not None}
            ready, _, _ = select.select(list(live), [], [], 0.05)
            for s in ready:  # an answer or the host's close: this one is over
                s.close()
                socks[live[s]], due[live[s]] = None, time.monotonic() + 0.2
        for s in socks.values():
            if s is not None:
                s.close()

    def __enter__(self) -> _SlowBodies:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_slow_bodies_from_many_addresses_do_not_starve_a_signed_delivery(tmp_path: Path) -> None:
    port, ran, body = free_port(), tmp_path / "ran", _signed_issue_body()
    with FakeGitHub() as fake:
        fake.add_issue("o/r", "done before the slow bodies")
        proc = _waiting_pool(tmp_path, fake, port, ran)
        try:
            _until_first_item_ran(tmp_path, proc, ran)
            # 29 addresses, 2 bodies each: more than the 16 + 16 unsigned requests in hand
            with _SlowBodies(port, [f"127.0.0.{i}" for i in range(2, 31)], 2) as slow:
                wait_for(lambda: slow.opened >= 58, timeout=10)
                time.sleep(1.5)  # the hand is full of slow bodies, and they are dropped and
                # come back
                fake.add_issue("o/r", "arrives during the slow bodies")
                statuses = _deliver_until_o_r_2_runs(port, body, ran, wait=4)
                reopened = slow.opened - 58
            assert statuses and all(200 <= s < 300 for s in statuses), statuses
            assert ran.read_text().split() == ["o/r#1", "o/r#2"]
            assert reopened > 58, reopened  # the host dropped them over and over
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert len(err) < 100_000 and "Traceback" not in err, err[-3000:]
    assert len([ln for ln in err.splitlines() if "slower than" in ln]) == 1, err[-3000:]
