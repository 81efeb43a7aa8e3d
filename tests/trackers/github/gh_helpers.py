"""Helpers of the GitHub source tests: a client and adapters on a base URL, fixture files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from jr2_sources.kit.retry import RetryPolicy
from jr2_sources.registry import SourceEnv
from jr2_sources.trackers.github.client import GitHubClient
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.tracker import GitHubTracker

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "github"
TOKEN = "ghp_TESTSECRETtoken0123456789"
FAST = RetryPolicy(budget=2.0, backoff=0.001, max_backoff=0.01, secondary_wait=0.01)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def make_client(base: str, *, sleeps: list[float] | None = None,
                policy: RetryPolicy = FAST, write_spacing: float = 0.0) -> GitHubClient:
    record = sleeps.append if sleeps is not None else (lambda s: None)
    return GitHubClient(base, SecretStr(TOKEN), label="github:o/r", write_spacing=write_spacing,
                        policy=policy, timeout=(2.0, 1.0), sleep=record)


def make_adapter(base: str, target: str = "o/r", *, read_only: bool = False,
                 client: GitHubClient | None = None, state: Path | None = None,
                 **options: Any) -> GitHubTracker:
    options.setdefault("claim_spread", 0.001)  # (almost) no random pause after a lost race
    config = GitHubConfig(target=target, write_spacing=0.001, **options)
    client = client or make_client(base)
    client.label = f"github:{target}"
    env = SourceEnv(state_dir=state or Path("/nonexistent-state"), read_only=read_only)
    return GitHubTracker(config, env, client=client)
