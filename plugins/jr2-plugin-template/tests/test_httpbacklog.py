"""The template plugin: it passes jr2's conformance kit and works through the jr2 CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from jr2_httpbacklog import HttpBacklogConfig, HttpBacklogTracker
from jr2_httpbacklog.server import Tracker, serve
from jr2_sources import SourceEnv
from jr2_sources.testing import Forged, RefItem, SourceConformance, Target


class Stranger:
    """Someone else with write access to the backlog (their own token): claims an item, or
    claims it and records it failed."""

    account = "mallory"

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        tracker.accounts["tok-mallory"] = self.account

    def post(self, item_id: str, marker: Forged) -> None:
        holder, lease = marker.fields.get("holder", "evil@x"), marker.fields.get("lease", 86400)
        path = f"/items/{item_id}"
        self.tracker.handle("POST", f"{path}/claim", {"holder": holder, "lease": lease},
                            "tok-mallory")
        if marker.kind == "failed":
            self.tracker.handle("POST", f"{path}/record", {
                "holder": holder, "status": "failed",
                "reason": marker.fields.get("reason")}, "tok-mallory")


def _items(refs: tuple[RefItem, ...]) -> list[dict[str, Any]]:
    return [{"id": r.key, "title": r.title, "needs": list(r.needs), "parent": r.parent,
             "status": "done" if r.done else "open"} for r in refs]


class TestHttpBacklogConformance(SourceConformance):
    def make_target(self, items: tuple[RefItem, ...], *, read_only: bool = False,
                    state: Any = None) -> Target:
        if state is None:
            tracker = Tracker(_items(items))
            server = serve(tracker)
        else:
            tracker, server = state.backlog, state.server
        url = f"http://127.0.0.1:{server.server_address[1]}"
        adapter = HttpBacklogTracker(HttpBacklogConfig(target=url),
                                     SourceEnv(state_dir=None, read_only=read_only))  # type: ignore[arg-type]
        ids = {r.key: r.key for r in items} | {"MISSING": "MISSING"}
        target = Target(adapter, ids, lambda: tracker.writes,
                        server.shutdown if state is None else (lambda: None),
                        stranger=Stranger(tracker))
        target.backlog = tracker  # type: ignore[attr-defined]
        target.server = server  # type: ignore[attr-defined]
        return target


@pytest.fixture
def tracker_url() -> Iterator[str]:
    tracker = Tracker([{"id": "A", "title": "first"},
                       {"id": "B", "title": "second", "needs": ["A"]}])
    server = serve(tracker)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def jr2(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                          text=True, timeout=60)


def test_jr2_plugins_lists_the_template_with_its_version() -> None:
    infos = json.loads(jr2("plugins", "--json").stdout)
    mine = [i for i in infos if i["distribution"] == "jr2-plugin-template"]
    assert mine and mine[0]["version"] == "0.1.0" and mine[0]["kinds"] == ["httpbacklog"]
    assert mine[0]["error"] is None


def test_jr2_ready_works_through_the_plugin(tracker_url: str) -> None:
    res = jr2("ready", f"httpbacklog:{tracker_url}", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert [e["id"] for e in data["ready"]] == ["A"]
    assert data["blocked"][0]["reasons"] == [{"kind": "open_blocker", "ref": "A",
                                              "held_by": None}]


def test_jr2_work_works_through_the_plugin(tracker_url: str, tmp_path: Any) -> None:
    res = subprocess.run([sys.executable, "-m", "jr2_core", "work", f"httpbacklog:{tracker_url}",
                          "--state", str(tmp_path), "--", "true"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert json.loads(jr2("ready", f"httpbacklog:{tracker_url}", "--json").stdout)[
        "counts"]["done"] == 2


def test_a_tracker_without_a_dashboard_refuses_it_in_one_line(tracker_url: str,
                                                              tmp_path: Any) -> None:
    """A kind that does not implement `Tracker.dashboard` refuses `jr2 dashboard` (and `jr2
    work --dashboard`) at start, in one line, exit 2."""
    for args in (["dashboard", f"httpbacklog:{tracker_url}", "--issue", "1"],
                 ["work", f"httpbacklog:{tracker_url}", "--dashboard", "1", "--", "true"]):
        res = subprocess.run([sys.executable, "-m", "jr2_core", *args], capture_output=True,
                             text=True, timeout=60, cwd=tmp_path)
        assert res.returncode == 2 and "not supported" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
