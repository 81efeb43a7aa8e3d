"""Helpers shared by the jr2-linear tests (a module name no other test tree uses)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from pathlib import Path
from typing import Any

from fake_linear import KEY, FakeLinear
from pydantic import SecretStr

from jr2_linear.client import LinearClient
from jr2_linear.config import LinearConfig
from jr2_linear.tracker import LinearTracker
from jr2_sources import SourceEnv
from jr2_sources.kit.retry import RetryPolicy

SECRET = "lin_wh_test_secret_0123456789"


def make_client(fake: FakeLinear, *, key: str = KEY, sleeps: list[float] | None = None,
                budget: float = 30.0) -> LinearClient:
    def sleep(s: float) -> None:
        if sleeps is not None:
            sleeps.append(s)
        time.sleep(min(s, 0.01))

    return LinearClient(fake.url, SecretStr(key), label="linear:ENG", sleep=sleep,
                        policy=RetryPolicy(budget=budget, backoff=0.01, secondary_wait=0.01))


def make_adapter(fake: FakeLinear, *, team: str = "ENG", read_only: bool = False,
                 key: str = KEY, sleeps: list[float] | None = None,
                 **options: Any) -> LinearTracker:
    config = LinearConfig(target=team, **options)
    return LinearTracker(config, SourceEnv(state_dir=Path("."), read_only=read_only),
                         client=make_client(fake, key=key, sleeps=sleeps))


def delivery(payload: dict[str, Any], *, secret: str = SECRET, at: float | None = None,
             delivery_id: str | None = None) -> tuple[dict[str, str], bytes]:
    """A webhook delivery as Linear sends one: signed body, `Linear-Delivery`, timestamp."""
    body = json.dumps({**payload, "webhookTimestamp": int((at or time.time()) * 1000)}).encode()
    sig = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"Linear-Signature": sig, "Linear-Delivery": delivery_id or str(uuid.uuid4()),
            "Linear-Event": str(payload.get("type")), "Content-Type": "application/json"}, body
