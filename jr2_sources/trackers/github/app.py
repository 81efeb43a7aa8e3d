"""GitHub App authentication: installation tokens from an App's id and private key.

`GITHUB_APP_ID` with `GITHUB_APP_PRIVATE_KEY` (the PEM) or `GITHUB_APP_PRIVATE_KEY_PATH` selects
App auth, over `GITHUB_TOKEN`; `GITHUB_APP_INSTALLATION_ID` names the installation, else it is
found from the repository (`GET /repos/{owner}/{repo}/installation`). PyGithub (the `github`
extra) signs the JWT and exchanges it for installation tokens, renewed before they expire; jr2's
client asks `AppTokens.token()` for each request's header. The key and the tokens never appear
in a message, a log line or a repr; a failure names the variable to check.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from jr2_core.errors import ConfigError


@dataclass(frozen=True)
class AppCredentials:
    """An App's id, private key and (optionally) installation id, from the environment."""

    app_id: int
    private_key: SecretStr = field(repr=False)
    installation_id: int | None = None


def _int(env: Mapping[str, str], name: str) -> int | None:
    value = (env.get(name) or "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise ConfigError(f"github: {name} must be a number")
    return int(value)


def app_credentials(env: Mapping[str, str] | None = None) -> AppCredentials | None:
    """The App credentials the environment gives (None: no `GITHUB_APP_ID`, so token auth)."""
    env = os.environ if env is None else env
    app_id = _int(env, "GITHUB_APP_ID")
    if app_id is None:
        return None
    key = (env.get("GITHUB_APP_PRIVATE_KEY") or "").strip()
    path = (env.get("GITHUB_APP_PRIVATE_KEY_PATH") or "").strip()
    if not key and path:
        try:
            key = Path(path).expanduser().read_text().strip()
        except OSError as exc:
            raise ConfigError(f"github: cannot read GITHUB_APP_PRIVATE_KEY_PATH ({path}): "
                              f"{exc.strerror or type(exc).__name__}") from None
    if not key:
        raise ConfigError("github: GITHUB_APP_ID is set but no private key: set "
                          "GITHUB_APP_PRIVATE_KEY (the PEM text) or GITHUB_APP_PRIVATE_KEY_PATH")
    if "PRIVATE KEY" not in key:
        raise ConfigError("github: the App private key is not a PEM private key (check "
                          "GITHUB_APP_PRIVATE_KEY / GITHUB_APP_PRIVATE_KEY_PATH)")
    return AppCredentials(app_id, SecretStr(key), _int(env, "GITHUB_APP_INSTALLATION_ID"))


class AppTokens:
    """Installation tokens of one App installation, refreshed before they expire."""

    def __init__(self, creds: AppCredentials, base_url: str, repo: str) -> None:
        from github import Auth, Github, GithubException, GithubIntegration

        self.creds = creds
        self._lock = threading.Lock()
        app = Auth.AppAuth(creds.app_id, creds.private_key.get_secret_value())
        kwargs: dict[str, Any] = {"base_url": base_url, "retry": None,
                                  "seconds_between_requests": None}
        self._slug: str | None = None
        self._app_kwargs = (app, kwargs)
        try:
            installation = creds.installation_id
            if installation is None:
                owner, name = repo.split("/", 1)
                found = GithubIntegration(auth=app, **kwargs).get_repo_installation(owner, name)
                installation = int(found.id)
                self._slug = str(found.app_slug) if found.app_slug else None
            requester = Github(auth=app, **kwargs).requester
            self._auth = app.get_installation_auth(installation, requester=requester)
            self.token()  # fail at start, in one line, not on the first claim
        except GithubException as exc:
            raise ConfigError(f"github:{repo}: GitHub App {creds.app_id} could not get an "
                              f"installation token (HTTP {exc.status}); check GITHUB_APP_ID, "
                              "the private key, and that the App is installed on the "
                              "repository") from None
        except (ValueError, TypeError) as exc:  # a key PyJWT cannot sign with
            raise ConfigError(f"github: the App private key cannot sign "
                              f"({type(exc).__name__}); check GITHUB_APP_PRIVATE_KEY / "
                              "GITHUB_APP_PRIVATE_KEY_PATH") from None

    def token(self) -> str:
        """The current installation token (a new one when the last is about to expire)."""
        with self._lock:
            return str(self._auth.token)

    def bot_login(self) -> str:
        """The login the App's comments carry, `<slug>[bot]` (the slug from the installation
        found at start, else "Get the authenticated app", `GET /app`, once)."""
        from github import GithubException, GithubIntegration

        with self._lock:
            if self._slug is None:
                app, kwargs = self._app_kwargs
                try:
                    self._slug = str(GithubIntegration(auth=app, **kwargs).get_app().slug)
                except GithubException as exc:
                    raise ConfigError(f"github: GitHub App {self.creds.app_id}: cannot read "
                                      f"its own name (GET /app: HTTP {exc.status})") from None
            return f"{self._slug}[bot]"

    def __repr__(self) -> str:
        return f"AppTokens(app_id={self.creds.app_id})"
