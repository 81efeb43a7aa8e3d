"""The environment a `jr2 work` command starts with: jr2's own, without jr2's credentials.

Design note: a worker is often a coding agent running code it wrote; it should not hold the
tracker token jr2 claims with, a GitHub App's private key or the webhook secret unless the user
says so. So every variable whose name says it is a secret (the names `redact.py` scrubs from
logs: `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*_PAT`, `*API_KEY*`, `*PRIVATE_KEY*`), and every
variable jr2 was told to read a credential from (`--webhook-secret-env`, a source's `token_env`),
is left out; `--pass-env NAME` (repeatable) passes one of them on as it is. The rest of the
environment (PATH, HOME, proxies, ...) is inherited, as `xargs` and GNU `parallel` do.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from jr2_sources.kit.redact import is_secret_name


def worker_env(pass_env: Iterable[str] = (), credentials: Iterable[str] = (),
               env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: `os.environ`) without secret-named variables and `credentials`, except
    the names in `pass_env`."""
    env = os.environ if env is None else env
    keep = set(pass_env)
    held = set(credentials)
    return {k: v for k, v in env.items()
            if k in keep or not (is_secret_name(k) or k in held)}
