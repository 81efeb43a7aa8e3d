"""`GitHubConfig` validation through the registry (one-line errors) and body-text blockers."""

from __future__ import annotations

import pytest

from jr2_core.errors import ConfigError
from jr2_sources.registry import SourceKind, options_to_values, validate_config
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.refs import body_refs, id_of_issue_url, repo_of_api_url, split_id

KIND = SourceKind("github", GitHubConfig, lambda c, e: None)


def parse_options(kind: SourceKind, target: str, args: list[str]) -> object:
    """Options as the command line gives them, validated by the kind's model."""
    return validate_config(kind, {"target": target, **options_to_values(kind, args)})


def test_options_parse_with_defaults() -> None:
    cfg = parse_options(KIND, "octo/app", ["--label", "agent", "--label", "ready",
                                           "--priority-label", "priority:high=1",
                                           "--write-spacing", "0.25",
                                           "--poll-every", "2m", "--assign"])
    assert isinstance(cfg, GitHubConfig)
    assert cfg.label == ["agent", "ready"] and cfg.assign and cfg.poll_every == 120.0
    assert cfg.priorities() == {"priority:high": 1} and cfg.write_spacing == 0.25
    assert (cfg.claim_label, cfg.failed_label, cfg.on_success) == ("jr2:claimed", "jr2:failed",
                                                                  "close")
    assert cfg.owner == "octo" and cfg.repo == "app"


@pytest.mark.parametrize(("target", "args", "needle"), [
    ("not-a-repo", [], "target"),
    ("o/r", ["--priority-label", "high"], "--priority-label"),
    ("o/r", ["--on-success", "label"], "--done-label"),
    ("o/r", ["--on-success", "reopen"], "--on-success"),
    ("o/r", ["--failed-label", "jr2:claimed"], "--failed-label"),
    ("o/r", ["--on-success", "label", "--done-label", "jr2:failed"], "--done-label"),
    ("o/r", ["--write-spacing", "0"], "--write-spacing"),
    ("o/r", ["--done-when", "merged", "--base", "refs/tags/v1"], "--base"),
])
def test_bad_options_are_one_line_errors(target: str, args: list[str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_options(KIND, target, args)
    msg = str(info.value)
    assert "\n" not in msg and needle in msg and msg.startswith("github: ")


def test_a_full_ref_as_base_is_its_branch() -> None:
    cfg = parse_options(KIND, "o/r", ["--done-when", "merged", "--base", "refs/heads/master"])
    assert isinstance(cfg, GitHubConfig) and cfg.base == "master"  # as a PR's base names it


@pytest.mark.parametrize(("body", "expected"), [
    ("Depends on #12", ["o/r#12"]),
    ("depends on #12, #13 and #14", ["o/r#12", "o/r#13", "o/r#14"]),
    ("BLOCKED BY: octo/lib#3 & #4", ["octo/lib#3", "o/r#4"]),
    ("Needs https://github.com/octo/lib/issues/9 and https://ghe.corp/a/b/pull/2",
     ["octo/lib#9", "a/b#2"]),
    ("blocked by O/R#12", ["o/r#12"]),  # the target's spelling, case-insensitively
    ("depends on #5, #6", ["o/r#6"]),  # #5 is the issue itself
    ("depends on #6 (see below) and #7", ["o/r#6"]),  # the list ends at other text
    ("depends on #6\nblocked by #6\nneeds o/r#6", ["o/r#6"]),  # duplicates dropped
    ("depends on #5", []),  # self-reference dropped
    ("mentions #7 and fixes #8", []),
    ("```\ndepends on #7\n```\n`blocked by #8` but needs #9", ["o/r#9"]),
    ("depends on #12abc", []),
    ("", []),
])
def test_body_refs(body: str, expected: list[str]) -> None:
    assert body_refs(body, "o/r", 5) == expected


def test_id_helpers() -> None:
    assert split_id("octo/app#12") == ("octo/app", 12)
    with pytest.raises(ValueError):
        split_id("ENG-12")
    assert repo_of_api_url("https://api.github.com/repos/octo/app") == "octo/app"
    assert id_of_issue_url("https://ghe.corp/api/v3/repos/octo/app/issues/4") == "octo/app#4"
    assert id_of_issue_url(None) is None
