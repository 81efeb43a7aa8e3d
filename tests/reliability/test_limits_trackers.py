"""Global caps and conflict groups on comment trackers (`--global-cap`, `--exclusive-by`,
`--control-issue`, `jr2_sources.capabilities.limits.comment_locks`), through real `jr2 work`
processes against the fake GitHub and the fake Jira (GitLab: the plugin's own tests).

The witness is the worker journal (`start|end|stop|orphan <item> <run> <t>`, see rel_trackers):
every run's interval is rebuilt from it, and at every instant the runs are counted in all and
per group. The lock comments on the coordination issue are read back from the fake.
"""

from __future__ import annotations

import math
import os
import signal
import time
from pathlib import Path

import pytest
from limits_journal import most_at_once, runs
from limits_race import race
from rel_trackers import Pools, Tracker, pools, tracker

GROUPS = ["--exclusive-by", "label:area/*", "--exclusive-by", "touches"]


def _seed(tr: Tracker, kinds: list[str]) -> tuple[str, list[str]]:
    """The coordination issue (outside the pools' label) and one issue per kind: `db` (label
    area/db), `ui` (a `Touches: area/ui` line), `free` (no group)."""
    gh = tr.fake
    control = gh.add_issue("o/r", "jr2 coordination (do not close)")
    ids = []
    for kind in kinds:
        labels = ["agent", "area/db"] if kind == "db" else ["agent"]
        body = "Touches: area/UI" if kind == "ui" else ""
        ids.append(f"o/r#{gh.add_issue('o/r', kind, body, labels=labels)}")
    tr.items = ids
    return f"o/r#{control}", ids


def _start(p: Pools, control: str, *opts: str, **kw: object) -> object:
    return p.start("--label", "agent", "--control-issue", control, *GROUPS, *opts, **kw)


def _live_locks(tr: Tracker, control: str) -> int:
    return sum(1 for c in tr.fake.comments_of("o/r", int(control.split("#")[1]))
               if c.body.startswith("<!-- jr2:lock"))


def _github_race(tmp_path: Path, k: int, kinds: list[str], global_cap: int) -> None:
    with tracker("github") as tr, pools(tmp_path, tr) as p:
        control, ids = _seed(tr, kinds)
        procs = [_start(p, control, "--cap", "2", "--global-cap", str(global_cap), seed=i,
                        durations="0.3:0.5") for i in range(k)]
        for proc in procs:
            rc, _, err = p.wait(proc, timeout=120 + 5 * len(kinds))  # type: ignore[arg-type]
            assert rc == 0, err
        done = runs(p.journal)
        assert sorted(done) == sorted(ids) and all(len(r) == 1 for r in done.values())
        assert all(tr.is_done(i) for i in ids)
        titles = {i: tr.fake.issue("o/r", int(i.split("#")[1])).title for i in ids}
        every = [iv for r in done.values() for iv in r]
        assert most_at_once(every) <= global_cap
        for group in ("db", "ui"):
            assert most_at_once([iv for i, r in done.items() for iv in r
                                 if titles[i] == group]) == 1, group
        assert _live_locks(tr, control) == 0


def test_four_pools_on_github_never_exceed_the_cap_nor_run_two_items_of_a_group(
        tmp_path: Path) -> None:
    """4 pools of --cap 2 (8 slots), --global-cap 3: at most 3 issues run at once, the db
    issues and the ui issues each one at a time, free issues side by side; every pool drains,
    every issue is closed once, and no lock comment is left on the coordination issue."""
    _github_race(tmp_path, 4, ["db"] * 3 + ["ui"] * 3 + ["free"] * 5, 3)


@pytest.mark.soak
@pytest.mark.parametrize("cap", [2, 5])
def test_eight_github_pools_race_over_many_issues_within_every_limit(
        tmp_path: Path, cap: int) -> None:
    _github_race(tmp_path, 8, ["db"] * 8 + ["ui"] * 8 + ["free"] * 20, cap)


