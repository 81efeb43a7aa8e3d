"""Tracker faults injected by the fake GitHub and the fake Jira during `jr2 work` runs.

* Within the retry budget: 500, 502, 503, 429 and 403 with `Retry-After`, connection resets,
  slow answers and truncated JSON bodies, spread over the endpoints a pool uses (search or
  list, claim comments, comment listing, issue reads, labels, close or transition), with two
  pools racing. Every injected fault must be served (counted from the fake), both pools exit
  0, and every item runs exactly once with no double hold (fake log and journal).
* Beyond the budget (`--retry-budget 2s`): once two workers run, the snapshot endpoint fails
  for good. The pool stops with exit 4 and ONE `error:` line (no traceback, no token), the
  worker still running is stopped and its claim released (no claim label, no live claim on
  the fake), and a later pool finishes the rest: every item completed exactly once; the
  stopped item is the only one started twice.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rel_trackers import (
    Faults,
    holds,
    one_error_line,
    pools,
    read_journal,
    starts,
    tracker,
    verify,
    wait_for,
)

LEASE = 600.0
GH_LIST = r"^/repos/o/r/issues$"
GH_COMMENTS = r"^/repos/o/r/issues/\d+/comments$"
GH_ISSUE = r"^/repos/o/r/issues/\d+$"
GH_LABELS = r"^/repos/o/r/issues/\d+/labels"
J_SEARCH = r"/search/jql$"
J_COMMENTS = r"/issue/ENG-\d+/comment$"
J_ISSUE = r"/issue/ENG-\d+$"


def github_faults(f: Faults) -> None:
    f.add("500", 500, method="GET", path=GH_LIST)
    f.add("truncated JSON", kind="truncate", method="GET", path=GH_LIST)
    f.add("502", 502, method="POST", path=GH_COMMENTS)
    f.add("truncated JSON", kind="truncate", method="POST", path=GH_COMMENTS)
    f.add("429 Retry-After", 429, method="GET", path=GH_COMMENTS, retry_after=1)
    f.add("slow (0.6 s)", kind="slow", delay=0.6, times=2, method="GET", path=GH_ISSUE)
    f.add("403 Retry-After", 403, method="POST", path=GH_LABELS, retry_after=1,
          message="You have exceeded a secondary rate limit.")
    f.add("503", 503, method="PATCH", path=GH_ISSUE)
    # the settle's one PATCH (close + claim label off) replaced DELETE .../labels/{name}
    f.add("connection reset", kind="reset", method="PATCH", path=GH_ISSUE)


def jira_faults(f: Faults) -> None:
    f.add("500", 500, method="POST", path=J_SEARCH)
    f.add("truncated JSON", kind="truncate", method="POST", path=J_SEARCH)
    f.add("502", 502, method="POST", path=J_COMMENTS)
    f.add("truncated JSON", kind="truncate", method="POST", path=J_COMMENTS)
    f.add("503 Retry-After", 503, method="GET", path=J_COMMENTS, retry_after=1)
    f.add("slow (0.6 s)", kind="slow", delay=0.6, times=2, method="GET", path=J_ISSUE)
    f.add("429 Retry-After", 429, method="PUT", path=J_ISSUE, retry_after=1)
    f.add("connection reset", kind="reset", method="POST", path=r"/transitions$")


@pytest.mark.parametrize("kind", ["github", "jira"])
def test_tracker_faults_within_the_budget(tmp_path: Path, kind: str) -> None:
    n = 12
    with tracker(kind) as tr, pools(tmp_path, tr) as ps:
        tr.seed(n, 21, deps=4)
        faults = Faults(tr)
        (github_faults if kind == "github" else jira_faults)(faults)
        procs = [ps.start("--cap", "2", seed=21, durations="0:0.2") for _ in range(2)]
        results = [ps.wait(p, timeout=180) for p in procs]
        assert [rc for rc, _, _ in results] == [0, 0], [e[-2000:] for _, _, e in results]
        served = faults.served()
        wanted = Counter[str]()
        for label, _, times in faults.queued:
            wanted[label] += times
        assert served == dict(wanted), f"faults not all served: {served} of {dict(wanted)}"
        fig = verify(tr, ps.journal, LEASE)
        fig.faults = served
        print(fig.line(f"{kind}_faults"))


GH_STOPS: list[tuple[str, int, dict[str, Any], str]] = [
    ("503 for good", 503, {}, "GitHub kept failing (HTTP 503)"),
    ("429 Retry-After 60 s > budget", 429, {"retry_after": 60},
     "GitHub asks to wait 60s, more than the retry budget (2s)"),
]
J_STOPS: list[tuple[str, int, dict[str, Any], str]] = [
    ("502 for good", 502, {}, "Jira kept failing (HTTP 502)"),
    # Jira rate-limits with 429 (and 503); a 403 is a permission error even with Retry-After
    ("403 Retry-After", 403, {"retry_after": 1, "message": "Forbidden"}, "(HTTP 403: Forbidden)"),
]


def stop_case(tmp_path: Path, kind: str, label: str, status: int, kw: dict[str, Any],
              expect: str) -> None:
    with tracker(kind) as tr, pools(tmp_path, tr) as ps:
        ids = tr.seed(5, 31)
        faults = Faults(tr)
        durations = {ids[0]: 0.5, ids[1]: 20.0, "*": 0.3}
        proc = ps.start("--cap", "2", "--retry-budget", "2s", durations=durations)
        wait_for(lambda: starts(ps.journal) >= 2, timeout=30)
        method, path = ("GET", GH_LIST) if kind == "github" else ("POST", J_SEARCH)
        faults.add(label, status, times=10_000, method=method, path=path, **kw)
        rc, _, err = ps.wait(proc, timeout=60)
        line = one_error_line(err, tr.token)
        assert rc == 4 and expect in line, err[-2000:]
        # the stopped worker's claim was released: no claim label, no live claim
        assert tr.leftover_claim_labels() == [] and tr.live_claims() == {}
        released = [h for h in holds(tr) if h.settled_ok == "released"]
        assert [h.item for h in released] == [ids[1]], holds(tr)
        served = faults.stop()
        rc, _, err = ps.wait(ps.start("--cap", "2", durations="0.05:0.1"), timeout=60)
        assert rc == 0, err[-2000:]
        fig = verify(tr, ps.journal, LEASE, exactly_once=False)
        completed = Counter(r.item for r in read_journal(ps.journal) if r.how == "end")
        assert set(completed.values()) == {1} and len(completed) == len(ids)
        assert fig.reruns == 1  # the worker stopped with the pool, run again by the next one
        fig.faults = served
        print(f"{kind}_fault_stop [{label}]: exit 4, {line!r}; " + fig.line("then"))


@pytest.mark.parametrize(("label", "status", "kw", "expect"), GH_STOPS, ids=["503", "429"])
def test_github_faults_beyond_the_budget_stop_cleanly(tmp_path: Path, label: str, status: int,
                                                      kw: dict[str, Any], expect: str) -> None:
    stop_case(tmp_path, "github", label, status, kw, expect)


@pytest.mark.parametrize(("label", "status", "kw", "expect"), J_STOPS, ids=["502", "403"])
def test_jira_faults_beyond_the_budget_stop_cleanly(tmp_path: Path, label: str, status: int,
                                                    kw: dict[str, Any], expect: str) -> None:
    stop_case(tmp_path, "jira", label, status, kw, expect)




GH_PATHS = [("GET", GH_LIST), ("POST", GH_COMMENTS), ("GET", GH_COMMENTS), ("GET", GH_ISSUE),
            ("POST", GH_LABELS), ("DELETE", GH_LABELS), ("PATCH", GH_ISSUE),
            ("PATCH", r"^/repos/o/r/issues/comments/\d+$"),
            ("DELETE", r"^/repos/o/r/issues/comments/\d+$")]
J_PATHS = [("POST", J_SEARCH), ("POST", J_COMMENTS), ("GET", J_COMMENTS), ("GET", J_ISSUE),
           ("PUT", J_ISSUE), ("POST", r"/transitions$"), ("GET", r"/transitions$"),
           ("PUT", r"/comment/\d+$"), ("DELETE", r"/comment/\d+$")]


@pytest.mark.soak
@pytest.mark.parametrize(("kind", "seed"), [("github", 51), ("jira", 52), ("github", 53),
                                            ("jira", 54)])
def test_soak_fault_storm(tmp_path: Path, kind: str, seed: int) -> None:
    """Four pools over 60 items while 30 random faults (every kind, random endpoints, 1-2 times
    each) hit them; all within the default budget: every item exactly once, no double hold."""
    import random

    rnd = random.Random(seed)
    n = 60
    with tracker(kind) as tr, pools(tmp_path, tr) as ps:
        tr.seed(n, seed, deps=n // 3)
        faults = Faults(tr)
        paths = GH_PATHS if kind == "github" else J_PATHS
        kinds: list[tuple[str, int, dict[str, Any]]] = [
            ("500", 500, {}), ("502", 502, {}), ("503", 503, {}),
            ("429 Retry-After", 429, {"retry_after": 1}),
            ("connection reset", 0, {"kind": "reset"}),
            ("slow (0.5 s)", 0, {"kind": "slow", "delay": 0.5}),
            ("truncated JSON", 0, {"kind": "truncate"})]
        if kind == "github":
            kinds.append(("403 Retry-After", 403, {"retry_after": 1,
                                                   "message": "secondary rate limit"}))
        for _ in range(30):
            label, status, kw = rnd.choice(kinds)
            method, path = rnd.choice(paths)
            faults.add(label, status or 500, times=rnd.randint(1, 2), method=method, path=path,
                       **kw)
        procs = [ps.start("--cap", "2", seed=seed, durations="0:0.2") for _ in range(4)]
        results = [ps.wait(p, timeout=600) for p in procs]
        assert [rc for rc, _, _ in results] == [0] * 4, [e[-2000:] for _, _, e in results]
        fig = verify(tr, ps.journal, LEASE)
        fig.faults = faults.served()
        print(fig.line(f"{kind}_fault_storm seed={seed}"))
