"""Options, ids, GITLAB_URL / GITLAB_TOKEN, and blockers written in descriptions."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jr2_core import ConfigError
from jr2_gitlab.client import api_url, resolve_token
from jr2_gitlab.config import GitLabConfig
from jr2_gitlab.refs import body_refs, project_of_web_url, split_id


def test_targets_allow_nested_groups_and_refuse_junk() -> None:
    assert GitLabConfig(target="g/sub/p.git").target == "g/sub/p"
    for bad in ("p", "g/p#1", "g p/x"):
        with pytest.raises(ValidationError):
            GitLabConfig(target=bad)


def test_on_success_label_needs_a_distinct_done_label() -> None:
    with pytest.raises(ValidationError):
        GitLabConfig(target="g/p", on_success="label")
    with pytest.raises(ValidationError):
        GitLabConfig(target="g/p", on_success="label", done_label="jr2:claimed")
    assert GitLabConfig(target="g/p", on_success="label", done_label="done").done_label == "done"


def test_gitlab_url_defaults_to_gitlab_com_and_accepts_self_managed() -> None:
    assert api_url({}) == "https://gitlab.com/api/v4"
    assert api_url({"GITLAB_URL": "http://127.0.0.1:8080/"}) == "http://127.0.0.1:8080/api/v4"
    assert api_url({"GITLAB_URL": "https://git.corp/api/v4"}) == "https://git.corp/api/v4"
    with pytest.raises(ConfigError):
        api_url({"GITLAB_URL": "git.corp"})


def test_the_token_is_a_secret_and_required() -> None:
    token = resolve_token({"GITLAB_TOKEN": "glpat-abcdef123456"})
    assert "glpat" not in repr(token) and token.get_secret_value() == "glpat-abcdef123456"
    with pytest.raises(ConfigError, match="GITLAB_TOKEN"):
        resolve_token({})


def test_ids_web_urls_and_description_refs() -> None:
    assert split_id("g/sub/p#12") == ("g/sub/p", 12)
    assert project_of_web_url("https://h/g/sub/p/-/issues/7") == ("g/sub/p", 7)
    assert project_of_web_url("https://h/g/p/-/work_items/3") == ("g/p", 3)
    text = "Depends on #12, #13 and other/lib#4.\nBlocked by #2. Relates to #9. See #1."
    assert body_refs(text, "g/p", 1) == ["g/p#12", "g/p#13", "other/lib#4", "g/p#2"]
