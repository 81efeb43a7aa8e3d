"""The playground's seed file: a small world for a fake tracker, in TOML, checked by pydantic.

Contract: `load_github(path)` / `load_jira(path)` return a world whose every issue has its
repository and number (GitHub) or key (Jira) resolved, and whose every reference (a blocker, a
sub-issue, a parent, a pull request's linked issue) names an item of the world; anything else
is a `UsageError` of one line naming the file and the field (`world.toml: issues.2.labels:
...`; `issues.0` is the first issue). The format is documented in docs/guides/playground.md.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jr2_core.errors import UsageError, error_words

_REPO = r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$"
_REF = re.compile(r"^(?:(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+))?#(?P<n>\d+)$")
_KEY = r"^[A-Z][A-Z0-9]*-[1-9]\d*$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Comment(_Model):
    author: str = Field(min_length=1)
    body: str


# -- GitHub -------------------------------------------------------------------------------------


class Repo(_Model):
    name: str = Field(pattern=_REPO)
    default_branch: str = Field(default="main", min_length=1)
    labels: list[str] = []


class Issue(_Model):
    repo: str | None = Field(default=None, pattern=_REPO)
    number: int | None = Field(default=None, ge=1)
    title: str = Field(min_length=1)
    body: str = ""
    labels: list[str] = []
    state: Literal["open", "closed"] = "open"
    assignees: list[str] = []
    author: str = "octocat"
    blocked_by: list[int | str] = []
    sub_issues: list[int] = []
    comments: list[Comment] = []


class Pull(_Model):
    repo: str | None = Field(default=None, pattern=_REPO)
    number: int | None = Field(default=None, ge=1)
    title: str | None = None
    head: str = Field(min_length=1)
    base: str | None = None
    fixes: list[int] = []
    body: str = ""
    state: Literal["open", "closed", "merged"] = "open"
    checks: Literal["success", "failure", "pending", "none"] = "none"


class GitHubWorld(_Model):
    people: dict[str, Literal["admin", "write", "read", "none"]] = {}
    repos: list[Repo] = Field(min_length=1)
    issues: list[Issue] = []
    pulls: list[Pull] = []


# -- Jira ---------------------------------------------------------------------------------------


class JiraIssue(_Model):
    key: str | None = Field(default=None, pattern=_KEY)
    project: str = Field(default="ENG", pattern=r"^[A-Z][A-Z0-9]*$")
    title: str = Field(min_length=1)
    body: str | None = None
    labels: list[str] = []
    status: Literal["To Do", "In Progress", "Done"] = "To Do"
    priority: Literal["Highest", "High", "Medium", "Low", "Lowest"] = "Medium"
    assignee: str | None = None
    parent: str | None = Field(default=None, pattern=_KEY)
    blocked_by: list[str] = []
    comments: list[Comment] = []


class JiraWorld(_Model):
    deployment: Literal["cloud", "data-center"] = "cloud"
    people: dict[str, Literal["edit", "browse"]] = {}
    issues: list[JiraIssue] = []


# -- loading ------------------------------------------------------------------------------------

W = TypeVar("W", bound=BaseModel)


def _read(path: Path, model: type[W]) -> W:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not TOML: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(the file)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise UsageError(f"{path}: {loc}: {error_words(first)}{more}") from None


def _number(used: set[int]) -> int:
    n = 1
    while n in used:
        n += 1
    used.add(n)
    return n


def load_github(path: Path) -> GitHubWorld:
    """The GitHub world of `path`, resolved (module notes)."""
    world = _read(path, GitHubWorld)

    def bad(where: str, what: str) -> UsageError:
        return UsageError(f"{path}: {where}: {what}")

    names = {r.name.lower(): r.name for r in world.repos}
    if len(names) < len(world.repos):
        raise bad("repos", "a repository is named twice")
    only = world.repos[0].name if len(world.repos) == 1 else None
    items: list[tuple[str, Issue | Pull]] = [
        *((f"issues.{i}", x) for i, x in enumerate(world.issues)),
        *((f"pulls.{i}", x) for i, x in enumerate(world.pulls))]
    used: dict[str, set[int]] = {n: set() for n in names}
    for where, item in items:
        if item.repo is None:
            if only is None:
                raise bad(f"{where}.repo", "name the repository (the world has several)")
            item.repo = only
        if item.repo.lower() not in names:
            raise bad(f"{where}.repo", f"{item.repo} is not one of the world's repos")
        item.repo = names[item.repo.lower()]
        if item.number is not None:
            if item.number in used[item.repo.lower()]:
                raise bad(f"{where}.number", f"{item.repo}#{item.number} is given twice")
            used[item.repo.lower()].add(item.number)
    for _, item in items:
        if item.number is None:
            item.number = _number(used[str(item.repo).lower()])
    issues = {(str(x.repo).lower(), x.number) for x in world.issues}
    for i, issue in enumerate(world.issues):
        for ref in issue.blocked_by:
            repo, n = _github_ref(ref, str(issue.repo))
            if repo is None or (repo.lower(), n) not in issues:
                raise bad(f"issues.{i}.blocked_by", f"{ref!r} is not an issue of the world")
        for n in issue.sub_issues:
            if (str(issue.repo).lower(), n) not in issues:
                raise bad(f"issues.{i}.sub_issues", f"#{n} is not an issue of {issue.repo}")
    for i, pull in enumerate(world.pulls):
        for n in pull.fixes:
            if (str(pull.repo).lower(), n) not in issues:
                raise bad(f"pulls.{i}.fixes", f"#{n} is not an issue of {pull.repo}")
    return world


def _github_ref(ref: int | str, repo: str) -> tuple[str | None, int]:
    """(repository, number) of a blocker written `3`, `"#3"` or `"octo/lib#3"`."""
    if isinstance(ref, int):
        return repo, ref
    m = _REF.match(ref.strip())
    if m is None:
        return None, 0
    return m.group("repo") or repo, int(m.group("n"))


def github_ref(ref: int | str, repo: str) -> tuple[str, int]:
    """A blocker reference of a loaded world as (repository, number)."""
    found, n = _github_ref(ref, repo)
    return str(found), n


def load_jira(path: Path) -> JiraWorld:
    """The Jira world of `path`, resolved (module notes)."""
    world = _read(path, JiraWorld)

    def bad(where: str, what: str) -> UsageError:
        return UsageError(f"{path}: {where}: {what}")

    used: dict[str, set[int]] = {}
    for i, issue in enumerate(world.issues):
        if issue.key is not None:
            project, _, n = issue.key.rpartition("-")
            issue.project = project
            if int(n) in used.setdefault(project, set()):
                raise bad(f"issues.{i}.key", f"{issue.key} is given twice")
            used[project].add(int(n))
    for issue in world.issues:
        if issue.key is None:
            issue.key = f"{issue.project}-{_number(used.setdefault(issue.project, set()))}"
    keys = {str(x.key) for x in world.issues}
    for i, issue in enumerate(world.issues):
        for key in issue.blocked_by:
            if key not in keys:
                raise bad(f"issues.{i}.blocked_by", f"{key!r} is not an issue of the world")
        if issue.parent is not None and issue.parent not in keys:
            raise bad(f"issues.{i}.parent", f"{issue.parent!r} is not an issue of the world")
    return world


def summary(data: dict[str, Any]) -> str:
    """`3 issues, 1 pull request`: what a world holds, in words."""
    return ", ".join(f"{n} {what}{'' if n == 1 else 's'}" for what, n in data.items())
