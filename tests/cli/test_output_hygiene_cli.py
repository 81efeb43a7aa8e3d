"""Secrets and output hygiene through the command line (issue 14): multi-line secrets and every
base64 form of a credential are scrubbed, before any shortening; tracker text cannot drive the
terminal (escape sequences) nor the live view (rich markup)."""

from __future__ import annotations

import base64
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from clihelp import jr2
from jr2_sources.testing.fakes.jira_server import FakeJira

JR2 = [sys.executable, "-m", "jr2_core"]
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAwJr2TestKeyLineOne0123456789\n"
       "Zm9vYmFyYmF6cXV4TestKeyLineTwo9876543210abc\n-----END RSA PRIVATE KEY-----")
TOKEN = "ATATT3xFfGF0jr2SecretTokenValue42"


def everything(tmp_path: Path, *texts: str) -> str:
    files = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()
             and p.name != "b.toml" and p.suffix != ".sqlite"]
    return "\n".join([*texts, *files])


def test_a_pem_key_and_base64_forms_of_a_token_never_reach_output_logs_or_reasons(
        tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n'
                                     '[[items]]\nid = "B"\ntitle = "b"\n')
    basic = base64.b64encode(f"me@example.com:{TOKEN}".encode()).decode()
    urlsafe = base64.urlsafe_b64encode(f'{{"k": "{TOKEN}"}}'.encode()).decode()
    script = ('echo "$APP_PRIVATE_KEY"; echo "Authorization: Basic $BASIC"; echo "$BLOB"; '
              'if [ "$JR2_ITEM_ID" = B ]; then echo "$APP_PRIVATE_KEY" >&2; '
              'echo "auth: Basic $BASIC" >&2; exit 3; fi; echo "$APP_PRIVATE_KEY" | tail -2')
    env = dict(os.environ, APP_PRIVATE_KEY=PEM, JIRA_API_TOKEN=TOKEN, BASIC=basic, BLOB=urlsafe)
    # the key reaches the command only when passed (--pass-env): pass it, to test the scrubbing
    res = jr2("work", "local:b.toml", "--json", "--pass-env", "APP_PRIVATE_KEY", "--", "sh", "-c",
              script, cwd=tmp_path, env=env)
    assert res.returncode == 1, res.stderr
    detail = json.loads(res.stdout)["failure"]["detail"]
    assert detail["items"]["A"] == "***"  # the key's last line, scrubbed
    assert detail["failures"]["B"]["reason"] == "exit code 3: auth: Basic ***"
    assert "***" in detail["failures"]["B"]["detail"]["stderr"]  # the key's lines
    seen = everything(tmp_path, res.stdout, res.stderr)
    assert "Authorization: Basic ***" in seen
    for secret in (*PEM.splitlines()[1:3], TOKEN, basic, urlsafe, basic[8:30]):
        assert secret not in seen, secret


def test_a_jira_error_echoing_basic_auth_is_scrubbed(tmp_path: Path) -> None:
    basic = base64.b64encode(f"bot@example.com:{TOKEN}".encode()).decode()
    fake = FakeJira().start()
    try:
        fake.fault(400, path="search", message=f"bad request; you sent Authorization: Basic "
                                               f"{basic} and token {TOKEN}")
        res = subprocess.run([*JR2, "ready", f"jira:{fake.url}", "--jql", "project = ENG"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, JIRA_EMAIL="bot@example.com",
                                      JIRA_API_TOKEN=TOKEN))
    finally:
        fake.stop()
    assert res.returncode == 4, res.stderr
    assert "Authorization: Basic *** and token ***" in res.stderr
    assert basic not in res.stderr and basic[:20] not in res.stderr and TOKEN not in res.stderr


def in_pty(args: list[str], cwd: Path, timeout: float = 60) -> tuple[int, str]:
    """Run jr2 with stdout and stderr on a terminal; its exit code and everything it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*JR2, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=dict(os.environ, COLUMNS="200", TERM="xterm"))
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode("utf-8", "replace")


HOSTILE = [("X\\u001b]0;pwned\\u0007", "window title"), ("Y", "\\u001b[2Jclear \\u009b31m"),
           ("Z[/]", "a [bold]title[/] \\u001b]8;;http://evil.example/\\u001b\\\\link")]


def test_ready_on_a_terminal_prints_no_escape_sequence_from_the_tracker(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text("".join(
        f'[[items]]\nid = "{i}"\ntitle = "{t}"\nlabels = ["l\\u001b[5m"]\n' for i, t in HOSTILE)
        + '[[items]]\nid = "W"\ntitle = "w"\nneeds = ["X\\u001b]0;pwned\\u0007"]\n')
    code, out = in_pty(["ready", "local:b.toml"], tmp_path)
    assert code == 0, out
    for seq in ("\x1b]0;pwned", "\x1b[2J", "\x9b", "\x1b]8;;", "\x1b[5m", "\x07"):
        assert seq not in out, (seq, out)
    assert "pwned" in out and "a [bold]title[/]" in out  # shown, as plain text
    code, out = in_pty(["ready", "local:b.toml", "--explain", "W"], tmp_path)
    assert code == 0 and "\x1b]0;pwned" not in out and "\x07" not in out, out


def test_the_live_view_draws_ids_and_reasons_as_text_not_markup(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text("".join(
        f'[[items]]\nid = "{i}"\ntitle = "{t}"\n' for i, t in HOSTILE))
    code, out = in_pty(["work", "local:b.toml", "--", "sh", "-c",
                        'echo "[/] failed [red]here\\033]0;pwned\\007" >&2; exit 1'], tmp_path)
    assert code == 1, out
    assert "Traceback" not in out and "MarkupError" not in out, out
    assert "failed Z[/]: exit code 1: [/] failed [red]here" in out
    assert "\x1b]0;pwned" not in out and "\x07" not in out
