"""Harness of the tracker reliability tests: real `jr2 work` processes against the fake GitHub
and the fake Jira, a worker journal, and the claim history rebuilt from the FAKE's request log.

Two independent witnesses are checked:

* the worker journal: every command appends `start|end|stop|orphan <item> <run> <t>` (one
  O_APPEND write per line). `stop` is written on SIGTERM (jr2 stopping it), `orphan` when its
  pool died under it (kill -9: the command lives in its own session, so it notices its parent
  is gone and exits, as an agent tied to its pool would);
* the fake's request log, turned into *holds*: a claim comment a pool posted and did not delete
  (it won), held from that POST until the pool's first settle edit of it (`done`, `failed`,
  `released`), or, when it never settles (a dead pool), until its lease lapsed on the server
  (last successful claim write + lease). Two holds of one item must never overlap. A pool
  settles only after its worker ended and claims before it starts, so a hold covers its
  worker's whole run: overlapping workers always show up as overlapping holds.

GitHub's log has no comment ids; they are rebuilt from it: the fake numbers comments from
`next_comment` in the order of successful comment POSTs, and it logs each POST in the same
lock hold that numbers it. `check_ids` verifies the rebuild against the fake's final comments.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jr2_sources.kit import claims
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.testing.fakes.jira_server import FakeJira

JR2 = [sys.executable, "-m", "jr2_core"]
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]
JQL = "project = ENG AND labels = agent ORDER BY created"
CLAIM_LABEL = "jr2:claimed"
TOL = 0.05  # seconds of slack between the fake's clock reads of one request

WORKER = r'''
import json, os, random, signal, sys, time
journal, seed, spec = sys.argv[1], sys.argv[2], sys.argv[3]
item, run = os.environ["JR2_ITEM_ID"], os.environ["JR2_RUN_ID"]
parent = os.getppid()

def line(kind):
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{kind} {item} {run} {time.time():.6f}\n".encode())
    os.close(fd)

def on_term(*_):
    line("stop")
    os._exit(1)

signal.signal(signal.SIGTERM, on_term)
line("start")
if spec.endswith(".json"):
    table = json.load(open(spec))
    dur = float(table.get(item, table.get("*", 0.1)))
else:
    lo, hi = (float(x) for x in spec.split(":"))
    dur = lo + random.Random(f"{seed}:{item}").random() * (hi - lo)
end = time.monotonic() + dur
while time.monotonic() < end:
    if os.getppid() != parent:
        line("orphan")
        os._exit(1)
    time.sleep(min(0.02, max(0.0, end - time.monotonic())))
line("end")
'''


# -- trackers -----------------------------------------------------------------------------------


@dataclass
class Tracker:
    """One fake tracker, seen the same way by every test: seed it, point pools at it, read its
    log and state back."""

    kind: str  # "github" | "jira"
    fake: Any
    token: str
    items: list[str] = field(default_factory=list)
    first_comment: int = 1000
    close_on_success: bool = True  # False: GitHub `--on-success nothing`, Jira no transition

    @property
    def source(self) -> str:
        return "github:o/r" if self.kind == "github" else "jira:"

    def source_args(self) -> list[str]:
        if self.kind == "github":
            return [self.source, *FAST, *([] if self.close_on_success
                                          else ["--on-success", "nothing"])]
        return [self.source, "--jql", JQL, *FAST, *(["--on-success-transition", "Done"]
                                                    if self.close_on_success else [])]

    def env(self, state: Path, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("GITHUB_TOKEN", "GH_TOKEN", "JIRA_API_TOKEN", "JIRA_PAT",
                            "JIRA_EMAIL", "JIRA_SERVER", "GITHUB_API_URL")}
        env["JR2_STATE_DIR"] = str(state)
        if self.kind == "github":
            env.update(GITHUB_API_URL=self.fake.url, GITHUB_TOKEN=self.token)
        elif self.fake.cloud:
            env.update(JIRA_SERVER=self.fake.url, JIRA_EMAIL="bot@example.com",
                       JIRA_API_TOKEN=self.token)
        else:  # Data Center: a personal access token (Bearer)
            env.update(JIRA_SERVER=self.fake.url, JIRA_PAT=self.token)
        env.update(extra)
        return env

    # seeding

    def seed(self, n: int, rng_seed: int, deps: int = 0) -> list[str]:
        """`n` ready items, plus `deps` random blocker edges from later to earlier ones."""
        rnd = random.Random(rng_seed)
        if self.kind == "github":
            for _ in range(n):
                self.fake.add_issue("o/r", labels=["agent"])
            ids = [f"o/r#{i}" for i in range(1, n + 1)]
        else:
            ids = [self.fake.add_issue(f"Item {i}", labels=["agent"]) for i in range(n)]
        edges: set[tuple[int, int]] = set()
        while len(edges) < min(deps, n * (n - 1) // 2):
            a, b = sorted(rnd.sample(range(n), 2))
            edges.add((a, b))
        for a, b in sorted(edges):  # b waits for a
            if self.kind == "github":
                self.fake.add_dependency("o/r", b + 1, a + 1)
            else:
                self.fake.add_link(ids[a], ids[b])
        self.items = ids
        return ids

    # faults

    def fault(self, status: int = 500, **kw: Any) -> Any:
        return self.fake.fault(status, **kw)

    # state

    def labels(self, item: str) -> list[str]:
        if self.kind == "github":
            return list(self.fake.issue("o/r", int(item.split("#")[1])).labels)
        return list(self.fake.issue(item).labels)

    def is_done(self, item: str) -> bool:
        if self.kind == "github":
            return bool(self.fake.issue("o/r", int(item.split("#")[1])).state == "closed")
        return bool(self.fake.issue(item).status == "Done")

    def comments(self, item: str) -> list[claims.Comment]:
        def dt(t: float) -> datetime:
            return datetime.fromtimestamp(t, UTC)

        if self.kind == "github":
            return [claims.Comment(c.id, c.body, dt(c.created), dt(c.updated))
                    for c in self.fake.comments_of("o/r", int(item.split("#")[1]))]
        with self.fake.lock:  # bodies as jr2 reads them back (on Cloud: marker from properties)
            raw = list(zip(self.fake.issue(item).comments, self.fake.comment_bodies(item),
                           strict=True))
        return [claims.Comment(int(c["id"]), body, dt(c["created"]), dt(c["updated"]))
                for c, body in raw]

    def live_claims(self) -> dict[str, str]:
        """Items with a live claim now (server time) -> its holder."""
        now = datetime.fromtimestamp(self.fake.now(), UTC)
        out = {}
        for item in self.items:
            mk = claims.holder_of(self.comments(item), now)
            if mk is not None:
                out[item] = mk.holder
        return out

    def leftover_claim_labels(self) -> list[str]:
        return [i for i in self.items if CLAIM_LABEL in self.labels(i)]

    def log(self) -> list[dict[str, Any]]:
        with self.fake.lock:
            return [dict(e) for e in self.fake.log]


@contextlib.contextmanager
def tracker(kind: str, token: str = "rel-token-0123456789", *,
            cloud: bool = True) -> Iterator[Tracker]:
    """A started fake of `kind`; `cloud=False` makes the fake Jira a Data Center."""
    if kind == "github":
        gh = FakeGitHub().start()
        gh.next_number.setdefault("o/r", 1)
        t = Tracker(kind, gh, token, first_comment=gh.next_comment)
    else:
        t = Tracker(kind, FakeJira(cloud=cloud).start(), token)
    try:
        yield t
    finally:
        t.fake.stop()


# -- pools --------------------------------------------------------------------------------------


class Pools:
    """`jr2 work` processes this test started; all are killed (by pid) at the end."""

    def __init__(self, tmp: Path, tr: Tracker) -> None:
        self.tmp = tmp
        self.tr = tr
        self.procs: list[subprocess.Popen[str]] = []
        self.journal = tmp / "journal"
        self.worker = tmp / "worker.py"
        self.worker.write_text(WORKER)

    def start(self, *opts: str, seed: int = 0, durations: str | dict[str, float] = "0:0.2",
              env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        spec = durations
        if isinstance(durations, dict):
            path = self.tmp / f"durations-{len(self.procs)}.json"
            path.write_text(json.dumps(durations))
            spec = str(path)
        i = len(self.procs)
        argv = [*JR2, "work", *self.tr.source_args(), *opts, "--", sys.executable, "-I", "-S",
                str(self.worker), str(self.journal), str(seed), str(spec)]
        proc = subprocess.Popen(argv, cwd=self.tmp, env=env or self.tr.env(self.tmp / f"p{i}"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def wait(self, proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
                with contextlib.suppress(Exception):
                    p.communicate(timeout=10)


@contextlib.contextmanager
def pools(tmp: Path, tr: Tracker) -> Iterator[Pools]:
    p = Pools(tmp, tr)
    try:
        yield p
    finally:
        p.close()


def wait_for(pred: Callable[[], Any], timeout: float = 30, every: float = 0.02) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not met in time")


# -- the worker journal -------------------------------------------------------------------------


@dataclass
class Run:
    item: str
    run: str
    start: float
    end: float | None = None
    how: str | None = None  # end | stop | orphan


def read_journal(path: Path) -> list[Run]:
    runs: list[Run] = []
    open_: dict[tuple[str, str], Run] = {}
    if not path.exists():
        return runs
    for line in path.read_text().splitlines():
        kind, item, run, t = line.split()
        if kind == "start":
            r = Run(item, run, float(t))
            open_[(item, run)] = r
            runs.append(r)
        else:
            r = open_.pop((item, run))
            r.end, r.how = float(t), kind
    return runs


def starts(path: Path) -> int:
    return sum(1 for r in read_journal(path))


def journal_overlaps(runs: list[Run]) -> list[tuple[Run, Run]]:
    """Pairs of runs of one item whose [start, end] overlap (an unfinished run lasts for ever)."""
    by: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by[r.item].append(r)
    bad = []
    for rs in by.values():
        rs.sort(key=lambda r: r.start)
        for i, a in enumerate(rs):
            for b in rs[i + 1:]:
                if a.end is None or b.start < a.end:
                    bad.append((a, b))
    return bad


# -- holds from the fake's log ------------------------------------------------------------------


@dataclass
class Hold:
    item: str
    holder: str
    cid: int
    start: float  # the claim POST (server time)
    writes: list[float]  # successful claim writes: the POST, then renewals
    settle: float | None = None  # the first settle edit attempt (server time)
    settle_kind: str | None = None
    settled_ok: str | None = None  # the kind of the first successful settle edit
    deleted: bool = False
    late_claim_writes: list[float] = field(default_factory=list)  # claim edits after settling
    whole_seconds: bool = False

    def lapse(self, lease: float) -> float:
        """When the claim first stopped being live on the tracker without a settle. Leases are
        judged on the timestamps the tracker shows: GitHub's are whole seconds (`updated_at`
        2024-01-01T10:00:03Z), so a claim written at 3.9 s lapses at 3 s + lease."""
        def shown(t: float) -> float:
            return float(int(t)) if self.whole_seconds and t != float("inf") else t

        for a, b in zip(self.writes, [*self.writes[1:], float("inf")], strict=False):
            if shown(b) - shown(a) >= lease:
                return shown(a) + lease
        return float("inf")

    def end(self, lease: float) -> float:
        return self.settle if self.settle is not None else self.lapse(lease)


@dataclass
class Event:
    t: float
    op: str  # post | edit | delete
    item: str | None
    cid: int
    holder: str | None
    marker: str | None
    ok: bool


def events(tr: Tracker) -> list[Event]:
    """The claim-comment traffic of the fake's log, with comment ids."""
    out: list[Event] = []
    if tr.kind == "github":
        nxt = tr.first_comment
        for e in tr.log():
            m = re.fullmatch(r"/repos/o/r/issues/(\d+)/comments", e["path"])
            if e["method"] == "POST" and m and e["status"] == 201:
                out.append(Event(e["t"], "post", f"o/r#{m.group(1)}", nxt, e["holder"],
                                 e["marker"], True))
                nxt += 1
                continue
            m = re.fullmatch(r"/repos/o/r/issues/comments/(\d+)", e["path"])
            if m and e["method"] in ("PATCH", "DELETE"):
                out.append(Event(e["t"], "edit" if e["method"] == "PATCH" else "delete", None,
                                 int(m.group(1)), e["holder"], e["marker"],
                                 e["status"] in (200, 204)))
        return out
    for e in tr.log():
        key = e.get("key")
        if e["method"] == "POST" and re.search(r"/issue/[^/]+/comment$", e["path"]):
            if e["status"] == 201:
                out.append(Event(e["time"], "post", key, int(e["comment_id"]), e.get("holder"),
                                 e.get("kind"), True))
            continue
        m = re.search(r"/issue/[^/]+/comment/(\d+)$", e["path"])
        if m and e["method"] in ("PUT", "DELETE"):
            out.append(Event(e["time"], "edit" if e["method"] == "PUT" else "delete", key,
                             int(m.group(1)), e.get("holder"), e.get("kind"),
                             e["status"] in (200, 204)))
    return out


