"""Approval gates (`jr2 work --gate NAME`) end to end, through real `jr2 work` processes, on the
local source, the fake GitHub and the fake Jira.

The worker asks for approval of `deploy` (prints `jr2: await-approval deploy ...`, exits 79)
for the items listed in `$ASK` while `JR2_GATE_DEPLOY` is unset; otherwise it exits 0. Its
journal (`start|end <item> <pid> <t> <JR2_GATE_DEPLOY> <JR2_GATE_DEPLOY_REASON>`, one O_APPEND
write per line) is the independent witness: how often each item ran, with which answer, and
that no two runs of one item overlapped. A person answers as they would: `jr2 local approve`
/ `reject` on `local:`, a `/jr2 approve deploy` comment on GitHub and Jira (by someone with write
access, or not: GitHub's collaborator permission, Jira's Edit Issues).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rel_trackers import JR2, Tracker, tracker, wait_for

from clihelp import jr2_here

WORKER = r'''
import os, sys, time
journal = sys.argv[1]
item = os.environ["JR2_ITEM_ID"]
gate = os.environ.get("JR2_GATE_DEPLOY", "-")
why = os.environ.get("JR2_GATE_DEPLOY_REASON", "-").replace(" ", "_")

def line(kind):
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{kind} {item} {os.getpid()} {time.time():.6f} {gate} {why}\n".encode())
    os.close(fd)

line("start")
time.sleep(0.2)
line("end")
if item in os.environ.get("ASK", "").split(",") and gate == "-":
    print("working on it")
    print("jr2: await-approval deploy ship to production?")
    sys.exit(79)
sys.exit(0)
'''

KINDS = ["local", "github", "jira"]


@dataclass
class Setup:
    kind: str
    tmp: Path
    tr: Tracker | None
    items: list[str]
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def journal(self) -> Path:
        return self.tmp / "journal"

    def source_args(self) -> list[str]:
        if self.tr is None:
            return ["local:b.toml", "--poll-every", "0.2"]
        return self.tr.source_args()

    def env(self, i: int, ask: str = "") -> dict[str, str]:
        base = ({**os.environ, "JR2_STATE_DIR": str(self.tmp / "state")} if self.tr is None
                else self.tr.env(self.tmp / f"p{i}"))
        return {**base, "ASK": ask}

    def start(self, *opts: str, ask: str = "") -> subprocess.Popen[str]:
        argv = [*JR2, "work", *self.source_args(), "--gate", "deploy", *opts, "--",
                sys.executable, "-I", "-S", str(self.tmp / "worker.py"), str(self.journal)]
        proc = subprocess.Popen(argv, cwd=self.tmp, env=self.env(len(self.procs), ask),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def ready_json(self) -> dict[str, Any]:
        out = jr2_here("ready", *self.source_args(), "--json", cwd=self.tmp, env=self.env(0))
        assert out.returncode == 0, out.stderr
        return dict(json.loads(out.stdout))

    def reasons(self, item: str) -> list[dict[str, Any]]:
        blocked = {e["id"]: e for e in self.ready_json()["blocked"]}
        return list(blocked[item]["reasons"]) if item in blocked else []

    def runs(self, item: str) -> list[tuple[str, str]]:
        """The (JR2_GATE_DEPLOY, reason) each run of `item` saw; asserts no runs overlap."""
        out: list[tuple[str, str]] = []
        running: dict[str, str] = {}
        text = self.journal.read_text() if self.journal.exists() else ""
        for ln in text.splitlines():
            kind, iid, pid, _, gate, why = ln.split()
            if kind == "start":
                assert iid not in running, f"{iid} run by {running[iid]} and {pid} at once"
                running[iid] = pid
                if iid == item:
                    out.append((gate, why))
            else:
                assert running.pop(iid) == pid
        return out

    def answer(self, item: str, verb: str, *, who: str = "alice", reason: str = "") -> None:
        """A person answers the gate `deploy` of `item`."""
        if self.tr is None:
            extra = ["--reason", reason] if reason else []
            res = jr2_here("local", verb, "b.toml", item, "deploy", *extra, cwd=self.tmp,
                           env=self.env(0))
            assert res.returncode == 0, res.stderr
            return
        text = f"/jr2 {verb} deploy {reason}".strip()
        if self.kind == "jira":
            self.tr.fake.add_comment(item, text, who)
            return
        self.tr.fake.add_comment("o/r", int(item.split("#")[1]), text, who)

    def state(self, item: str) -> str:
        if self.tr is None:
            from jr2_sources.trackers.local.store import ClaimStore

            dbs = list((self.tmp / "state" / "local").glob("*.sqlite"))
            if not dbs:  # no pool has opened the store yet
                return "open"
            with ClaimStore(dbs[0]) as store:
                out = store.state().outcomes.get(item)
            return out.status if out is not None else "open"
        if self.tr.is_done(item):
            return "done"
        return "failed" if "jr2:failed" in self.tr.labels(item) else "open"


@contextmanager
def setup(kind: str, tmp: Path, n: int = 1, *, cloud: bool = True) -> Iterator[Setup]:
    """`n` items on `kind` (`cloud=False`: the fake Jira is a Data Center)."""
    (tmp / "worker.py").write_text(WORKER)
    if kind == "local":
        lines = []
        for i in range(n):
            lines += ["[[items]]", f'id = "T-{i}"', f'title = "Item {i}"']
        (tmp / "b.toml").write_text("\n".join(lines) + "\n")
        s = Setup(kind, tmp, None, [f"T-{i}" for i in range(n)])
        try:
            yield s
        finally:
            _kill(s)
        return
    with tracker(kind, cloud=cloud) as tr:
        if kind == "github":
            tr.fake.permissions.update(alice="write", bob="maintain", mallory="read")
        else:  # Edit Issues, by account id on Cloud, by user name on Data Center
            tr.fake.editors.update(tr.fake.person(who)["accountId" if cloud else "name"]
                                   for who in ("alice", "bob"))
        s = Setup(kind, tmp, tr, tr.seed(n, 1))
        try:
            yield s
        finally:
            _kill(s)


def _kill(s: Setup) -> None:
    for p in s.procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        p.communicate(timeout=30)


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err


def awaiting(s: Setup, item: str) -> dict[str, Any]:
    [reason] = [r for r in s.reasons(item) if r["kind"] == "awaiting_approval"]
    return reason


def parked(s: Setup, item: str) -> bool:
    """Whether `jr2 ready` shows `item` awaiting approval (yet): a condition to wait for."""
    return any(r["kind"] == "awaiting_approval" for r in s.reasons(item))


@pytest.mark.parametrize("kind", KINDS)
def test_a_parked_item_frees_its_slot_and_an_answer_between_runs_is_honoured(
        tmp_path: Path, kind: str) -> None:
    """cap 1, two items: the first asks for approval and is parked, the slot runs the second;
    the pool ends deadlocked (exit 3) naming the gate; `jr2 ready --json` shows
    `awaiting_approval`. The gate is approved while no pool runs; the next `jr2 work` (a
    restart: nothing lost) runs it once more, with JR2_GATE_DEPLOY=approved, and it is done."""
    with setup(kind, tmp_path, n=2) as s:
        first, second = s.items
        rc, err = finish(s.start(ask=first))
        assert rc == 3, err[-3000:]
        assert "awaits approval of gate deploy" in err, err[-3000:]
        assert f"parked {first}: awaits approval of gate deploy" in err
        assert s.runs(first) == [("-", "-")]
        assert s.runs(second) == [("-", "-")]
        assert s.state(second) == "done" and s.state(first) == "open"
        reason = awaiting(s, first)
        assert reason["gate"] == "deploy" and reason["reason"] == "ship to production?"
        assert reason["since"].endswith("Z")
        if s.kind == "github":
            assert "jr2:awaiting-approval" in s.tr.labels(first)
            assert "jr2:claimed" not in s.tr.labels(first)
        s.answer(first, "approve")
        assert s.reasons(first) == []
        rc, err = finish(s.start(ask=first))
        assert rc == 0, err[-3000:]
        assert s.runs(first) == [("-", "-"), ("approved", "-")]
        assert s.state(first) == "done"
        if s.kind == "github":
            assert "jr2:awaiting-approval" not in s.tr.labels(first)


@pytest.mark.parametrize("kind", KINDS)
def test_a_rejection_runs_the_next_attempt_with_the_reason(tmp_path: Path, kind: str) -> None:
    """A rejection is handed to the next attempt (JR2_GATE_DEPLOY=rejected and the reason), so
    the worker can clean up; here it exits 0 and the item is done."""
    with setup(kind, tmp_path) as s:
        [item] = s.items
        assert finish(s.start(ask=item))[0] == 3
        s.answer(item, "reject", who="bob", reason="not on a Friday")
        rc, err = finish(s.start(ask=item))
        assert rc == 0, err[-3000:]
        assert s.runs(item) == [("-", "-"), ("rejected", "not_on_a_Friday")]


@pytest.mark.parametrize("kind", ["github", "jira"])
def test_an_answer_without_write_access_is_ignored_and_the_report_says_so(
        tmp_path: Path, kind: str) -> None:
    """`/jr2 approve deploy` by someone without write access (a read-only collaborator, a
    stranger; on Jira people without Edit Issues) counts for nothing and the report names
    them; a writer's answer does."""
    with setup(kind, tmp_path) as s:
        [item] = s.items
        assert finish(s.start(ask=item))[0] == 3
        s.answer(item, "approve", who="mallory")  # read access only
        s.answer(item, "approve", who="stranger")  # no collaborator: 404
        if kind == "github":  # posted with jr2's own token: no person's answer, not listed
            s.tr.fake.add_comment("o/r", int(item.split("#")[1]), "/jr2 approve deploy",
                                  s.tr.fake.login)
        reason = awaiting(s, item)
        who = ["mallory", "stranger"] if kind == "github" else ["acc-mallory", "acc-stranger"]
        assert reason["ignored_answers_by"] == who
        rc, err = finish(s.start(ask=item))
        assert rc == 3, err[-3000:]  # still waits: nothing ran
        assert s.runs(item) == [("-", "-")]
        assert f"ignored answers by {', '.join(who)}" in err
        s.answer(item, "approve", who="alice")
        rc, err = finish(s.start(ask=item))
        assert rc == 0, err[-3000:]
        assert s.runs(item) == [("-", "-"), ("approved", "-")]


