"""What global caps and conflict groups (`jr2 work --global-cap`, `--exclusive-by`) cost per
item on `local:`: the claim store's write transactions and SQL statements per item (claim +
settle), and the time of one claim + settle while H other claims are live, with the limits
(`--global-cap` above H, 2 groups per item) against without them, in the same run. Run from the
repository root: `.venv/bin/python bench/limits_cost.py`.
"""
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = ["."]
from jr2_sources.trackers.local.store import ClaimStore  # noqa: E402

HELD = (0, 100, 1000)
ROUNDS = 400


def per_item(store: ClaimStore, limits: bool, n: int) -> tuple[float, int, int]:
    """Seconds, write transactions and statements per claim + settle, over `n` items."""
    seen: list[str] = []
    store._live().set_trace_callback(seen.append)
    extra = {"groups": ["area/x", "touches-y"], "global_cap": 10_000} if limits else {}
    t = time.perf_counter()
    for i in range(n):
        assert store.claim(f"{limits}{i}", "bench", 60, **extra)  # type: ignore[arg-type]
        assert store.settle(f"{limits}{i}", "bench", "done")
    dt = (time.perf_counter() - t) / n
    store._live().set_trace_callback(None)
    begins = sum(1 for s in seen if s.startswith("BEGIN IMMEDIATE"))
    statements = sum(1 for s in seen if not s.startswith(("BEGIN", "COMMIT", "PRAGMA")))
    return dt, begins // n, statements // n


print(f"{'held':>6} | {'plain ms':>8} | {'limits ms':>9} | ratio | writes/item | statements/item")
for held in HELD:
    with tempfile.TemporaryDirectory() as d:
        store = ClaimStore(Path(d) / "claims.sqlite")
        for h in range(held):
            store.claim(f"H{h}", "other", 3600, groups=[f"g{h}"])
        base, w0, s0 = per_item(store, False, ROUNDS)
        with ClaimStore(Path(d) / "claims.sqlite") as again:
            lim, w1, s1 = per_item(again, True, ROUNDS)
        store.close()
    print(f"{held:>6} | {base * 1e3:8.3f} | {lim * 1e3:9.3f} | {lim / base:5.2f}x | "
          f"{w0} -> {w1}     | {s0} -> {s1}")


def github() -> None:
    """One issue worked by one pool against the fake GitHub, without limits and with
    `--global-cap 2 --exclusive-by label:area/* --control-issue`: requests, writes and comment
    creations from the fake's request log (one renewal: a 3 s lease, a 1.2 s command)."""
    import collections

    sys.path[:0] = ["tests", "tests/reliability"]
    from rel_trackers import pools, tracker

    print("\nGitHub, one issue (fake GitHub's request log):")
    print(f"{'limits':>7} | requests | writes | comment POSTs | by method")
    for limited in (False, True):
        with tempfile.TemporaryDirectory() as d, tracker("github") as tr, \
                pools(Path(d), tr) as p:
            control = tr.fake.add_issue("o/r", "coordination")
            tr.fake.add_issue("o/r", "work", labels=["agent", "area/db"])
            opts = ["--global-cap", "2", "--exclusive-by", "label:area/*", "--control-issue",
                    f"o/r#{control}"] if limited else []
            rc, _, err = p.wait(p.start("--label", "agent", "--lease", "3s", *opts,
                                        durations="1.2:1.2"))
            assert rc == 0, err
            log = tr.log()
            writes = [e for e in log if e.get("method") not in ("GET", None)]
            posts = [e for e in writes if e["method"] == "POST"
                     and str(e["path"]).endswith("/comments")]
            print(f"{'on' if limited else 'off':>7} | {len(log):>8} | {len(writes):>6} | "
                  f"{len(posts):>13} | {dict(collections.Counter(e['method'] for e in log))}")


github()
