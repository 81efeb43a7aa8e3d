"""The environment a `jr2 work` command starts with: jr2's own, without jr2's credentials.

Left out: every variable whose name says it is a secret (the names `redact.py` scrubs, or ending
`_AUTH`), whose value holds a URL with a password, or that jr2 was told to read a credential from
(`--webhook-secret-env`, a source's `token_env`). `--pass-env NAME` passes one on; `jr2 work`
names the ones it left out in one line. The rest is inherited, as `xargs` and GNU `parallel` do.
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
