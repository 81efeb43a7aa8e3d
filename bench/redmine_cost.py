"""What a Redmine pool (the jr2-redmine plugin) costs, in requests, against a real Redmine.

    python bench/redmine_cost.py [--issues 250] [--json]

Starts a throwaway Redmine (`jr2_redmine.server`, the Debian packages), seeds a project with N
open issues (a `blocks` relation every 10th, a subtask every 25th), and counts the requests of
one pool's operations through the plugin's own client: a first full reading, the same reading
again unchanged (conditional: how many of its answers were 304s), an unchanged delta, the first
sweep and an unchanged one (a sweep also asks the relation list), a sweep after a relation was
added (which moves no `updated_on`), a claim, a
renewal, a watch of the held issue, a settle (done) right after it, each by method; `once`
is what a pool asks once (the key's own user, the closed status).
It also prints the milliseconds of the first and of the unchanged reading (the server still
renders a 304's body to compare ETags, so a 304 saves bytes, not the server's work).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "plugins" / "jr2-redmine" / "tests")]

from redmine_helpers import new_project  # noqa: E402

from jr2_core import Outcome  # noqa: E402
from jr2_redmine import server  # noqa: E402
from jr2_sources.capabilities.deltas.sincewindow import SWEEP_EVERY  # noqa: E402


class Counted:
    """Requests (and 304s) a client sends between two readings of it."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.cached = 0
        call = client.call

        def counting(*a: Any, **k: Any) -> Any:
            resp = call(*a, **k)
            self.cached += bool(resp.cached)
            return resp

        client.call = counting
        self.mark()

    def mark(self) -> None:
        self._requests, self._writes, self._cached = (self.client.stats.requests,
                                                     self.client.stats.writes, self.cached)
        self._methods = dict(self.client.stats.by_method)

    def take(self) -> dict[str, int]:
        out = {"requests": self.client.stats.requests - self._requests,
               "writes": self.client.stats.writes - self._writes,
               "not_modified": self.cached - self._cached}
        for method, n in sorted(self.client.stats.by_method.items()):
            if n - self._methods.get(method, 0):
                out[method] = n - self._methods.get(method, 0)
        self.mark()
        return out


def server_overlap() -> float:
    """How far back a sweep reaches: the window's overlap and the time between sweeps."""
    from jr2_sources.capabilities.deltas.sincewindow import DEFAULT_OVERLAP

    return DEFAULT_OVERLAP + SWEEP_EVERY


def run(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="jr2-redmine-bench-") as tmp:
        inst, proc = server.launch(Path(tmp) / "redmine")
        try:
            p = new_project(inst)
            nums = []
            for i in range(n):
                parent = nums[i - 1] if i % 25 == 1 else None
                nums.append(p.issue(f"issue {i}", **({"parent_issue_id": parent}
                                                     if parent else {})))
                if i % 10 == 9:
                    p.block(nums[i - 1], nums[i])
            # older than a sweep reaches back, so the sweeps below list nothing unchanged
            time.sleep(server_overlap() + 1)
            tracker = p.tracker()
            count = Counted(tracker.client)
            out: dict[str, Any] = {"issues": n}
            t0 = time.perf_counter()
            snap = tracker.snapshot()
            out["first_reading_ms"] = round((time.perf_counter() - t0) * 1000)
            out["first_reading"] = count.take()
            t0 = time.perf_counter()
            tracker.snapshot()
            out["unchanged_reading_ms"] = round((time.perf_counter() - t0) * 1000)
            out["unchanged_reading"] = count.take()
            clock = [0.0]  # the deltas' clock: a sweep (the relation list too) when moved on
            tracker.reader.changes.window.clock = lambda: clock[0]  # type: ignore[union-attr]
            assert tracker.changes(full=True).items  # the deltas start from a full reading
            count.take()
            t0 = time.perf_counter()
            assert not tracker.changes()
            out["unchanged_delta_ms"] = round((time.perf_counter() - t0) * 1000)
            out["unchanged_delta"] = count.take()
            clock[0] += SWEEP_EVERY
            assert not tracker.changes()
            out["first_sweep"] = count.take()  # the relation list's answer is not yet cached
            clock[0] += SWEEP_EVERY
            t0 = time.perf_counter()
            assert not tracker.changes()
            out["unchanged_sweep_ms"] = round((time.perf_counter() - t0) * 1000)
            out["unchanged_sweep"] = count.take()
            free = [it.id for it in snap.items if not it.blockers and not it.children]
            p.block(int(free[-1].lstrip("#")), int(free[-2].lstrip("#")))
            count.take()
            clock[0] += SWEEP_EVERY
            assert any(it.id == free[-2] for it in tracker.changes().items)  # type: ignore[union-attr]
            out["sweep_after_a_relation"] = count.take()
            item = next(it for it in snap.items if not it.blockers and not it.children)
            tracker.identity()  # what a pool asks once: the key's user, the closed status
            tracker.closed_status()
            out["once"] = count.take()
            assert tracker.claim(item, "bench@h", 600)
            out["claim"] = count.take()
            assert tracker.renew(item.id, "bench@h", 600)
            out["renew"] = count.take()
            assert tracker.watch([item.id], "bench@h") == {}
            out["watch"] = count.take()
            tracker.settle(item.id, "bench@h", Outcome("done"))
            out["settle_done"] = count.take()
            out["pages"] = -(-n // 100)
            return out
        finally:
            server.stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--issues", type=int, default=250)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    why = server.missing()
    if why is not None:
        print(json.dumps({"skipped": why}) if args.json else f"skipped: {why}")
        return
    result = run(args.issues)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:22} {value}")


if __name__ == "__main__":
    main()
