"""jr2-redmine passes jr2's conformance kit against a real Redmine: blockers as `blocks`
relations (a cycle, which Redmine refuses as relations, and the missing blocker are written in
descriptions), children as subtasks, each target a fresh project."""

from __future__ import annotations

from typing import Any

import pytest
from redmine_helpers import Project, new_project

from jr2_redmine.server import Instance
from jr2_sources.testing import Forged, RefItem, SourceConformance, Target

NOWHERE = 9_999_999  # no such issue


class Stranger:
    """alice, a Manager of the project but not an account the pool trusts: she writes notes
    and sets the marks field."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.account = str(project.redmine.person_id)  # journals name authors by id

    def post(self, item_id: str, marker: Forged) -> None:
        n = int(item_id.lstrip("#"))
        fields: dict[str, Any] = {"notes": marker.body}
        if marker.kind in ("claim", "failed"):
            fields["custom_fields"] = [{"id": self.project.redmine.field_id,
                                        "value": "jr2:claimed"}]
        self.project.person.call("PUT", f"/issues/{n}.json", {"issue": fields})


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
        target = Target(adapter, dict(ids), lambda: sum(c.stats.writes for c in clients),
                        stranger=Stranger(p))
        target.project = p  # type: ignore[attr-defined]
        target.clients = clients  # type: ignore[attr-defined]
        return target
