"""Helpers shared by the jr2-gitlab tests (a module name no other test tree uses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from jr2_gitlab.client import GitLabClient
from jr2_gitlab.config import GitLabConfig
from jr2_gitlab.tracker import GitLabTracker
from jr2_sources import SourceEnv
from jr2_sources.kit.retry import RetryPolicy

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "glpat-fake-token-0123456789"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def make_client(base: str, *, sleeps: list[float] | None = None,
                budget: float = 30.0) -> GitLabClient:
    def sleep(s: float) -> None:
        if sleeps is not None:
            sleeps.append(s)

    return GitLabClient(base.rstrip("/") + "/api/v4", SecretStr(TOKEN), label="gitlab:g/p",
                        write_spacing=0.0, sleep=sleep,
                        policy=RetryPolicy(budget=budget, backoff=0.01, secondary_wait=0.01))


def make_adapter(base: str, *, project: str = "g/p", read_only: bool = False,
                 sleeps: list[float] | None = None, **options: Any) -> GitLabTracker:
    config = GitLabConfig(target=project, **options)
    client = make_client(base, sleeps=sleeps)
    client.label = f"gitlab:{project}"
    return GitLabTracker(config, SourceEnv(state_dir=Path("."), read_only=read_only),
                         client=client)
