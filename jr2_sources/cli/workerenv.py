"""The environment a `jr2 work` command starts with: jr2's own, without jr2's credentials.

Design note: a worker is often a coding agent running code it wrote; it should not hold the
tracker token jr2 claims with, a GitHub App's private key, the webhook secret or any other
credential the environment carries unless the user says so. So these are left out:

* every variable whose name says it is a secret (the names `redact.py` scrubs from logs:
  `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*_PAT`, `*API_KEY*`, `*PRIVATE_KEY*`) or ends `_AUTH`
  (npm's `NPM_CONFIG__AUTH`, ...);
* every variable whose value holds a URL with a password (`DATABASE_URL=postgres://u:p@db`,
  `HTTPS_PROXY=http://user:pass@proxy:3128`);
* every variable jr2 was told to read a credential from (`--webhook-secret-env`, a source's
  `token_env`).

`--pass-env NAME` (repeatable) passes one of them on as it is; `jr2 work` names the ones it left
out in one line. The rest of the environment (PATH, HOME, a proxy without a password, ...) is
inherited, as `xargs` and GNU `parallel` do.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from jr2_sources.kit.redact import is_credential


def worker_env(pass_env: Iterable[str] = (), credentials: Iterable[str] = (),
               env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: `os.environ`) without its credentials (see the module note) and
    `credentials`, except the names in `pass_env`."""
    env = os.environ if env is None else env
    out = set(withheld(pass_env, credentials, env))
    return {k: v for k, v in env.items() if k not in out}


def withheld(pass_env: Iterable[str] = (), credentials: Iterable[str] = (),
             env: Mapping[str, str] | None = None) -> list[str]:
    """The names `worker_env` leaves out of `env`, sorted."""
    env = os.environ if env is None else env
    keep = set(pass_env)
    held = set(credentials)
    return sorted(k for k, v in env.items()
                  if k not in keep and (k in held or is_credential(k, v)))
