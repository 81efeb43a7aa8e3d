"""Where the GitHub token and API URL come from.

Design note: the token is looked up in `GH_TOKEN`, then `GITHUB_TOKEN` (the order of the gh
CLI, so a `GH_TOKEN` set on purpose beats the `GITHUB_TOKEN` GitHub Actions provides), then
`gh auth token` when the GitHub CLI is on PATH (for the API's host, so
GitHub Enterprise works too). It is wrapped in a pydantic `SecretStr` at once and only ever
unwrapped to build the `Authorization` header; no message, log line or repr contains it.
`GITHUB_API_URL` (set by GitHub Actions, GHES: `https://HOST/api/v3`) gives the base URL; a plain
`http://127.0.0.1:PORT` is accepted for tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from urllib.parse import urlsplit

from pydantic import SecretStr

from jr2_core.errors import ConfigError

DEFAULT_API_URL = "https://api.github.com"


def api_url(env: Mapping[str, str] | None = None) -> str:
    """The REST base URL, without a trailing slash."""
    env = os.environ if env is None else env
    url = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"GITHUB_API_URL must be an http(s) URL, not {url!r}")
    return url


def _gh_token(base_url: str) -> str | None:
    gh = shutil.which("gh")
    if gh is None:
        return None
    host = urlsplit(base_url).hostname or "github.com"
    host = "github.com" if host == "api.github.com" else host
    try:
        res = subprocess.run([gh, "auth", "token", "--hostname", host], capture_output=True,
                             text=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    token = res.stdout.strip()
    return token if res.returncode == 0 and token else None


def resolve_token(base_url: str, env: Mapping[str, str] | None = None) -> SecretStr:
    """The token, as a `SecretStr`; a one-line `ConfigError` when there is none."""
    env = os.environ if env is None else env
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        value = (env.get(name) or "").strip()
        if value:
            return SecretStr(value)
    token = _gh_token(base_url)
    if token:
        return SecretStr(token)
    raise ConfigError("github: no token: set GH_TOKEN or GITHUB_TOKEN, or log in with "
                      "`gh auth login` (the token needs Issues: read, and read & write to claim)")
