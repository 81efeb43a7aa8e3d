"""Body reference parsing is linear in the body's length: anyone who can open an issue can write
its body (up to GitHub's 65,536 characters), and every poll parses it."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jr2_sources.trackers.github.refs import body_refs

MAX_BODY = 65_536  # GitHub's limit on an issue body
# pieces that make regex engines backtrack: unclosed comments and fences, keywords, references
PIECES = ["<!--", "-->", "<!-", "```", "~~~", "`", "depends on", "Depends on:", "blocked by",
          "needs", " ", "\n", ",", " and ", "&", "#1", "#", "o/r#2", "o/", "a", "-", "/",
          "https://github.com/o/r/issues/3", "https://x/", "<!-- depends on #4"]
SECONDS_PER_CHAR = 5e-6  # ~0.33 s for a maximal body; the quadratic parser took 450 us/char


def _seconds(body: str) -> float:
    """CPU seconds of one parse: other processes on a busy machine do not count (wall time
    under CI's load made this fail with a linear parser)."""
    start = time.process_time()
    body_refs(body, "o/r", 99)
    return time.process_time() - start


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
def test_time_per_character_is_bounded_on_adversarial_bodies(pattern: list[str]) -> None:
    unit = "".join(pattern)
    body = (unit * (MAX_BODY // len(unit) + 1))[:MAX_BODY]
    assert min(_seconds(body) for _ in range(2)) / len(body) < SECONDS_PER_CHAR


def test_an_unclosed_comment_of_maximal_length_parses_quickly() -> None:
    body = "<!--" * (MAX_BODY // 4)
    assert _seconds(body) < MAX_BODY * SECONDS_PER_CHAR


def test_a_run_of_keywords_joined_by_dashes_parses_quickly() -> None:
    """`needs-needs-...` is one run of name characters: an unbounded owner pattern rescanned it
    after every keyword (8 s for a maximal body; names are bounded by GitHub's limits now)."""
    for unit in ("needs-", "depends on o.-", "needs https://a-", "needs a/a-"):
        body = (unit * (MAX_BODY // len(unit) + 1))[:MAX_BODY]
        assert _seconds(body) < MAX_BODY * SECONDS_PER_CHAR
    assert body_refs("needs " + "a" * 39 + "/r#6", "o/r") == ["a" * 39 + "/r#6"]
    assert body_refs("needs " + "a" * 40 + "/r#6", "o/r") == []  # no GitHub owner is that long


def test_an_unclosed_comment_hides_the_rest_of_the_body() -> None:
    """As GitHub renders it: an HTML comment never closed runs to the end of the body."""
    assert body_refs("Depends on #1\n<!-- draft: depends on #2", "o/r") == ["o/r#1"]
    assert body_refs("<!-- x --> Depends on #3", "o/r") == ["o/r#3"]