@pytest.mark.soak
def test_eight_pools_under_a_global_cap_of_two_post_little_and_never_when_full(
        tmp_path: Path) -> None:
    """8 pools, `--global-cap 2`, 40 issues, the default poll (60 s; `bench/limits_race.py`
    prints the same race): at most 2 held at any sample, every issue done once, at most 1.2
    claim and 1.3 lock comments per worked issue, none posted while the listing the pool had
    just read showed the cap full."""
    f = race(tmp_path, 8, 40, 2, poll=60.0)
    assert set(f.exit_codes) == {0}
    assert f.once and f.worked == 40
    assert f.most_held <= 2
    assert f.claims_per_item <= 1.2 and f.locks_per_item <= 1.3, f.to_json()
    assert f.posted_when_full == 0, f.to_json()


def test_a_group_held_by_a_killed_github_pool_is_taken_after_its_lease_not_before(
        tmp_path: Path) -> None:
    """A pool holding group area/db is killed with SIGKILL: another pool, already running, and
    the pool restarted take the group only after the dead lock's lease ended (server time,
    whole seconds as GitHub records them); the other pool ran the issue outside any group while
    the group was held."""
    lease = 4.0
    with tracker("github") as tr, pools(tmp_path, tr) as p:
        control, ids = _seed(tr, ["db", "db", "free"])
        first = _start(p, control, "--lease", f"{lease}s", durations={ids[0]: 60, "*": 0.2})
        end = time.monotonic() + 60
        while ids[0] not in runs(p.journal):
            assert time.monotonic() < end and first.poll() is None  # type: ignore[attr-defined]
            time.sleep(0.05)
        other = _start(p, control, "--lease", f"{lease}s", seed=1, durations="0.2:0.3")
        while ids[2] not in runs(p.journal):
            assert time.monotonic() < end and first.poll() is None  # type: ignore[attr-defined]
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        first.communicate()  # type: ignore[attr-defined]
        [lock] = [c for c in tr.fake.comments_of("o/r", int(control.split("#")[1]))
                  if c.body.startswith("<!-- jr2:lock")]
        # GitHub's times are whole seconds (`updated_at`, the `Date` of a listing): the lease
        # ends at the recorded second + lease, by the server's (here: this machine's) clock;
        # the holder's own worker stops at least a second before that (`lease_margin`)
        lease_end = math.floor(lock.updated) + lease
        killed = time.time()
        later = [other, _start(p, control, "--lease", f"{lease}s", seed=2,
                               durations="0.2:0.3")]
        for proc in later:
            rc, _, err = p.wait(proc, timeout=120)  # type: ignore[arg-type]
            assert rc == 0, err
        done = runs(p.journal)
        starts = sorted(s for i in ids[:2] for s, _ in done[i] if s > killed)
        assert len(starts) == 2
        assert starts[0] >= lease_end, f"taken {lease_end - starts[0]:.2f}s before the lease end"
        assert starts[0] - lease_end < 5.0
        assert most_at_once([iv for i in ids[:2] for iv in done[i] if iv[0] > killed]) == 1
        [(free_start, _)] = done[ids[2]]
        assert free_start < killed  # outside any group: it ran while the group was held


def test_lock_comments_of_a_killed_github_pool_are_cleaned_up_by_two_pools_at_once(
        tmp_path: Path) -> None:
    """A pool killed with SIGKILL leaves its lock comment on the coordination issue; two pools
    started after it run past the dead lock's lease and grace, both may delete it at once (the
    second deletion's 404 is fine), both drain, and the thread ends with no lock comment."""
    lease = 3.0
    with tracker("github") as tr, pools(tmp_path, tr) as p:
        control, ids = _seed(tr, ["db"] + ["free"] * 8)
        number = int(control.split("#")[1])
        limits = ("--global-cap", "10", "--cap", "1", "--lease", f"{lease}s")
        first = _start(p, control, *limits, durations={ids[0]: 60, "*": 0.2})
        end = time.monotonic() + 60
        while ids[0] not in runs(p.journal):
            assert time.monotonic() < end and first.poll() is None  # type: ignore[attr-defined]
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        first.communicate()  # type: ignore[attr-defined]
        [dead] = [c for c in tr.fake.comments_of("o/r", number)
                  if c.body.startswith("<!-- jr2:lock")]
        later = [_start(p, control, *limits, seed=i, durations="2:2.2") for i in (1, 2)]
        for proc in later:
            rc, _, err = p.wait(proc, timeout=120)  # type: ignore[arg-type]
            assert rc == 0, err
        assert sorted(runs(p.journal)) == sorted(ids)
        assert _live_locks(tr, control) == 0
        gone = tr.fake.requests("DELETE", rf"/issues/comments/{dead.id}$")
        assert gone and all(e["status"] in (204, 404) for e in gone)


