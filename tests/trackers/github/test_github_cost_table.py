"""The GitHub guide's cost table is the bench's output: the requests of each phase of one item
(counted here, in process, against the fake GitHub) and the requests per worked issue of
`jr2 work github: --cap 4 -- true` that `bench/github_work_cost.py` recorded in
bench/results.json (`python bench/run_all.py --only github_work_cost`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "guides" / "github.md"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("github_work_cost",
                                                  ROOT / "bench" / "github_work_cost.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def guide_rows() -> set[str]:
    return {line.strip() for line in GUIDE.read_text().splitlines() if line.startswith("| ")}


def test_the_guide_shows_the_requests_of_each_phase_as_counted() -> None:
    b = bench()
    costs = b.phase_costs()
    assert len(costs["claim, won (no comment yet)"]) == 5  # the look lists no empty thread
    assert costs["settle, done"] == ["PATCH issue", "PATCH comment"]  # the watch's reads serve
    missing = [row for row in b.phase_rows(costs) if row not in guide_rows()]
    assert not missing, missing


def test_the_guide_shows_the_recorded_requests_per_worked_issue_within_the_target() -> None:
    b = bench()
    recorded = json.loads((ROOT / "bench" / "results.json").read_text())["github_work_cost"]
    rows = recorded["result"]
    sizes = {r["n"] for r in rows if r["summaries"]}
    assert {100, 1000} <= sizes
    assert all(r["per_issue"] <= 11 for r in rows if r["summaries"]), rows
    missing = [row for row in b.table_rows(rows) if row not in guide_rows()]
    assert not missing, missing
