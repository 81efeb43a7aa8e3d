"""jr2-gitlab passes jr2's conformance kit over the fake GitLab: blockers as issue links
(`is_blocked_by`), the missing one written in a description, children in the GraphQL work item
hierarchy (read with `detail`, the default)."""

from __future__ import annotations

from typing import Any

from fake_gitlab import FakeGitLab
from gitlab_helpers import make_adapter

from jr2_sources.testing import Forged, RefItem, SourceConformance, Target


class Stranger:
    """A GitLab user the pool does not trust (no member of the project): it comments; a
    Reporter (triage) labels."""

    account = "mallory"

    def __init__(self, fake: FakeGitLab) -> None:
        self.fake = fake

    def post(self, item_id: str, marker: Forged) -> None:
        iid = int(item_id.rsplit("#", 1)[1])
        self.fake.add_note("g/p", iid, marker.body, self.account)
        if marker.kind in ("claim", "failed"):
            labels = self.fake.issue("g/p", iid)["labels"]
            self.fake.set_labels("g/p", iid, [*labels, "jr2:claimed"], by=self.account)


class TestGitLabConformance(SourceConformance):
    lease = 2.0  # the `Date` header has whole seconds
    supports_children = True  # read from the GraphQL hierarchy widget in detail mode

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        if state is not None:
            fake: FakeGitLab = state.fake
        else:
            fake = FakeGitLab().start()
            iids = {it.key: fake.add_issue("g/p", it.title) for it in items}
            for it in items:
                for k in it.needs:
                    if k in iids:
                        fake.block(("g/p", iids[k]), ("g/p", iids[it.key]))
                if it.parent in iids:
                    fake.set_parent(("g/p", iids[it.key]), ("g/p", iids[it.parent]))
                if "MISSING" in it.needs:
                    fake.issue("g/p", iids[it.key])["description"] = "Depends on #999"
            for it in items:
                if it.done:
                    fake.close_issue("g/p", iids[it.key])
            self.ids = {k: f"g/p#{n}" for k, n in iids.items()} | {"MISSING": "g/p#999"}
        target = Target(make_adapter(fake.url, read_only=read_only), dict(self.ids),
                        fake.writes, close=(lambda: None) if state is not None else fake.stop,
                        stranger=Stranger(fake))
        target.fake = fake  # type: ignore[attr-defined]
        return target


class TestGitLabConformanceCheapLinks(TestGitLabConformance):
    """The same promises with `--no-detail` (links read only for blockers, no children)."""

    supports_children = False  # --no-detail does not read the work item hierarchy

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        target = super().make_target(items, read_only=read_only, state=state)
        fake = target.fake  # type: ignore[attr-defined]
        target.tracker = make_adapter(fake.url, read_only=read_only, detail=False)
        return target
