"""Requests of the feedback loop (`jr2 work --on-feedback rerun`) against the fake GitHub: a
waiting poll (a delta reading, nothing changed) with N issues in review, with the loop off and
on, what sending one issue back costs (the reads of its feedback and the two writes), and
what a read-only report (`jr2 ready`, which shows where a person stopped the loop) costs over
the N issues put in review by a pool with the loop off and on, counted from the fake's request
log. Run from the repository root:
`.venv/bin/python bench/feedback_poll.py [--sizes 1,10,100]`.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from pydantic import SecretStr

from jr2_core import Outcome
from jr2_sources.capabilities.attempts import Attempt
from jr2_sources.readyset import SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.client import GitHubClient
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.tracker import GitHubTracker


def pool(fake: FakeGitHub, state: Path, loop: bool, read_only: bool = False) -> GitHubTracker:
    config = GitHubConfig(target="o/r", write_spacing=0.001, done_when="merged",
                          on_success="review")
    client = GitHubClient(fake.url, SecretStr("x"), label="github:o/r", write_spacing=0.001)
    adapter = GitHubTracker(config, SourceEnv(state_dir=state, read_only=read_only),
                            client=client)
    if loop:
        adapter.start_feedback(3, here=True)
    return adapter


def measure(n: int, loop: bool) -> tuple[float, int, int]:
    """Requests of a waiting poll with `n` issues in review, of sending one back, and of a
    read-only report over the `n` (put in review by a pool with the loop `loop`)."""
    with FakeGitHub() as fake, tempfile.TemporaryDirectory() as d:
        fake.next_number.setdefault("o/r", 1)
        worker = pool(fake, Path(d) / "w", loop)
        numbers = [fake.add_issue("o/r", f"issue {i}") for i in range(n)]
        prs = {}
        for number in numbers:
            assert worker.claim(SnapshotItem(id=f"o/r#{number}", title="x"), "w", 600)
            prs[number] = fake.pulls.open_pr("o/r", f"jr2/issue-{number}")
            worker.finish(f"o/r#{number}", "w", Outcome(status="done"), Attempt(1))
        before = len(fake.requests())
        pool(fake, Path(d) / "r", False, read_only=True).snapshot()  # `jr2 ready`
        report = len(fake.requests()) - before
        adapter = pool(fake, Path(d) / "p", loop)
        adapter.changes()  # the full reading a pool starts from
        adapter.changes()
        polls = 5
        before = len(fake.requests())
        for _ in range(polls):
            adapter.changes()
        per_poll = (len(fake.requests()) - before) / polls
        first = numbers[0]
        fake.pulls.add_check("o/r", fake.pulls.pull("o/r", prs[first]).head_sha,
                             conclusion="failure")
        before = len(fake.requests())
        adapter.changes()
        back = len(fake.requests()) - before
        return per_poll, back, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,100")
    args = ap.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        off, _, plain = measure(n, False)
        on, back, looped = measure(n, True)
        print(f"N={n}: waiting poll {off:.1f} requests with the loop off, {on:.1f} on "
              f"({on / off:.2f}x); a red check found and the issue sent back: {back} requests; "
              f"jr2 ready: {plain} requests (put in review with the loop off), {looped} (on)")


if __name__ == "__main__":
    main()
