"""The GitHub source passes the conformance kit, over the fake GitHub, two ways:
native dependencies read in detail, and body-text blockers in pool mode."""

from __future__ import annotations

from typing import Any

from gh_helpers import make_adapter

from jr2_sources.testing import Forged, RefItem, SourceConformance, Target
from jr2_sources.testing.fakes.github_server import FakeGitHub

WRITES = ("POST", "PATCH", "PUT", "DELETE")


class Stranger:
    """A GitHub account the pool does not trust: it comments; a triager labels."""

    account = "mallory"

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake

    def post(self, item_id: str, marker: Forged) -> None:
        n = int(item_id.rsplit("#", 1)[1])
        self.fake.add_comment("o/r", n, marker.body, user=self.account)
        if marker.kind in ("claim", "failed"):
            self.fake.add_label_by("o/r", n, "jr2:claimed", user=self.account)


class _GitHubKit(SourceConformance):
    lease = 3.0  # GitHub's timestamps have whole seconds: a 1s lease would be too coarse
    native = False

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        if state is not None:
            fake: FakeGitHub = state.fake
        else:
            fake = FakeGitHub().start()
            numbers = {it.key: fake.add_issue("o/r", it.title) for it in items}
            for it in items:
                n = numbers[it.key]
                found = [numbers[k] for k in it.needs if k in numbers]
                if self.native:
                    for b in found:
                        fake.add_dependency("o/r", n, b)
                    body = "Depends on #999" if "MISSING" in it.needs else ""
                else:
                    body = "Depends on " + ", ".join(
                        f"#{numbers.get(k, 999)}" for k in it.needs) if it.needs else ""
                fake.issue("o/r", n).body = body
                if it.parent is not None:
                    fake.add_sub_issue("o/r", numbers[it.parent], n)
            for it in items:
                if it.done:
                    fake.close_issue("o/r", numbers[it.key])
            self.ids = {k: f"o/r#{n}" for k, n in numbers.items()} | {"MISSING": "o/r#999"}
        adapter = make_adapter(fake.url, read_only=read_only,
                               detail=True if self.native else None)
        target = Target(adapter, dict(self.ids),
                        lambda: sum(1 for e in fake.requests() if e["method"] in WRITES),
                        close=(lambda: None) if state is not None else fake.stop,
                        stranger=Stranger(fake))
        target.fake = fake  # type: ignore[attr-defined]
        return target


class TestGitHubConformanceNativeDependencies(_GitHubKit):
    native = True


class TestGitHubConformanceBodyText(_GitHubKit):
    native = False
