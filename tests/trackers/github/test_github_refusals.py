"""One issue that refuses a write skips that issue (ItemError), never ends the run or blames the
token (finding 2); `--assign` with an App token is refused at start, and no claim label is ever
left behind when marking a won claim fails (finding 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gh_helpers import make_adapter, make_client
from pydantic import SecretStr

from jr2_core.errors import ConfigError, ItemError
from jr2_sources.readyset import SnapshotItem
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.client import GitHubClient

APP_TOKEN = "ghs_APPinstallationTOKEN0123456789"


def app_client(base: str) -> GitHubClient:
    client = make_client(base)
    client._token = SecretStr(APP_TOKEN)
    return client


def test_a_locked_issue_refuses_the_claim_comment_and_only_that_issue_is_skipped(
        fake: FakeGitHub) -> None:
    locked, other = fake.add_issue("o/r", "locked"), fake.add_issue("o/r", "fine")
    fake.lock_issue("o/r", locked)
    adapter = make_adapter(fake.url, client=app_client(fake.url))
    with pytest.raises(ItemError) as err:
        adapter.claim(SnapshotItem(id=f"o/r#{locked}"), "pool-1", 60)
    text = str(err.value)
    assert "locked" in text and "o/r#1" in text and "token" not in text
    assert fake.comments_of("o/r", locked) == [] and fake.issue("o/r", locked).labels == []
    assert adapter.claim(SnapshotItem(id=f"o/r#{other}"), "pool-1", 60)  # the run goes on


def test_a_deleted_issue_is_an_item_error(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    fake.delete_issue("o/r", n)
    with pytest.raises(ItemError, match=r"o/r#1 was deleted \(HTTP 410\)"):
        make_adapter(fake.url).claim(SnapshotItem(id=f"o/r#{n}"), "pool-1", 60)


def test_a_read_only_token_is_still_the_runs_error_not_one_items(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    fake.read_only_tokens.add("ghp_TESTSECRETtoken0123456789")
    with pytest.raises(Exception) as err:
        make_adapter(fake.url).claim(SnapshotItem(id=f"o/r#{n}"), "pool-1", 60)
    assert not isinstance(err.value, ItemError) and "token cannot" in str(err.value)


def test_assign_with_an_app_token_is_refused_at_start_in_one_line(fake: FakeGitHub) -> None:
    with pytest.raises(ConfigError) as err:
        make_adapter(fake.url, client=app_client(fake.url), assign=True)
    assert "--assign" in str(err.value) and "\n" not in str(err.value)
    assert APP_TOKEN not in str(err.value) and fake.requests() == []
    make_adapter(fake.url, client=app_client(fake.url), assign=True, read_only=True)  # a report


def test_no_claim_label_stays_behind_when_marking_a_won_claim_fails(fake: FakeGitHub) -> None:
    n = fake.add_issue("o/r")
    fake.fault(422, method="POST", path=r"/assignees$", message="Validation Failed")
    adapter = make_adapter(fake.url, assign=True)
    with pytest.raises(Exception, match="422"):
        adapter.claim(SnapshotItem(id=f"o/r#{n}"), "pool-1", 60)
    assert fake.issue("o/r", n).labels == []
    (comment,) = fake.comments_of("o/r", n)
    assert "jr2:released" in comment.body


def test_a_run_whose_only_refusal_is_a_locked_issue_ends_drained(fake: FakeGitHub,
                                                                  tmp_path: Path) -> None:
    """A locked issue is skipped (the Actions token cannot comment on it); every other item is
    done, so the run ends `drained`, exit 0, and the summary and `--json` name the skipped one."""
    locked = fake.add_issue("o/r", "locked")
    fake.add_issue("o/r", "fine")
    fake.lock_issue("o/r", locked)
    env = dict(os.environ, GITHUB_API_URL=fake.url, GITHUB_TOKEN=APP_TOKEN,
               JR2_STATE_DIR=str(tmp_path / ".jr2"))
    res = subprocess.run([sys.executable, "-m", "jr2_core", "work", "github:o/r",
                          "--write-spacing", "0.001", "--json", "--", "true"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "drained: 1 done" in res.stderr
    assert "skipped o/r#1: the tracker refused the claim" in res.stderr
    out = json.loads(res.stdout)
    assert out["output"]["status"] == "drained" and list(out["output"]["items"]) == ["o/r#2"]
    assert list(out["skipped"]) == ["o/r#1"] and "locked" in out["skipped"]["o/r#1"]
