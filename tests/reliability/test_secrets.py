"""Secrets never reach output, logs, reports or error messages: every CLI path is run with
tokens and a webhook secret set, and everything it printed or wrote is searched for them."""

from __future__ import annotations

import os
from pathlib import Path

from clihelp import ROOT, jr2

SECRETS = {
    "GITHUB_TOKEN": "ghp_0123456789abcdefSECRETgithub",
    "GH_TOKEN": "gho_0123456789abcdefSECRETgh",
    "JIRA_API_TOKEN": "ATATT3xSECRETjira0123456789",
    "JIRA_PAT": "NjQ5SECRETpat0123456789",
    "HOOK_SECRET": "whsec_SECRETwebhook0123456789",
}


def test_no_cli_path_leaks_a_secret(tmp_path: Path) -> None:
    env = {**os.environ, **SECRETS}
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "A"\ntitle = "a"\n[[items]]\nid = "B"\ntitle = "b"\nneeds = ["A"]\n'
        '[[items]]\nid = "C"\ntitle = "c"\n')
    leaky = ('echo "$GITHUB_TOKEN $GH_TOKEN $JIRA_API_TOKEN $JIRA_PAT $HOOK_SECRET"; '
             'echo "$GITHUB_TOKEN" >&2; test "$JR2_ITEM_ID" != C')
    calls = [
        ["--help"], ["plugins"], ["plugins", "--json"],
        ["ready", "local:b.toml"], ["ready", "local:b.toml", "--json"],
        ["ready", "local:b.toml", "--format", "markdown"],
        ["ready", "local:b.toml", "--explain", "B"],
        ["ready", "local:missing.toml"], ["ready", "nokind:x"],
        ["ready", "local:b.toml", "--label", os.environ.get("X", "$GITHUB_TOKEN")],
        # workers get no secrets unless passed: pass them all, so the scrubbing is tested
        ["work", "local:b.toml", "--json", *(f"--pass-env={n}" for n in SECRETS), "--", "sh",
         "-c", leaky],
        ["work", "local:b.toml", "--timeout", "0.2s", "--", "sleep", "5"],
        ["work", "local:b.toml", "--webhook-secret-env", "HOOK_SECRET", "--", "true"],
        ["work", "local:b.toml", "--listen", "0.0.0.0:1", "--", "true"],
        ["local", "retry", "b.toml", "C"],
        ["gates"], ["send", "x", "y"],
        ["run", str(ROOT / "examples" / "tickets.py") + ":nope"],
    ]
    seen = []
    for args in calls:
        res = jr2(*args, cwd=tmp_path, env=env, timeout=60)
        seen.append(res.stdout + res.stderr)
    for f in (tmp_path / ".jr2").rglob("*"):
        if f.is_file():
            seen.append(f.read_bytes().decode("utf-8", "replace"))
    text = "\n".join(seen)
    assert "***" in text  # the leaky command's output was there, scrubbed
    for name, value in SECRETS.items():
        assert value not in text, f"{name} leaked"


CREDENTIALS = {
    "DATABASE_URL": "postgres://app:dbpass0123456@db.internal:5432/app",
    "NPM_CONFIG__AUTH": "dXNlcjpucG1wYXNzMDEyMzQ1",
    "HTTPS_PROXY": "http://user:proxypass0123@proxy.internal:3128",
}


def test_credentials_in_the_environment_reach_a_command_only_when_passed(tmp_path: Path
                                                                          ) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    env = {**os.environ, **CREDENTIALS, "HTTP_PROXY": "http://proxy.internal:3128"}
    seen = tmp_path / "seen.env"
    dump = ["--", "sh", "-c", f'env > {seen}; echo "$DATABASE_URL"']
    # umask 0: the 0600 below comes from how jr2 creates the files, not from the umask
    res = jr2("work", "local:b.toml", *dump, cwd=tmp_path, env=env, preexec_fn=lambda: os.umask(0))
    assert res.returncode == 0, res.stderr
    got = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert not set(CREDENTIALS) & set(got)
    assert got["HTTP_PROXY"] == "http://proxy.internal:3128"  # no password: inherited
    said = [ln for ln in res.stderr.splitlines() if "left out of the command's environment" in ln]
    assert len(said) == 1 and all(said[0].count(name) == 1 for name in CREDENTIALS), res.stderr
    for secret in ("dbpass0123456", CREDENTIALS["NPM_CONFIG__AUTH"], "proxypass0123"):
        assert secret not in res.stderr  # names, never values
    logs = [f for f in (tmp_path / ".jr2" / "logs").rglob("*") if f.is_file()]
    assert {f.suffix for f in logs} == {".log", ".json"}
    assert {f.stat().st_mode & 0o777 for f in logs} == {0o600}

    (tmp_path / "b.toml").write_text('[[items]]\nid = "B"\ntitle = "b"\n')
    res = jr2("work", "local:b.toml", "--pass-env", "DATABASE_URL", *dump, cwd=tmp_path,
              env=env)
    assert res.returncode == 0, res.stderr
    got = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert got["DATABASE_URL"] == CREDENTIALS["DATABASE_URL"]
    assert "NPM_CONFIG__AUTH" not in got and "HTTPS_PROXY" not in got
    text = "".join(f.read_text() for f in (tmp_path / ".jr2" / "logs").rglob("*.log"))
    assert "dbpass0123456" not in text and "postgres://app:***@db.internal" in text


def test_the_marker_key_is_never_passed_to_a_command(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    env = {**os.environ, "JR2_MARKER_KEY": "k3y-of-the-fleet-0123"}
    res = jr2("work", "local:b.toml", "--pass-env", "JR2_MARKER_KEY", "--", "true",
              cwd=tmp_path, env=env)
    assert res.returncode == 2
    [line] = res.stderr.strip().splitlines()
    assert "the marker key is never given to commands" in line
    assert "k3y-of-the-fleet-0123" not in res.stderr + res.stdout
