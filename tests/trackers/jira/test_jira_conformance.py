"""The Jira source passes the conformance kit against the fake Jira (Cloud and Data Center)."""

from __future__ import annotations

from typing import Any

from jira_helpers import make_adapter

from jr2_sources.testing import Forged, RefItem, SourceConformance, Target
from jr2_sources.testing.fakes.jira_server import FakeJira

WRITES = ("PUT", "DELETE", "POST")


class Stranger:
    """A Jira user the pool does not trust. On Data Center the marker is a comment body; on
    Cloud, the `jr2` property a user may set on their own comment ("Set comment property")."""

    def __init__(self, fake: FakeJira) -> None:
        self.fake = fake
        self.account = "acc-mallory" if fake.cloud else "mallory"

    def post(self, item_id: str, marker: Forged) -> None:
        if not self.fake.cloud:
            self.fake.add_comment(item_id, marker.body, "mallory")
        else:
            cid = self.fake.add_comment(item_id, "jr2: forged", "mallory")
            with self.fake.lock:
                [c] = [c for c in self.fake.issue(item_id).comments if c["id"] == cid]
                c["properties"] = [{"key": "jr2", "value": {"kind": marker.kind,
                                                            "fields": marker.fields}}]
        if marker.kind in ("claim", "failed"):
            with self.fake.lock:
                it = self.fake.issue(item_id)
                it.labels.append("jr2:claimed")
                it.updated = self.fake.now()


def _writes(fake: FakeJira) -> int:
    return sum(1 for e in fake.requests() if e["method"] in WRITES
               and not e["path"].endswith(("/search", "/search/jql")))


class _JiraKit(SourceConformance):
    lease = 2.0  # the `Date` header has whole seconds: leave room for its truncation
    cloud = True

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        if state is not None:
            fake: FakeJira = state.fake
        else:
            fake = FakeJira(cloud=self.cloud).start()
            keys: dict[str, str] = {}
            for it in items:
                parent = keys.get(it.parent) if it.parent else None
                keys[it.key] = fake.add_issue(it.title, labels=["agent"], parent=parent)
            keys["MISSING"] = "ENG-999"  # a link to an issue the site does not have
            for it in items:
                for need in it.needs:
                    fake.add_link(keys[need], keys[it.key])
                if it.done:
                    fake.set_status(keys[it.key], "Done")
            self.ids = keys
        adapter = make_adapter(fake.url, jql="project = ENG AND labels = agent",
                               read_only=read_only, on_success_transition="Done")
        target = Target(adapter, dict(self.ids), lambda: _writes(fake),
                        close=(lambda: None) if state is not None else fake.stop,
                        stranger=Stranger(fake))
        target.fake = fake  # type: ignore[attr-defined]
        return target


class TestJiraConformanceCloud(_JiraKit):
    cloud = True


class TestJiraConformanceDataCenter(_JiraKit):
    cloud = False
