"""Random ids and tokens, made as `secrets` makes them (from `os.urandom`), without importing
`secrets`: that brings hmac, hashlib (OpenSSL's) and random, about 2.5 ms of every `jr2 work`
start for one run id and one host token (docs/performance.md §6).
"""

from __future__ import annotations

import base64
import os


def token_hex(nbytes: int) -> str:
    """`secrets.token_hex`: `nbytes` random bytes as hex."""
    return os.urandom(nbytes).hex()


def token_urlsafe(nbytes: int) -> str:
    """`secrets.token_urlsafe`: `nbytes` random bytes, URL-safe Base64 without padding."""
    return base64.urlsafe_b64encode(os.urandom(nbytes)).rstrip(b"=").decode("ascii")
