"""JQL building and the options: ORDER BY stays last, only the user's filter selects work."""

from __future__ import annotations

import pytest

from jr2_core.errors import ConfigError
from jr2_sources.trackers.jira.config import JiraConfig, resolve_auth, server_url
from jr2_sources.trackers.jira.jql import marked_outside_jql, scope_jql, split_order_by

LABELS = ("jr2:claimed", "jr2:failed")


def test_scope_keeps_the_users_order_by_at_the_end() -> None:
    jql = scope_jql("project = ENG AND labels = agent ORDER BY priority DESC, created")
    assert jql == ('(project = ENG AND labels = agent) AND statusCategory != Done '
                   'ORDER BY priority DESC, created')


def test_scope_is_never_widened_to_jr2s_labels() -> None:
    jql = scope_jql("project = ENG OR project = OPS")
    assert jql == "(project = ENG OR project = OPS) AND statusCategory != Done"
    assert "labels" not in jql


def test_order_by_inside_quotes_is_not_a_clause() -> None:
    where, order = split_order_by('summary ~ "order by me" and reorder = 1 order  by key')
    assert where == 'summary ~ "order by me" and reorder = 1'
    assert order == "order  by key"


def test_marked_outside_is_bounded_to_the_projects_named() -> None:
    jql = marked_outside_jql("labels = agent ORDER BY created", ('a"b', "c"), {"OPS", "ENG"})
    assert jql == ('project in ("ENG", "OPS") AND labels in ("a\\"b", "c") AND NOT '
                   '(labels = agent) AND statusCategory != Done')
    assert marked_outside_jql("labels = agent", LABELS, set()) is None
    assert marked_outside_jql("ORDER BY created", LABELS, {"ENG"}) is None


def test_only_an_order_by_means_everything_open() -> None:
    assert scope_jql("ORDER BY created") == "statusCategory != Done ORDER BY created"


def test_config_defaults_and_validation() -> None:
    cfg = JiraConfig(target="https://acme.atlassian.net/", jql="project = ENG")
    assert cfg.target == "https://acme.atlassian.net"
    assert (cfg.link_type, cfg.claim_label, cfg.failed_label) == ("Blocks", "jr2:claimed",
                                                                   "jr2:failed")
    assert cfg.write_spacing == 0.2 and cfg.poll_every == 60.0 and cfg.children_block
    assert JiraConfig(jql="x", poll_every="2m", ignore_subtasks=True).children_block is False
    with pytest.raises(ValueError, match="http"):
        JiraConfig(target="acme.atlassian.net", jql="x")
    with pytest.raises(ValueError, match="differ"):
        JiraConfig(jql="x", claim_label="a", failed_label="a")


def test_server_falls_back_to_jira_server() -> None:
    cfg = JiraConfig(jql="x")
    assert server_url(cfg, {"JIRA_SERVER": "https://x.atlassian.net/"}) == \
        "https://x.atlassian.net"
    with pytest.raises(ConfigError, match="JIRA_SERVER"):
        server_url(cfg, {})


def test_auth_from_the_environment_never_shows_the_token() -> None:
    cloud = resolve_auth({"JIRA_EMAIL": "a@b.c", "JIRA_API_TOKEN": "sekrit-123456"})
    assert cloud.email == "a@b.c"
    assert "sekrit" not in repr(cloud) and "sekrit" not in str(cloud.token)
    assert resolve_auth({"JIRA_PAT": "pat-abcdef"}).email is None
    with pytest.raises(ConfigError, match="JIRA_EMAIL"):
        resolve_auth({"JIRA_API_TOKEN": "sekrit-123456"})
    with pytest.raises(ConfigError, match="JIRA_PAT"):
        resolve_auth({})
