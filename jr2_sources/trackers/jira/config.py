"""Options of `jira:SERVER`, validated by pydantic (`jr2 ready jira: --help`), and the auth.

Design note: the scope is the user's JQL, never widened; jr2 only narrows it to open issues
(`jql.scope_jql`). The two jr2 labels (`claim_label`, `failed_label`) are the only labels jr2
ever adds or removes. Credentials come from the environment only (`JIRA_EMAIL` +
`JIRA_API_TOKEN` for Cloud, `JIRA_PAT` for Data Center) and are wrapped in `SecretStr` at once:
no message, log line or repr contains them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from jr2_core.errors import ConfigError
from jr2_sources.kit.durations import Duration
from jr2_sources.kit.labeloptions import failed_label_differs
from jr2_sources.kit.markers import TRUST_HELP


class JiraConfig(BaseModel):
    """Options of `jira:SERVER`."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(default="", description="the Jira site, e.g. https://acme.atlassian.net "
                                                "(default: $JIRA_SERVER)")
    jql: str = Field(min_length=1, description="the issues in scope, as JQL (an ORDER BY is "
                                               "kept at the end)")
    link_type: str = Field(default="Blocks", min_length=1,
                           description="the issue link type (name or id) whose inward issue "
                                       "blocks")
    ignore_subtasks: bool = Field(default=False,
                                  description="a parent does not wait for its open sub-tasks")
    priority_order: list[str] = Field(
        default_factory=list,
        description="priority names, highest first (repeatable; default: by priority id, as in "
                    "Jira's default scheme)")
    trust: list[str] = Field(default_factory=list, description=TRUST_HELP)
    claim_label: str = Field(default="jr2:claimed", min_length=1,
                             description="the label jr2 puts on an issue a pool holds")
    failed_label: str = Field(default="jr2:failed", min_length=1,
                              description="the label jr2 puts on an issue whose worker failed")
    on_success_transition: str | None = Field(
        default=None, description="the transition (name) jr2 applies on success (default: none)")
    in_progress_transition: str | None = Field(
        default=None, description="the transition (name) jr2 applies when it claims an issue")
    assign: bool = Field(default=False,
                         description="also assign jr2's own account to an issue it claims")
    write_spacing: Duration = Field(default=0.2,
                                    description="least time between two writes")
    poll_every: Duration = Field(default=60.0,
                                 description="how often a waiting pool searches again (by "
                                             "deltas: about 2 searches a poll)")
    resync_every: Duration = Field(default=300.0, gt=0,
                                   description="`jr2 work` reads only the issues updated since "
                                               "its last reading, and everything again this "
                                               "often")
    delta_overlap: Duration = Field(default=120.0,
                                    description="how far before the last reading a delta "
                                                "search reaches back (clock steps, minute "
                                                "precision, search staleness)")
    retry_budget: Duration = Field(default=300.0,
                                   description="most total time spent waiting on retries")

    @field_validator("target")
    @classmethod
    def _server(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"expected an http(s) URL like https://acme.atlassian.net, "
                                 f"not {value!r}")
        return value

    _failed_differs = field_validator("failed_label")(failed_label_differs)

    @property
    def children_block(self) -> bool:
        """Read by the WorkSource layer: a parent waits for its open sub-tasks."""
        return not self.ignore_subtasks


@dataclass(frozen=True)
class JiraAuth:
    """Basic auth (Cloud: email + API token) or a bearer personal access token (Data Center)."""

    token: SecretStr
    email: str | None = None


def server_url(config: JiraConfig, env: Mapping[str, str] | None = None) -> str:
    """The site: the target, else `JIRA_SERVER`."""
    env = os.environ if env is None else env
    url = config.target or (env.get("JIRA_SERVER") or "").strip().rstrip("/")
    if not url:
        raise ConfigError("jira: no server: give jira:https://SITE or set JIRA_SERVER")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"jira: JIRA_SERVER must be an http(s) URL, not {url!r}")
    return url


def resolve_auth(env: Mapping[str, str] | None = None) -> JiraAuth:
    """Credentials from the environment; a one-line `ConfigError` when there are none."""
    env = os.environ if env is None else env
    email = (env.get("JIRA_EMAIL") or "").strip()
    token = (env.get("JIRA_API_TOKEN") or "").strip()
    pat = (env.get("JIRA_PAT") or "").strip()
    if token:
        if not email:
            raise ConfigError("jira: JIRA_API_TOKEN needs JIRA_EMAIL (the account's email)")
        return JiraAuth(SecretStr(token), email)
    if pat:
        return JiraAuth(SecretStr(pat))
    raise ConfigError("jira: no credentials: set JIRA_EMAIL + JIRA_API_TOKEN (Cloud) or "
                      "JIRA_PAT (Data Center)")
