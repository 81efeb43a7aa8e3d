"""What a worker gets of its item's feedback (`capabilities.feedback.report`): both files at most
256 KiB with long bodies cut and the cut said, the same feedback the same key, new feedback a
new key, and the files private."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from jr2_sources.capabilities.feedback.report import CUT, LIMIT, Check, Feedback, Note, write


def feedback(body: str = "rename it") -> Feedback:
    return Feedback("abc123", "https://github.com/o/r/pull/2",
                    [Check("ci", "failure", "1 test failed", "https://ci/1", "7")],
                    [Note("octocat", body, ref="9")],
                    [Note("octocat", "here", "src/a.py", 3, "11")])


def test_long_bodies_are_cut_with_a_note_and_both_files_stay_under_the_limit() -> None:
    js, tx = feedback("x" * (3 * LIMIT)).bounded()
    assert len(js.encode()) <= LIMIT and len(tx.encode()) <= LIMIT
    data = json.loads(js)
    assert data["reviews"][0]["body"].endswith(CUT) and CUT in tx
    assert data["comments"][0]["body"] == "here"  # a short body is kept whole
    js, tx = feedback().bounded()
    assert CUT not in js and CUT not in tx


def test_the_same_feedback_has_the_same_key_and_new_feedback_a_new_one() -> None:
    assert feedback().key == feedback("another body").key  # what was found, not its words
    other = feedback()
    other.checks.append(Check("lint", "failure", ref="8"))
    assert other.key != feedback().key
    assert Feedback("def456", None, feedback().checks).key.startswith("def456:")
    assert feedback().reason() == ("feedback on abc123: check ci failure, changes requested "
                                   "by octocat")


def test_the_files_are_private_and_named_in_the_variables(tmp_path: Path) -> None:
    item = tmp_path / "o-r-1.json"
    env = write(feedback().to_json(), item)
    assert set(env) == {"JR2_FEEDBACK_JSON", "JR2_FEEDBACK_TEXT"}
    for path in env.values():
        assert stat.S_IMODE(Path(path).stat().st_mode) == 0o600
    assert json.loads(Path(env["JR2_FEEDBACK_JSON"]).read_text())["head_sha"] == "abc123"
    assert "Review comment by octocat on src/a.py:3" in Path(env["JR2_FEEDBACK_TEXT"]).read_text()
    assert write(None, item) == {}