@pytest.mark.parametrize("kind", KINDS)
def test_two_waiting_pools_run_an_approved_item_once(tmp_path: Path, kind: str) -> None:
    """Two pools with --wait share three items; one is parked. Approved while they run, it runs
    exactly once more, in one pool, never alongside its first run."""
    with setup(kind, tmp_path, n=3) as s:
        gated = s.items[1]
        procs = [s.start("--wait", "--cap", "2", ask=gated) for _ in range(2)]
        others = [i for i in s.items if i != gated]
        wait_for(lambda: all(s.state(i) == "done" for i in others), timeout=90, every=0.1)
        wait_for(lambda: parked(s, gated), timeout=60, every=0.2)
        s.answer(gated, "approve")
        wait_for(lambda: s.state(gated) == "done", timeout=90, every=0.1)
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            finish(p)
        assert s.runs(gated) == [("-", "-"), ("approved", "-")]
        assert all(len(s.runs(i)) == 1 for i in others)


def test_gate_is_refused_at_start_where_the_source_cannot_park() -> None:
    """A tracker without `approvals` cannot park an item: `--gate` is refused at start, in one
    line (`jr2 work` prints it and exits 2), before anything is claimed."""
    from jr2_core import Outcome
    from jr2_core.errors import UsageError
    from jr2_sources.readyset import Snapshot, SnapshotItem
    from jr2_sources.tracker import Tracker as Seam
    from jr2_sources.worksource import WorkSource

    class NoGates(Seam):
        name = "nogates:x"

        def snapshot(self) -> Snapshot:
            return Snapshot(self.name, [SnapshotItem("A")])

        def claim(self, item: SnapshotItem, holder: str, lease: float) -> bool:
            raise AssertionError("claimed")

        def renew(self, item_id: str, holder: str, lease: float) -> bool:
            return True

        def settle(self, item_id: str, holder: str, outcome: Outcome) -> None:
            raise AssertionError("settled")

    with pytest.raises(UsageError, match="cannot park an item awaiting approval, so it cannot "
                                         "use --gate"):
        WorkSource(NoGates(), holder="h", gates=["deploy"])
    WorkSource(NoGates(), holder="h")  # without --gate it runs as it always did