def holds(tr: Tracker, *, lost: list[Hold] | None = None) -> list[Hold]:
    """Every claim a pool won, from the fake's log (`lost` collects the ones it deleted)."""
    by_cid: dict[int, Hold] = {}
    for ev in events(tr):
        if ev.op == "post":
            if ev.marker == "claim" and ev.item is not None:
                by_cid[ev.cid] = Hold(ev.item, ev.holder or "?", ev.cid, ev.t, [ev.t],
                                      whole_seconds=tr.kind == "github")
            continue
        h = by_cid.get(ev.cid)
        if h is None:
            continue
        if ev.op == "delete":
            if ev.ok:
                h.deleted = True
            continue
        if ev.marker == "claim":
            if h.settle is not None:
                h.late_claim_writes.append(ev.t)
            elif ev.ok:
                h.writes.append(ev.t)
        elif ev.marker in ("done", "failed", "released"):
            if h.settle is None:
                h.settle, h.settle_kind = ev.t, ev.marker
            if ev.ok and h.settled_ok is None:
                h.settled_ok = ev.marker
    if lost is not None:
        lost.extend(h for h in by_cid.values() if h.deleted)
    return [h for h in by_cid.values() if not h.deleted]


def double_holds(hs: list[Hold], lease: float) -> list[tuple[Hold, Hold]]:
    """Pairs of holds of one item that overlap in time (server clock)."""
    by: dict[str, list[Hold]] = defaultdict(list)
    for h in hs:
        by[h.item].append(h)
    bad = []
    for group in by.values():
        group.sort(key=lambda h: h.start)
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if b.start < a.end(lease) - TOL:
                    bad.append((a, b))
    return bad


