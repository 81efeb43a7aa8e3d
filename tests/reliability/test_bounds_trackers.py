"""What an item's content or a worker's words can make jr2 write stays within the tracker's own
limits (GitHub refuses a comment body over 65,536 characters), and a refusal of one item's lock
skips that item only; through real `jr2 work` processes against the fake GitHub, which refuses
an overlong body as GitHub does (422 "Validation Failed", "body is too long ...").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from limits_journal import runs
from rel_trackers import JR2, Tracker, pools, tracker

from jr2_sources.testing.fakes.github_server import MAX_BODY, Reply

WORKER = r'''
import os, sys, time
journal, size = sys.argv[1], int(sys.argv[2])
item = os.environ["JR2_ITEM_ID"]
gate = os.environ.get("JR2_GATE_DEPLOY", "-")
with open(journal, "a") as f:
    f.write(f"{item} {gate}\n")
if gate == "-" and item in os.environ.get("ASK", "").split(","):
    print("jr2: await-approval deploy " + "x" * size)
    sys.exit(79)
'''


def _seed(tr: Tracker, bodies: list[str]) -> tuple[str, list[str]]:
    gh = tr.fake
    control = gh.add_issue("o/r", "jr2 coordination (do not close)")
    ids = [f"o/r#{gh.add_issue('o/r', f'item {i}', body, labels=['agent'])}"
           for i, body in enumerate(bodies)]
    tr.items = ids
    return f"o/r#{control}", ids


def _number(item: str) -> int:
    return int(item.split("#")[1])


def _bodies_posted(tr: Tracker, number: int) -> list[int]:
    """The length of every comment body jr2 asked GitHub to write on issue `number`."""
    sizes = []
    for e in tr.fake.requests(None, rf"/issues/({number}/comments|comments/\d+)$"):
        body = (e.get("body") or {}).get("body") if isinstance(e.get("body"), dict) else None
        if e["method"] in ("POST", "PATCH") and isinstance(body, str):
            sizes.append(len(body))
    return sizes


def test_an_issue_naming_9000_groups_keeps_its_lock_comment_within_the_limit_and_all_run(
        tmp_path: Path) -> None:
    """One body with 9,000 `Touches:` names, beside issues of one of those groups and of none:
    every lock comment jr2 writes stays within 65,536 characters (GitHub refuses none), every
    issue runs once and is closed, the pool ends drained (exit 0), and the big issue never ran
    beside an issue of a group it names."""
    names = ", ".join(f"component-{i:05d}" for i in range(9000))
    with tracker("github") as tr, pools(tmp_path, tr) as p:
        tr.fake.capture = True
        control, ids = _seed(tr, [f"Touches: {names}", "Touches: component-00042", "", ""])
        proc = p.start("--label", "agent", "--control-issue", control, "--exclusive-by",
                       "touches", "--global-cap", "3", "--cap", "3", durations="0.3:0.4")
        rc, out, err = p.wait(proc)
        assert rc == 0, err
        assert "drained: 4 done" in out + err
        assert all(tr.is_done(i) for i in ids)
        sizes = _bodies_posted(tr, _number(control))
        assert sizes and max(sizes) <= MAX_BODY, max(sizes)
        assert all(e["status"] != 422 for e in tr.fake.requests())
        done = runs(p.journal)
        assert all(len(done[i]) == 1 for i in ids)
        (big,), (same,) = done[ids[0]], done[ids[1]]
        assert big[1] <= same[0] or same[1] <= big[0]  # one group: never side by side


def test_a_refused_lock_comment_skips_that_item_and_says_what_github_said(
        tmp_path: Path) -> None:
    """GitHub refuses the first lock comment (422 "Validation Failed", body too long): that
    issue is skipped for the run and named with GitHub's words, not blamed on the token's
    permissions; the other issues run and the pool ends drained, exit 0."""
    with tracker("github") as tr, pools(tmp_path, tr) as p:
        control, ids = _seed(tr, ["", "", ""])
        refused: list[str] = []

        def refuse(method: str, path: str) -> None:
            if method == "POST" and path.endswith(f"/issues/{_number(control)}/comments") and (
                    not refused):
                refused.append(path)
                raise Reply(422, {"message": "Validation Failed", "errors": [
                    {"resource": "IssueComment", "code": "custom", "field": "body",
                     "message": "body is too long (maximum is 65536 characters)"}]})

        tr.fake.hooks.append(refuse)
        proc = p.start("--label", "agent", "--control-issue", control, "--global-cap", "1")
        rc, _, err = p.wait(proc)
        assert rc == 0, err
        assert refused
        [skipped] = [i for i in ids if not tr.is_done(i)]
        line = next(ln for ln in err.splitlines() if "skipping" in ln)
        assert skipped in line and "body is too long (maximum is 65536 characters)" in line
        assert "HTTP 422" in line and "read & write" not in err and "token" not in line
        assert sorted(runs(p.journal)) == sorted(set(ids) - {skipped})


def _work(tr: Tracker, tmp: Path, journal: Path, worker: Path, size: int, *opts: str,
          ask: str = "") -> subprocess.CompletedProcess[str]:
    env = tr.env(tmp / "state", ASK=ask)
    argv = [*JR2, "work", *tr.source_args(), "--label", "agent", "--gate", "deploy", *opts,
            "--", sys.executable, "-I", str(worker), str(journal), str(size)]
    return subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_a_100000_character_gate_reason_parks_the_item_with_a_request_an_answer_matches(
        tmp_path: Path) -> None:
    """A worker asks for approval with a 100,000-character reason: the pool goes on (the other
    issue is done, the run ends deadlocked on the gate, exit 3, not an error), the request on
    the issue fits GitHub's limit with the reason cut and a note, and a person's `/jr2 approve
    deploy` answers it: the next run gives the worker `JR2_GATE_DEPLOY=approved`."""
    worker, journal = tmp_path / "worker.py", tmp_path / "journal"
    worker.write_text(WORKER)
    with tracker("github") as tr:
        tr.fake.capture = True
        _, (asks, plain) = _seed(tr, ["", ""])
        first = _work(tr, tmp_path, journal, worker, 100_000, ask=asks)
        assert first.returncode == 3, first.stderr
        assert "awaits approval of gate deploy" in first.stderr
        assert tr.is_done(plain) and not tr.is_done(asks)
        assert "jr2:awaiting-approval" in tr.labels(asks)
        sizes = _bodies_posted(tr, _number(asks))
        assert sizes and max(sizes) <= MAX_BODY
        [request] = [c.body for c in tr.fake.comments_of("o/r", _number(asks))
                     if c.body.startswith("<!-- jr2:gate")]
        assert "(cut: 100,000 characters in all)" in request and len(request) < 5000
        tr.fake.add_comment("o/r", _number(asks), "/jr2 approve deploy", "octocat")
        second = _work(tr, tmp_path, journal, worker, 100_000, ask=asks)
        assert second.returncode == 0, second.stderr
        assert tr.is_done(asks)
        assert journal.read_text().splitlines()[-1] == f"{asks} approved"

