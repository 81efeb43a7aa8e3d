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
