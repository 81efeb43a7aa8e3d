"""jr2-redmine passes jr2's conformance kit against a real Redmine: blockers as `blocks`
relations (a cycle, which Redmine refuses as relations, and the missing blocker are written in
descriptions), children as subtasks, each target a fresh project."""

from __future__ import annotations

from typing import Any

import pytest
from redmine_helpers import new_project

from jr2_redmine.server import Instance
from jr2_sources.testing import RefItem, SourceConformance, Target

NOWHERE = 9_999_999  # no such issue


class TestRedmineConformance(SourceConformance):
    lease = 5.0  # whole seconds (`created_on`, `Date`), and a claim is several requests

    @pytest.fixture(autouse=True)
    def _redmine(self, redmine: Instance) -> None:
        self.redmine = redmine

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        if state is None:
            p = new_project(self.redmine)
            nums = dict(zip([it.key for it in items], p.seed([it.title for it in items]),
                            strict=True))  # one request; relations below, through REST
            for it in items:
                if it.parent in nums:
                    p.admin.call("PUT", f"/issues/{nums[it.key]}.json",
                                 {"issue": {"parent_issue_id": nums[it.parent]}})
            for it in items:
                written = []
                for k in it.needs:
                    if k not in nums:
                        written.append(NOWHERE)
                        continue
                    try:
                        p.block(nums[k], nums[it.key])
                    except AssertionError as exc:  # Redmine refuses a cycle of relations
                        assert "circular dependency" in str(exc)
                        written.append(nums[k])
                if written:
                    text = "\n".join(f"Depends on #{n}" for n in written)
                    p.admin.call("PUT", f"/issues/{nums[it.key]}.json",
                                 {"issue": {"description": text}})
            for it in items:
                if it.done:
                    p.close(nums[it.key], p.admin)
            clients: list[Any] = []
            ids = {k: f"#{n}" for k, n in nums.items()} | {"MISSING": f"#{NOWHERE}"}
        else:
            p, clients, ids = state.project, state.clients, state.ids
        adapter = p.tracker(read_only=read_only)
        clients.append(adapter.client)
        target = Target(adapter, dict(ids), lambda: sum(c.stats.writes for c in clients))
        target.project = p  # type: ignore[attr-defined]
        target.clients = clients  # type: ignore[attr-defined]
        return target