def test_a_bad_gate_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "T-0"\ntitle = "x"\n')
    proc = jr2_here("work", "local:b.toml", "--gate", "de ploy", "--", "true", cwd=tmp_path,
                    env={**os.environ, "JR2_STATE_DIR": str(tmp_path / "st")})
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "--gate" in line and "de ploy" in line


def test_jr2_send_answers_a_local_gate_of_a_live_run(tmp_path: Path) -> None:
    """`jr2 send approvals approve --input {"item", "gate"}` answers through the live run (the
    store records it) and wakes the pool: the item runs with JR2_GATE_DEPLOY=approved. A gate
    that awaits nothing is refused in one line, exit 2."""
    with setup("local", tmp_path) as s:
        [item] = s.items
        proc = s.start("--wait", ask=item)
        wait_for(lambda: s.runs(item) and parked(s, item), timeout=60, every=0.2)

        def send(event: str, **data: str) -> subprocess.CompletedProcess[str]:
            return jr2_here("send", "approvals", event, "--input", json.dumps(data),
                            cwd=tmp_path, env=s.env(0))

        res = send("approve", item=item, gate="deploy")
        assert res.returncode == 0, res.stderr
        wait_for(lambda: s.state(item) == "done", timeout=60, every=0.1)
        assert s.runs(item) == [("-", "-"), ("approved", "-")]
        res = send("reject", item=item, gate="deploy", reason="late")
        assert res.returncode == 2
        [line] = res.stderr.strip().splitlines()
        assert "not awaiting an answer" in line
        proc.send_signal(signal.SIGINT)
        finish(proc)


