"""jr2-linear passes jr2's conformance kit over the fake Linear: blockers as `blocks`
relations, children as sub-issues, the missing blocker a trashed issue."""

from __future__ import annotations

from typing import Any

from fake_linear import FakeLinear
from linear_helpers import make_adapter

from jr2_sources.testing import Forged, RefItem, SourceConformance, Target


class Stranger:
    """A Linear user the pool does not trust: it creates an attachment whose metadata is a
    jr2 marker (markers are attachments on Linear: no label to set)."""

    account = "x@example.com"  # u-stranger's email: a marker's author

    def __init__(self, fake: FakeLinear) -> None:
        self.fake = fake

    def post(self, item_id: str, marker: Forged) -> None:
        self.fake.add_marker(item_id, {"jr2": marker.kind, **marker.fields})


class TestLinearConformance(SourceConformance):
    lease = 2.0  # the `Date` header has whole seconds

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        if state is not None:
            fake: FakeLinear = state.fake
        else:
            fake = FakeLinear().start()
            ids = {it.key: fake.add_issue(it.title) for it in items}
            ids["MISSING"] = fake.add_issue("Deleted since")
            for it in items:
                for k in it.needs:
                    fake.relate(ids[k], ids[it.key])
                if it.parent:
                    fake.set_parent(ids[it.key], ids[it.parent])
            fake.trash(ids["MISSING"])
            for it in items:
                if it.done:
                    fake.move(ids[it.key], "completed")
            self.ids = ids
        target = Target(make_adapter(fake, read_only=read_only), dict(self.ids), fake.writes,
                        close=(lambda: None) if state is not None else fake.stop,
                        stranger=Stranger(fake))
        target.fake = fake  # type: ignore[attr-defined]
        return target
