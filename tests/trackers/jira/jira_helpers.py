"""Helpers of the Jira source tests: clients and adapters on a base URL, fixture files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.registry import SourceEnv
from jr2_sources.trackers.jira.client import JiraClient
from jr2_sources.trackers.jira.config import JiraAuth, JiraConfig
from jr2_sources.trackers.jira.tracker import JiraTracker

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "jira"
TOKEN = "ATATT3xFfGF0-TESTSECRET-token-0123456789"
EMAIL = "bot@example.com"
FAST = RetryPolicy(budget=30.0, backoff=0.001, max_backoff=0.01, secondary_wait=0.01)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def make_client(base: str, *, sleeps: list[float] | None = None, policy: RetryPolicy = FAST,
                read_only: bool = False, pat: bool = False) -> JiraClient:
    record = sleeps.append if sleeps is not None else (lambda s: None)
    auth = JiraAuth(SecretStr(TOKEN)) if pat else JiraAuth(SecretStr(TOKEN), EMAIL)
    return JiraClient(base, auth, label=f"jira:{base}", write_spacing=0.0, policy=policy,
                      timeout=(2.0, 5.0), sleep=record, read_only=read_only)


def make_adapter(base: str, *, jql: str = "project = ENG", read_only: bool = False,
                 client: JiraClient | None = None, **options: Any) -> JiraTracker:
    config = JiraConfig(target=base, jql=jql, write_spacing=0.001, **options)
    client = client or make_client(base, read_only=read_only)
    env = SourceEnv(state_dir=Path("/nonexistent-state"), read_only=read_only)
    return JiraTracker(config, env, client=client)