def test_a_label_answers_a_github_gate_by_whoever_added_it(tmp_path: Path) -> None:
    """GitHub: the label `jr2:approve:deploy` added by a read-only collaborator is ignored (who
    added it comes from the issue's events); `jr2:reject:deploy` added by a writer rejects it,
    and the next attempt runs with JR2_GATE_DEPLOY=rejected."""
    with setup("github", tmp_path) as s:
        [item] = s.items
        assert finish(s.start(ask=item))[0] == 3
        assert s.tr is not None
        number = int(item.split("#")[1])
        s.tr.fake.add_label_by("o/r", number, "jr2:approve:deploy", "mallory")
        assert awaiting(s, item)["ignored_answers_by"] == ["mallory"]
        s.tr.fake.add_label_by("o/r", number, "jr2:reject:deploy", "alice")
        assert s.reasons(item) == []
        rc, err = finish(s.start(ask=item))
        assert rc == 0, err[-3000:]
        assert s.runs(item) == [("-", "-"), ("rejected", "-")]


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud", "dc"])
def test_a_label_answers_a_jira_gate_by_whoever_added_it(tmp_path: Path, cloud: bool) -> None:
    """Jira Cloud and Data Center: the label `jr2:approve:deploy` added by someone without Edit
    Issues is ignored (who added it comes from the issue's change history: an account id on
    Cloud, a user name on Data Center) and named in the report; `jr2:reject:deploy` added by an
    editor rejects it, the next attempt runs with JR2_GATE_DEPLOY=rejected, and the answer
    labels stay: jr2 removes no label a person set."""
    with setup("jira", tmp_path, cloud=cloud) as s:
        [item] = s.items
        assert finish(s.start(ask=item))[0] == 3
        assert s.tr is not None
        s.tr.fake.edit(item, add="jr2:approve:deploy", by="mallory")
        assert awaiting(s, item)["ignored_answers_by"] == ["acc-mallory" if cloud else "mallory"]
        assert finish(s.start(ask=item))[0] == 3  # still waits: nothing ran
        s.tr.fake.edit(item, add="jr2:reject:deploy", by="alice")
        assert s.reasons(item) == []
        rc, err = finish(s.start(ask=item))
        assert rc == 0, err[-3000:]
        assert s.runs(item) == [("-", "-"), ("rejected", "-")]
        labels = s.tr.labels(item)
        assert "jr2:approve:deploy" in labels and "jr2:reject:deploy" in labels