@pytest.mark.parametrize("missing", ["--control-issue", "limit"])
def test_control_issue_and_limits_come_together(tmp_path: Path, missing: str) -> None:
    with tracker("github") as tr, pools(tmp_path, tr) as p:
        control, _ = _seed(tr, ["free"])
        opts = ["--global-cap", "2"] if missing == "--control-issue" else [
            "--control-issue", control]
        rc, _, err = p.wait(p.start("--label", "agent", *opts))  # type: ignore[arg-type]
        assert rc == 2 and err.strip().count("\n") == 0
        assert ("need --control-issue ID" if missing == "--control-issue"
                else "--control-issue holds the claims") in err


def test_four_pools_on_jira_keep_a_group_and_the_cap_with_an_issue_outside_the_jql(
        tmp_path: Path) -> None:
    """The same mechanism on Jira (Cloud: the lock markers ride in comment properties): the
    coordination issue is outside the pools' JQL (no `agent` label), which jr2 writes to only
    because the user named it; 4 pools of --cap 2 under --global-cap 3 run the area/db issues
    one at a time, and leave no lock comment."""
    with tracker("jira") as tr, pools(tmp_path, tr) as p:
        jira = tr.fake
        control = jira.add_issue("jr2 coordination")
        db = [jira.add_issue(f"db {i}", labels=["agent", "area/db"]) for i in range(3)]
        free = [jira.add_issue(f"free {i}", labels=["agent"]) for i in range(3)]
        tr.items = db + free
        procs = [p.start("--control-issue", control, "--exclusive-by", "label:area/*", "--cap",
                         "2", "--global-cap", "3", seed=i, durations="0.3:0.5")
                 for i in range(4)]
        for proc in procs:
            rc, _, err = p.wait(proc, timeout=180)
            assert rc == 0, err
        done = runs(p.journal)
        assert sorted(done) == sorted(db + free) and all(len(r) == 1 for r in done.values())
        assert most_at_once([iv for r in done.values() for iv in r]) <= 3
        assert most_at_once([iv for i in db for iv in done[i]]) == 1
        posted = jira.requests("POST", f"/issue/{control}/comment$")
        assert len(posted) >= len(db + free)  # a lock per issue (losers' too), as properties
        assert all(e["body"]["properties"][0]["value"]["kind"] == "lock" for e in posted)
        assert not [b for b in jira.comment_bodies(control) if "jr2:lock" in b]
        assert jira.issue(control).labels == []  # only lock comments went there, now deleted


def test_four_pools_on_jira_never_run_two_issues_that_touch_the_same_thing(
        tmp_path: Path) -> None:
    """`--exclusive-by touches` on Jira: the `Touches:` lines are in the descriptions (read only
    because the option is given); 4 pools of --cap 2 run the issues touching `db` one at a time
    (whatever the case and the list or bold marks around the line), the others side by side;
    the `ui` issue joins `db`'s group by a second name. No lock comment is left."""
    with tracker("jira") as tr, pools(tmp_path, tr) as p:
        jira = tr.fake
        control = jira.add_issue("jr2 coordination")
        texts = ["Fix the index.\n\nTouches: db", "* *Touches:* DB, cache",
                 "Intro line\nTouches: ui, db", "h3. Plan\n\nTouches: cache"]
        db = [jira.add_issue(f"db {i}", labels=["agent"], description=t)
              for i, t in enumerate(texts[:3])]
        cache = jira.add_issue("cache", labels=["agent"], description=texts[3])
        free = [jira.add_issue(f"free {i}", labels=["agent"], description="no line here")
                for i in range(3)]
        tr.items = [*db, cache, *free]
        procs = [p.start("--control-issue", control, "--exclusive-by", "touches", "--cap", "2",
                         seed=i, durations="0.3:0.5") for i in range(4)]
        for proc in procs:
            rc, _, err = p.wait(proc, timeout=180)
            assert rc == 0, err
        done = runs(p.journal)
        assert sorted(done) == sorted(tr.items) and all(len(r) == 1 for r in done.values())
        assert most_at_once([iv for i in db for iv in done[i]]) == 1
        assert most_at_once([iv for i in (db[1], cache) for iv in done[i]]) == 1
        items = [e["body"]["fields"] for e in jira.requests("POST", "/search/jql$")
                 if "summary" in e["body"]["fields"]]  # the searches that read items
        assert items and all("description" in f for f in items)
        # the pools read Jira through REST v2 only: the descriptions came as Cloud's strings,
        # never as v3's ADF documents (trackers/jira/description.py, design notes)
        assert {e["path"].split("/")[3] for e in jira.requests()} == {"2"}
        assert not [b for b in jira.comment_bodies(control) if "jr2:lock" in b]


