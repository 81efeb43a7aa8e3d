"""What `--done-when merged` adds to a GitHub snapshot, against the fake GitHub.

    python bench/github_merged_cost.py

For N open issues and E random dependency edges (seeded), a snapshot as `jr2 work` takes it, then
the same again with nothing changed, with `--done-when closed` and `merged`: REST requests (an
unchanged page is a free 304) and GraphQL queries (never conditional). Target for `merged`:
ceil(N/100) REST + ceil(B/100) GraphQL, B = open issues that block something.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pydantic import SecretStr  # noqa: E402

from jr2_sources.registry import SourceEnv  # noqa: E402
from jr2_sources.testing.fakes.github_server import FakeGitHub  # noqa: E402
from jr2_sources.trackers.github.client import GitHubClient  # noqa: E402
from jr2_sources.trackers.github.config import GitHubConfig  # noqa: E402
from jr2_sources.trackers.github.tracker import GitHubTracker  # noqa: E402


def adapter(url: str, done_when: str) -> GitHubTracker:
    client = GitHubClient(url, SecretStr("x"), label="github:o/r", write_spacing=0.0)
    return GitHubTracker(GitHubConfig(target="o/r", done_when=done_when),
                         SourceEnv(state_dir=ROOT / ".jr2-bench", read_only=False), client=client)


def main() -> None:
    print("N, edges | mode   | fresh: REST + GraphQL | unchanged poll: REST (304s) + GraphQL")
    for n, e in ((100, 30), (1000, 300), (10000, 300)):
        fake = FakeGitHub().start()
        for i in range(1, n + 1):
            fake.add_issue("o/r", f"Issue {i}")
        rnd = random.Random(7)
        for _ in range(e):
            a, b = sorted(rnd.sample(range(1, n + 1), 2))
            fake.add_dependency("o/r", b, a)
        for mode in ("closed", "merged"):
            source = adapter(fake.url, mode)
            counts = []
            for _ in range(2):
                fake.clear_log()
                source.snapshot()
                sent = fake.requests()
                gql = sum(1 for r in sent if r["path"] == "/graphql")
                not_modified = sum(1 for r in sent if r["status"] == 304)
                counts.append((len(sent) - gql, not_modified, gql))
            (rest, _, gql), (rest2, nm2, gql2) = counts
            print(f"{n:>6}, {e:>3} | {mode:<6} | {rest} + {gql} | {rest2} ({nm2}) + {gql2}")
            source.close()
        fake.stop()


if __name__ == "__main__":
    main()
