"""The local source passes the conformance kit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jr2_sources.registry import SourceEnv
from jr2_sources.testing import MISSING, RefItem, SourceConformance, Target
from jr2_sources.trackers.local.source import LocalConfig, LocalTracker


def _toml(items: tuple[RefItem, ...]) -> str:
    out = []
    for i in items:
        out += ["[[items]]", f'id = "{i.key}"', f'title = "{i.title}"']
        if i.needs:
            out.append("needs = [" + ", ".join(f'"{n}"' for n in i.needs) + "]")
        if i.parent:
            out.append(f'parent = "{i.parent}"')
        if i.done:
            out.append('status = "done"')
    return "\n".join(out) + "\n"


class TestLocalConformance(SourceConformance):
    @pytest.fixture(autouse=True)
    def _dir(self, tmp_path: Path) -> None:
        self.dir = tmp_path

    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        path = self.dir / "backlog.toml"
        if state is None:
            path.write_text(_toml(items))
        st = self.dir / ".jr2"
        adapter = LocalTracker(LocalConfig(target=str(path)), SourceEnv(st, read_only=read_only))

        def writes() -> int:
            db = next((st / "local").glob("*.sqlite"), None) if (st / "local").exists() else None
            return 0 if db is None else db.stat().st_mtime_ns + sum(
                p.stat().st_size for p in (st / "local").iterdir())

        ids = {i.key: i.key for i in items} | {MISSING: "MISSING"}
        return Target(adapter, ids, writes, adapter.close)
