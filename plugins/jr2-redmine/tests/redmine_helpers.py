"""Helpers of the real-server tests: a project of its own per test, people's actions, trackers.

The admin seeds (projects, issues, relations); `alice` (a Manager of each project) is the person
who acts on issues; `jr2bot` (a Developer, with "Edit own notes") is jr2's account.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from pydantic import SecretStr

from jr2_redmine import RedmineConfig, RedmineTracker
from jr2_redmine.client import RedmineClient
from jr2_redmine.server import Instance
from jr2_sources import SourceEnv

_counter = itertools.count()
_lock = threading.Lock()


class Api:
    """Plain REST calls as one Redmine user (its API key), failing loudly."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.headers.update({"X-Redmine-API-Key": key,
                                     "Content-Type": "application/json"})

    def call(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201,
                                                                                     204)) -> Any:
        resp = self.session.request(method, self.url + path, json=body, timeout=60)
        if resp.status_code not in ok:
            raise AssertionError(f"{method} {path}: HTTP {resp.status_code} {resp.text[:300]}")
        return resp.json() if resp.content else None


@dataclass
class Project:
    """A fresh Redmine project of one test."""

    redmine: Instance
    identifier: str
    id: int
    admin: Api
    person: Api
    bot: Api
    ids: dict[str, int] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return f"redmine:{self.redmine.url}"

    def issue(self, subject: str, **fields: Any) -> int:
        data = self.admin.call("POST", "/issues.json", {"issue": {
            "project_id": self.id, "subject": subject, **fields}})
        n = int(data["issue"]["id"])
        self.ids[subject] = n
        return n

    def seed(self, subjects: list[str], blocks: Sequence[tuple[int, int]] = ()) -> list[int]:
        """Many issues (and `blocks` relations between them, as indices into `subjects`) in one
        request of the throwaway server (`POST /jr2/seed.json`), instead of one each."""
        data = self.admin.call("POST", "/jr2/seed.json", {
            "project_id": self.id, "issues": [{"subject": s} for s in subjects],
            "relations": [[a, b, "blocks"] for a, b in blocks]})
        nums = [int(n) for n in data["ids"]]
        self.ids.update(zip(subjects, nums, strict=True))
        return nums

    def block(self, blocker: int, blocked: int, kind: str = "blocks") -> None:
        self.admin.call("POST", f"/issues/{blocker}/relations.json",
                        {"relation": {"issue_to_id": blocked, "relation_type": kind}})

    def close(self, n: int, who: Api | None = None) -> None:
        (who or self.person).call("PUT", f"/issues/{n}.json", {"issue": {"status_id": 5}})

    def get(self, n: int, include: str = "journals") -> dict[str, Any]:
        data = self.admin.call("GET", f"/issues/{n}.json?include={include}")
        return dict(data["issue"])

    def journals(self) -> list[dict[str, Any]]:
        """Every journal of the project's issues (the admin sees them all)."""
        out: list[dict[str, Any]] = []
        for n in self.all_issues():
            out.extend(self.get(n)["journals"])
        return out

    def all_issues(self) -> list[int]:
        data = self.admin.call("GET", f"/issues.json?project_id={self.id}&status_id=*&limit=100")
        return sorted(int(i["id"]) for i in data["issues"])

    def tracker(self, *, read_only: bool = False, lease_state: Path | None = None,
                **options: Any) -> RedmineTracker:
        config = RedmineConfig(target=self.redmine.url, project=self.identifier, **options)
        client = RedmineClient(self.redmine.url, SecretStr(self.redmine.bot_key),
                               label=f"redmine:{self.redmine.url}", write_spacing=0.0)
        env = SourceEnv(state_dir=lease_state or Path(os.devnull), read_only=read_only)
        return RedmineTracker(config, env, client=client)

    def jr2(self, *args: str, cwd: Path | None = None, timeout: float = 120,
            key: str | None = None, marker_key: str | None = None
            ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "REDMINE_API_KEY": key or self.redmine.bot_key}
        if marker_key is not None:
            env["JR2_MARKER_KEY"] = marker_key
        return subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                              text=True, timeout=timeout, env=env, cwd=cwd)


def new_project(redmine: Instance) -> Project:
    """A project with a unique identifier; jr2bot a Developer and alice a Manager in it."""
    admin = Api(redmine.url, redmine.admin_key)
    with _lock:
        ident = f"t{uuid.uuid4().hex[:10]}{next(_counter)}"
    data = admin.call("POST", "/projects.json", {"project": {
        "name": ident, "identifier": ident, "is_public": False,
        "enabled_module_names": ["issue_tracking"]}})
    pid = int(data["project"]["id"])
    for user, role in ((redmine.bot_id, redmine.developer_role),
                       (redmine.person_id, redmine.manager_role)):
        admin.call("POST", f"/projects/{pid}/memberships.json",
                   {"membership": {"user_id": user, "role_ids": [role]}})
    return Project(redmine, ident, pid, admin, Api(redmine.url, redmine.person_key),
                   Api(redmine.url, redmine.bot_key))