def check_ids(tr: Tracker) -> None:
    """The comment ids rebuilt from the log match the fake's final comments."""
    posted = {ev.cid: ev for ev in events(tr) if ev.op == "post"}
    for item in tr.items:
        for c in tr.comments(item):
            mk = claims.parse_marker(c)
            if mk is None:
                continue
            ev = posted.get(c.id)
            assert ev is not None and ev.item == item and ev.holder == mk.holder, (item, c.id)


@dataclass
class Figures:
    """What one scenario showed; printed, and summed up in docs/reliability.md."""

    items: int
    runs: int = 0
    completed: int = 0
    reruns: int = 0
    double_holds: int = 0
    journal_overlaps: int = 0
    holds: int = 0
    lost_claims: int = 0
    pools: int = 0
    faults: dict[str, int] = field(default_factory=dict)

    def line(self, name: str) -> str:
        return (f"{name}: {self.items} items, {self.pools} pools, {self.holds} holds "
                f"({self.lost_claims} claims lost to another pool), "
                f"{self.runs} runs, {self.completed} completed, {self.reruns} reruns, "
                f"double holds {self.double_holds}, journal overlaps {self.journal_overlaps}"
                + (f", faults {dict(sorted(self.faults.items()))}" if self.faults else ""))


def verify(tr: Tracker, journal: Path, lease: float, *, exactly_once: bool = True,
           all_done: bool = True) -> Figures:
    """The common checks: no double hold (log and journal), each item completed (exactly once
    when `exactly_once`), tracker state final, no claim label and no live claim left."""
    runs = read_journal(journal)
    lost: list[Hold] = []
    hs = holds(tr, lost=lost)
    fig = Figures(items=len(tr.items), runs=len(runs), holds=len(hs), lost_claims=len(lost),
                  pools=len({h.holder for h in hs}))
    dh = double_holds(hs, lease)
    jo = journal_overlaps(runs)
    fig.double_holds, fig.journal_overlaps = len(dh), len(jo)
    assert not dh, "held by two pools at once (fake log): " + "; ".join(
        f"{a.item}: {a.holder} [{a.start:.2f}, {a.end(lease):.2f}] and {b.holder} from "
        f"{b.start:.2f}" for a, b in dh[:5])
    assert not jo, "two workers on one item at once (journal): " + "; ".join(
        f"{a.item}: {a.run} [{a.start:.2f}, {a.end}] and {b.run} from {b.start:.2f}"
        for a, b in jo[:5])
    late = [h for h in hs if h.late_claim_writes]
    assert not late, f"a claim was edited back to live after it was settled: {late[:3]}"
    completed = Counter(r.item for r in runs if r.how == "end")
    started = Counter(r.item for r in runs)
    fig.completed = sum(completed.values())
    fig.reruns = sum(c - 1 for c in started.values() if c > 1)
    if all_done:
        missing = [i for i in tr.items if completed[i] == 0]
        assert not missing, f"lost items (never completed): {missing}"
        assert all(tr.is_done(i) for i in tr.items), [i for i in tr.items if not tr.is_done(i)]
        done_marks = Counter(h.item for h in hs if h.settled_ok == "done")
        assert all(done_marks[i] == 1 for i in tr.items), done_marks
    if exactly_once:
        assert set(started.values()) <= {1} and set(completed.values()) <= {1}, \
            [i for i, c in started.items() if c > 1]
    assert tr.leftover_claim_labels() == [], "claim labels left behind"
    assert tr.live_claims() == {}, "live claims left behind"
    check_ids(tr)
    return fig


class Faults:
    """Faults queued on a fake, with how many of each the fake actually served."""

    def __init__(self, tr: Tracker) -> None:
        self.tr = tr
        self.queued: list[tuple[str, Any, int]] = []  # (label, fault, times queued)

    def add(self, label: str, status: int = 500, *, times: int = 1, **kw: Any) -> Any:
        f = self.tr.fault(status, times=times, **kw)
        self.queued.append((label, f, times))
        return f

    def served(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        for label, f, times in self.queued:
            out[label] += times - max(f.times, 0)
        return dict(out)

    def stop(self) -> dict[str, int]:
        """Serve no more of them; returns what was served until now."""
        with self.tr.fake.lock:
            served = self.served()
            for i, (label, f, _) in enumerate(self.queued):
                f.times = 0
                self.queued[i] = (label, f, served.pop(label, 0))
        return self.served()


def one_error_line(err: str, token: str) -> str:
    """The run stopped with exactly one `error:` line, no traceback and no token."""
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert token not in err
    return lines[0]