def test_github_an_issue_closed_while_it_awaits_approval_loses_the_awaiting_label(
        tmp_path: Path) -> None:
    """A waiting pool parks #1 and runs #2; while nothing changes its polls write nothing and
    list no closed issues. A person closes #1: the pool's next delta sees it closed and takes
    `jr2:awaiting-approval` off with one DELETE. `jr2 ready` on a closed issue that still carries
    the label (put back by hand) sends no write and leaves it on."""
    with setup("github", tmp_path, n=2) as s:
        first, second = s.items
        number = int(first.split("#")[1])
        label = "/labels/jr2%3Aawaiting-approval"
        proc = s.start("--wait", ask=first)
        wait_for(lambda: "jr2:awaiting-approval" in s.tr.labels(first)
                 and s.state(second) == "done", timeout=60, every=0.1)

        def since_last_write() -> list[dict[str, Any]]:  # the settle of #2 may still be writing
            log = s.tr.log()
            writes = [i for i, e in enumerate(log) if e["method"] != "GET"]
            return log[writes[-1] + 1:] if writes else log

        # three polls in a row write nothing (a poll that wrote would never let this pass)
        wait_for(lambda: len([e for e in since_last_write()
                              if e["path"] == "/repos/o/r/issues"]) >= 3, timeout=30, every=0.1)
        quiet = since_last_write()
        assert [e for e in quiet if "closed" in str(e["query"])] == []
        s.tr.fake.close_issue("o/r", number, reason="not_planned")
        closed_at = len(s.tr.log())
        wait_for(lambda: "jr2:awaiting-approval" not in s.tr.labels(first), timeout=30,
                 every=0.1)
        after = s.tr.log()[closed_at:]
        assert [(e["method"], e["path"]) for e in after if e["method"] != "GET"] == [
            ("DELETE", f"/repos/o/r/issues/{number}{label}")]
        proc.send_signal(signal.SIGTERM)
        rc, err = finish(proc)
        assert rc == 130, err[-3000:]
        assert "Traceback" not in err
        assert s.tr.is_done(first) and s.runs(first) == [("-", "-")]

        s.tr.fake.set_labels("o/r", number, ["agent", "jr2:awaiting-approval"])
        before = len(s.tr.log())
        report = s.ready_json()
        assert first not in {e["id"] for group in ("ready", "blocked") for e in report[group]}
        assert [e for e in s.tr.log()[before:] if e["method"] != "GET"] == []
        assert "jr2:awaiting-approval" in s.tr.labels(first)


def test_github_an_issue_closed_while_no_pool_ran_loses_the_awaiting_label_at_the_next_work(
        tmp_path: Path) -> None:
    """A pool parks #1 and ends (exit 3). While no pool runs, a person closes #1, and #2 (done)
    gets the awaiting label back by hand next to a forged `jr2:gate` marker by someone the pool
    does not trust. `jr2 ready` writes nothing and leaves both labels. The next `jr2 work` lists
    the closed issues carrying the label once, at start, and takes it off #1 only (one DELETE),
    the issue whose thread holds jr2's own gate request; #2 keeps it."""
    from jr2_sources.kit.claims import render_marker

    with setup("github", tmp_path, n=2) as s:
        first, second = s.items
        one, two = (int(i.split("#")[1]) for i in s.items)
        rc, err = finish(s.start(ask=first))
        assert rc == 3, err[-3000:]
        assert "jr2:awaiting-approval" in s.tr.labels(first)
        s.tr.fake.close_issue("o/r", one, reason="not_planned")
        s.tr.fake.set_labels("o/r", two, [*s.tr.labels(second), "jr2:awaiting-approval"])
        s.tr.fake.add_comment("o/r", two, render_marker("gate", {"gate": "deploy"}, "forged"),
                              "mallory")

        before = len(s.tr.log())
        s.ready_json()
        assert [e for e in s.tr.log()[before:] if e["method"] != "GET"] == []
        assert "jr2:awaiting-approval" in s.tr.labels(first)

        before = len(s.tr.log())
        rc, err = finish(s.start())
        assert rc == 0, err[-3000:]
        log = s.tr.log()[before:]
        assert [(e["method"], e["path"]) for e in log if e["method"] != "GET"] == [
            ("DELETE", f"/repos/o/r/issues/{one}/labels/jr2%3Aawaiting-approval")]
        closed = [e for e in log if e["path"] == "/repos/o/r/issues"
                  and "state=closed" in str(e["query"])]
        assert len(closed) == 1, closed
        assert "jr2:awaiting-approval" not in s.tr.labels(first)
        assert "jr2:awaiting-approval" in s.tr.labels(second)
        assert s.runs(first) == [("-", "-")]