@pytest.mark.parametrize("cloud", [True, pytest.param(False, marks=pytest.mark.soak)],
                         ids=["cloud", "dc"])
def test_lock_comments_of_a_killed_jira_pool_are_cleaned_up_and_people_comments_stay(
        tmp_path: Path, cloud: bool) -> None:
    """Jira (Cloud: the lock marker rides in a comment property; Data Center: in the body): a
    pool holding the lock of an area/db issue under --global-cap 2 is killed with SIGKILL and
    leaves its lock comment on the coordination issue. Two pools of --cap 2 started at once
    run past the dead lock's lease and grace: at most 2 issues run at any instant (the killed
    pool's run included) and only 1 while the dead lock's lease lasts; both drain, the dead
    lock is deleted (a second deletion's 404 is fine), and the thread ends with no jr2 lock
    comment and every person's comment as it was, one that pastes a lock marker included."""
    lease = 3.0
    with tracker("jira", cloud=cloud) as tr, pools(tmp_path, tr) as p:
        jira = tr.fake
        control = jira.add_issue("jr2 coordination")
        # a pasted marker that holds nothing (lease 0: the first pool takes the db issue at once)
        marker = ('<!-- jr2:lock {"groups": ["area/db"], "holder": "alice", "item": "ENG-9", '
                  '"lease": 0, "nonce": "0"} -->')
        people = [jira.add_comment(control, "please keep this thread tidy", "alice"),
                  jira.add_comment(control, f"{marker}\nwhat does this lock mean?", "bob")]
        before = {c["id"]: b for c, b in zip(jira.issue(control).comments,
                                             jira.comment_bodies(control), strict=True)}
        ids = [jira.add_issue("db", labels=["agent", "area/db"])]
        limits = ("--control-issue", control, "--exclusive-by", "label:area/*",
                  "--global-cap", "2", "--lease", f"{lease}s")
        first = p.start(*limits, "--cap", "1", durations={ids[0]: 60, "*": 0.2})
        end = time.monotonic() + 60
        while ids[0] not in runs(p.journal):
            assert time.monotonic() < end and first.poll() is None
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        # the other issues come now: the later pools run all of them, past the dead lock's
        # grace (the killed pool, which picks any ready issue first, ran the db one only)
        ids += [jira.add_issue(f"free {i}", labels=["agent"]) for i in range(8)]
        tr.items = ids
        with jira.lock:
            [(dead, updated)] = [(c["id"], c["updated"]) for c, b in zip(
                jira.issue(control).comments, jira.comment_bodies(control), strict=True)
                if c["id"] not in people and "jr2:lock" in b]
        killed = time.time()
        later = [p.start(*limits, "--cap", "2", seed=i, durations="2:2.2") for i in (1, 2)]
        for proc in later:
            rc, _, err = p.wait(proc, timeout=120)
            assert rc == 0, err
        done = runs(p.journal)
        assert sorted(done) == sorted(ids)
        assert most_at_once([iv for r in done.values() for iv in r]) <= 2
        # the dead lock keeps its slot until its lease ends (server time, milliseconds)
        held = [(s, min(e, updated + lease)) for r in done.values() for s, e in r
                if killed < s < updated + lease]
        assert most_at_once(held) <= 1
        assert all(tr.is_done(i) for i in ids)
        after = {c["id"]: b for c, b in zip(jira.issue(control).comments,
                                            jira.comment_bodies(control), strict=True)}
        assert after == {i: before[i] for i in people}
        gone = jira.requests("DELETE", rf"/issue/{control}/comment/{dead}$")
        assert gone and all(e["status"] in (204, 404) for e in gone)
        assert not [e for e in jira.requests("DELETE", rf"/issue/{control}/comment/")
                    if int(e["path"].rsplit("/", 1)[1]) in people]
