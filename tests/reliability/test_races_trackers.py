"""Races over the fake GitHub and the fake Jira: K pools, each a separate `jr2 work` process
(the real CLI, `python -m jr2_core`, GITHUB_API_URL / JIRA_SERVER pointing at the fake), over
one backlog with random blocker edges and random worker durations.

What must hold, checked from the FAKE's request log (claim POSTs, deletes and settle edits over
server time, see `rel_trackers.holds`) and, independently, from the worker journal: no item is
ever held by two pools at once, and every item is run (and recorded done) exactly once. The
default run covers K = 2 and 4 on two seeds per tracker; `pytest -m soak` adds K = 8 and more
seeds on larger backlogs.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from rel_trackers import double_holds, holds, pools, tracker, verify

LEASE = 600.0  # the default lease: no renewals, no expiry during a race


def race(tmp_path: Path, kind: str, k: int, n: int, seed: int, deps: int) -> None:
    with tracker(kind) as tr, pools(tmp_path, tr) as ps:
        tr.seed(n, seed, deps=deps)
        procs = [ps.start("--cap", "2", seed=seed, durations="0:0.25") for _ in range(k)]
        results = [ps.wait(p, timeout=300) for p in procs]
        assert [rc for rc, _, _ in results] == [0] * k, [err[-2000:] for _, _, err in results]
        fig = verify(tr, ps.journal, LEASE)
        assert fig.double_holds == 0 and fig.reruns == 0 and fig.completed == n
        print(fig.line(f"{kind}_race K={k} seed={seed}"))


@pytest.mark.parametrize(("k", "seed"), [pytest.param(2, 1, marks=pytest.mark.soak), (4, 2)])
def test_github_race(tmp_path: Path, k: int, seed: int) -> None:
    race(tmp_path, "github", k, 32, seed, deps=16)


@pytest.mark.parametrize(("k", "seed"), [pytest.param(2, 3, marks=pytest.mark.soak), (4, 4)])
def test_jira_race(tmp_path: Path, k: int, seed: int) -> None:
    race(tmp_path, "jira", k, 32, seed, deps=16)


SOAK = [(2, 11, 120), (4, 12, 120), (8, 13, 200), (8, 14, 200), (8, 15, 200)]


@pytest.mark.soak
@pytest.mark.parametrize(("k", "seed", "n"), SOAK)
def test_soak_github_race(tmp_path: Path, k: int, seed: int, n: int) -> None:
    race(tmp_path, "github", k, n, seed, deps=n // 2)


@pytest.mark.soak
@pytest.mark.parametrize(("k", "seed", "n"), SOAK)
def test_soak_jira_race(tmp_path: Path, k: int, seed: int, n: int) -> None:
    race(tmp_path, "jira", k, n, seed, deps=n // 2)


@pytest.mark.parametrize("kind", ["github", "jira"])
def test_the_log_checker_sees_a_double_hold(kind: str) -> None:
    """Negative control: two claims on one item that both stay until settled, straight over
    HTTP, are reported as a double hold from the fake's log; in sequence they are not."""
    import requests

    from jr2_sources.kit.claims import render_marker

    with tracker(kind) as tr:
        [item] = tr.seed(1, 1)
        if kind == "github":
            base = f"{tr.fake.url}/repos/o/r/issues"
            post, edit, method = f"{base}/1/comments", f"{base}/comments/{{}}", "PATCH"
        else:
            base = f"{tr.fake.url}/rest/api/2/issue/{item}/comment"
            post, edit, method = base, f"{base}/{{}}", "PUT"
        auth = {"Authorization": "Bearer x"}

        def claim(holder: str) -> int:
            body = render_marker("claim", {"holder": holder, "lease": 60, "nonce": holder}, "")
            return int(requests.post(post, json={"body": body}, headers=auth, timeout=5)
                       .json()["id"])

        def settle(cid: int, holder: str) -> None:
            body = render_marker("done", {"holder": holder, "nonce": holder}, "")
            requests.request(method, edit.format(cid), json={"body": body}, headers=auth,
                             timeout=5).raise_for_status()

        a = claim("A")
        settle(a, "A")
        b = claim("B")  # after A settled: fine
        c = claim("C")  # while B holds: a double hold
        time.sleep(0.2)  # (more than the checker's clock slack)
        settle(b, "B")
        settle(c, "C")
        pairs = double_holds(holds(tr), 60)
        assert [(x.holder, y.holder) for x, y in pairs] == [("B", "C")]
