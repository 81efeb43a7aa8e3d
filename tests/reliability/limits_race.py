"""K `jr2 work` pools under `--global-cap` racing over one backlog on the fake GitHub (one
stateful server on 127.0.0.1 that every pool process talks to), measured from outside: what
the limit tests assert and what `bench/limits_race.py` prints.

Witnesses: the worker journal (each run's interval, see `rel_trackers`); a sampler that reads
the fake's state every `SAMPLE` seconds (live claims on the items, live lock comments on the
coordination issue); and the fake's request log, which records every request with a digest of
its client's token (each pool has its own), the comment bodies jr2 wrote and the listings it
read. From the log: the claim and lock comments posted (201s), the lock comments deleted, and,
for each lock comment posted, the listing of the coordination issue that pool had read just
before it (a 304 is the pool's previous 200 of that URL): how many live locks it showed.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from limits_journal import most_at_once, runs
from rel_trackers import Tracker, pools, tracker

from jr2_sources.capabilities.limits.comment_locks import lock_fields

SAMPLE = 0.02
LEASE = 600.0  # the pools' --lease (the default)


@dataclass
class Figures:
    """One race, measured."""

    pools: int
    issues: int
    cap: int
    poll: float
    seconds: float
    exit_codes: list[int]
    worked: int
    """Issues closed, each run exactly once (journal) and closed (tracker)."""
    once: bool
    most_running: int
    """The most workers running at one instant (journal)."""
    most_held: int
    """The most live item claims at one sample (the fake's state)."""
    most_locks: int
    """The most live lock comments at one sample."""
    samples: int
    claim_posts: int
    lock_posts: int
    lock_deletes: int
    control_listings: int
    posted_when_full: int
    """Lock comments posted although the listing that pool had just read showed `cap` or more
    live locks."""

    @property
    def claims_per_item(self) -> float:
        return self.claim_posts / max(self.worked, 1)

    @property
    def locks_per_item(self) -> float:
        return self.lock_posts / max(self.worked, 1)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "claims_per_item": round(self.claims_per_item, 3),
                "locks_per_item": round(self.locks_per_item, 3)}


def _live_locks(listing: list[dict[str, Any]], now: float) -> int:
    """Live lock comments in one listing (comment JSON objects) at server time `now`."""
    live = 0
    for c in listing:
        fields = lock_fields(str(c.get("body") or ""))
        if fields is None:
            continue
        updated = datetime.fromisoformat(str(c["updated_at"]).replace("Z", "+00:00"))
        lease = min(float(fields.get("lease", 0) or 0), LEASE)
        live += math.floor(now) < updated.timestamp() + lease
    return live


def _posted_when_full(log: list[dict[str, Any]], control: int, cap: int) -> tuple[int, int]:
    """(lock comments posted while the poster's last listing showed the cap full, listings of
    the coordination issue)."""
    path = f"/repos/o/r/issues/{control}/comments"
    last: dict[str | None, tuple[float, list[dict[str, Any]]]] = {}
    by_url: dict[tuple[str | None, str], list[dict[str, Any]]] = {}
    full = listings = 0
    for e in sorted(log, key=lambda e: e["t"]):
        if e["path"] != path:
            continue
        who = e.get("client")
        if e["method"] == "GET" and e["status"] in (200, 304):
            listings += 1
            key = (who, str(e.get("query")))
            if e["status"] == 200 and isinstance(e.get("data"), list):
                by_url[key] = e["data"]
            last[who] = (e["t"], by_url.get(key, []))
        elif e["method"] == "POST" and e["status"] == 201 and e.get("marker") == "lock":
            seen = last.get(who)
            if seen is not None and _live_locks(seen[1], seen[0]) >= cap:
                full += 1
    return full, listings


def _sampler(tr: Tracker, control: int, stop: threading.Event, out: dict[str, int]) -> None:
    while not stop.is_set():
        held = len(tr.live_claims())
        now = datetime.fromtimestamp(tr.fake.now(), UTC)
        locks = 0
        for c in tr.fake.comments_of("o/r", control):
            fields = lock_fields(c.body)
            if fields is not None:
                lease = min(float(fields.get("lease", 0) or 0), LEASE)
                locks += now.timestamp() < math.floor(c.updated) + lease
        out["held"] = max(out["held"], held)
        out["locks"] = max(out["locks"], locks)
        out["samples"] += 1
        stop.wait(SAMPLE)


def race(tmp: Path, k: int, issues: int, cap: int, *, poll: float = 0.2,
         durations: str = "0.3:0.5", per_pool: int = 2, timeout: float = 600) -> Figures:
    """`k` pools of `--cap per_pool` under `--global-cap cap` over `issues` issues, polling
    every `poll` seconds; every pool has its own token (the fake acts as one account)."""
    with tracker("github") as tr, pools(tmp, tr) as p:
        tr.fake.capture = True
        gh = tr.fake
        control = gh.add_issue("o/r", "jr2 coordination (do not close)")
        ids = [f"o/r#{gh.add_issue('o/r', f'item {i}', labels=['agent'])}"
               for i in range(issues)]
        tr.items = ids
        seen = {"held": 0, "locks": 0, "samples": 0}
        stop = threading.Event()
        sampler = threading.Thread(target=_sampler, args=(tr, control, stop, seen), daemon=True)
        sampler.start()
        t0 = time.monotonic()
        procs = [p.start("--label", "agent", "--control-issue", f"o/r#{control}", "--cap",
                         str(per_pool), "--global-cap", str(cap), "--poll-every", f"{poll:g}",
                         seed=i, durations=durations,
                         env=tr.env(tmp / f"p{i}", GITHUB_TOKEN=f"pool-token-{i:02d}-abcdef"))
                 for i in range(k)]
        codes = [p.wait(proc, timeout=timeout)[0] for proc in procs]
        seconds = time.monotonic() - t0
        stop.set()
        sampler.join()
        done = runs(p.journal)
        once = sorted(done) == sorted(ids) and all(len(r) == 1 for r in done.values())
        worked = sum(1 for i in ids if tr.is_done(i) and len(done.get(i, [])) == 1)
        log = tr.log()
        posts = [e for e in log if e["method"] == "POST" and e["status"] == 201]
        control_path = f"/repos/o/r/issues/{control}/comments"
        full, listings = _posted_when_full(log, control, cap)
        locks = {str(e["data"]["id"]) for e in posts
                 if e.get("marker") == "lock" and isinstance(e.get("data"), dict)}
        return Figures(
            pools=k, issues=issues, cap=cap, poll=poll, seconds=round(seconds, 1),
            exit_codes=codes, worked=worked, once=once,
            most_running=most_at_once([iv for r in done.values() for iv in r]),
            most_held=seen["held"], most_locks=seen["locks"], samples=seen["samples"],
            claim_posts=sum(1 for e in posts if e.get("marker") == "claim"),
            lock_posts=sum(1 for e in posts if e["path"] == control_path
                           and e.get("marker") == "lock"),
            lock_deletes=sum(1 for e in log if e["method"] == "DELETE" and e["status"] == 204
                             and e["path"].rsplit("/", 1)[-1] in locks),
            control_listings=listings, posted_when_full=full)



def dumps(fig: Figures) -> str:
    """The figures as one JSON line."""
    return json.dumps(fig.to_json(), sort_keys=True)
