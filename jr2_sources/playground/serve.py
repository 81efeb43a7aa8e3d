"""Serve a fake tracker seeded from a world until Ctrl-C: `jr2 playground github|jira`.

Contract: the fakes are the ones the tests use (`jr2_sources.testing.fakes`), seeded through
their Python API and answering only as the tracker documents. jr2's own account is `jr2-bot`
with the token `playground-jr2-bot`; each person of the world (and `octocat`, the repositories'
owner, on GitHub) has the token `playground-<login>`, so what a person writes over HTTP is
theirs. What is printed on stdout is shell: `#` comments, then `export` lines to paste or
`source`. SIGINT ends it with 130, SIGTERM with 0; nothing is kept.
"""

from __future__ import annotations

import base64
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from jr2_core.errors import UsageError

from . import seed

LOGIN = "jr2-bot"
OWNER = "octocat"
PRIORITIES = {"Highest": "1", "High": "2", "Medium": "3", "Low": "4", "Lowest": "5"}
EMAIL_DOMAIN = "playground.invalid"


def token_of(login: str) -> str:
    """The playground token of `login` (not a secret: the fake accepts nothing else)."""
    return f"playground-{login}"


def jira_auth(name: str, *, cloud: bool = True) -> str:
    """The `Authorization` header a person's client sends to the fake Jira: basic auth with
    an email and API token on Cloud, a bearer personal access token on Data Center."""
    if not cloud:
        return f"Bearer {token_of(name)}"
    pair = f"{name}@{EMAIL_DOMAIN}:{token_of(name)}".encode()
    return "Basic " + base64.b64encode(pair).decode()


def github_fake(world: seed.GitHubWorld, port: int = 0) -> Any:
    """A fake GitHub holding `world` (not started)."""
    from jr2_sources.testing.fakes.github_server import FakeGitHub

    logins = [OWNER, *(p for p in world.people if p.lower() != OWNER)]
    fake = FakeGitHub(port=port, login=LOGIN,
                      tokens={token_of(LOGIN), *(token_of(p) for p in logins)})
    fake.people = {token_of(p): p for p in logins}
    for login, role in world.people.items():
        if role == "none":
            fake.permissions.pop(login.lower(), None)
        else:
            fake.permissions[login.lower()] = role
    for r in world.repos:
        fake.next_number[r.name.lower()] = 1
        fake.pulls.default_branch[r.name.lower()] = r.default_branch
        fake.repo_id(r.name)
        for label in r.labels:
            fake.add_label(r.name, label)
    items: list[seed.Issue | seed.Pull] = [*world.issues, *world.pulls]
    for item in sorted(items, key=lambda x: (str(x.repo).lower(), int(x.number or 0))):
        repo, number = str(item.repo), int(item.number or 0)
        fake.next_number[repo.lower()] = number
        if isinstance(item, seed.Issue):
            fake.add_issue(repo, item.title, item.body, labels=item.labels,
                           assignees=item.assignees, state=item.state,
                           state_reason="completed" if item.state == "closed" else None)
            fake.issue(repo, number).author = item.author
        else:
            body = "\n\n".join(x for x in [item.body, *(f"Fixes #{n}" for n in item.fixes)]
                               if x)
            fake.pulls.open_pr(repo, item.head, item.base, body, item.title)
    for r in world.repos:  # the next issue or pull request takes the next free number
        taken = [n for (name, n) in fake.issues if name == r.name.lower()]
        fake.next_number[r.name.lower()] = max(taken, default=0) + 1
    for issue in world.issues:
        repo, number = str(issue.repo), int(issue.number or 0)
        for ref in issue.blocked_by:
            other, n = seed.github_ref(ref, repo)
            fake.add_dependency(repo, number, n, other)
        for child in issue.sub_issues:
            fake.add_sub_issue(repo, number, child)
        for c in issue.comments:
            fake.add_comment(repo, number, c.body, c.author)
    for pull in world.pulls:
        repo, number = str(pull.repo), int(pull.number or 0)
        pr = fake.pulls.pull(repo, number)
        if pull.checks != "none":
            fake.pulls.add_status(repo, pr.head_sha, pull.checks, "ci")
        if pull.state == "merged":
            sha = fake.pulls.merge(repo, number)
            if pull.checks != "none":
                fake.pulls.add_status(repo, sha, pull.checks, "ci")
        elif pull.state == "closed":
            fake.pulls.close(repo, number)
    return fake


def jira_fake(world: seed.JiraWorld) -> Any:
    """A fake Jira holding `world` (not started)."""
    from jr2_sources.testing.fakes.jira_server import FakeJira

    cloud = world.deployment == "cloud"
    fake = FakeJira(cloud=cloud)
    for issue in sorted(world.issues, key=lambda x: (x.project, int(str(x.key).split("-")[1]))):
        fake.next_number[issue.project] = int(str(issue.key).split("-")[1])
        fake.add_issue(issue.title, issue.project, status=issue.status, labels=issue.labels,
                       priority=PRIORITIES[issue.priority], parent=issue.parent,
                       assignee=fake.person(issue.assignee) if issue.assignee else None,
                       description=issue.body)
    for project in {x.project for x in world.issues}:
        taken = [int(k.split("-")[1]) for k in fake.issues if k.startswith(f"{project}-")]
        fake.next_number[project] = max(taken) + 1
    for issue in world.issues:
        for blocker in issue.blocked_by:
            fake.add_link(blocker, str(issue.key))
        for c in issue.comments:
            fake.add_comment(str(issue.key), c.body, c.author)
    for name, role in world.people.items():
        fake.people[jira_auth(name, cloud=cloud)] = name
        if role == "edit":
            fake.editors.add(f"acc-{name}" if cloud else name)
    return fake


def github_lines(fake: Any, world: seed.GitHubWorld, source: Path) -> list[str]:
    """What `jr2 playground github` prints: comments, then the environment to export."""
    counts = []
    for repo in world.repos:
        issues = sum(1 for x in world.issues if x.repo == repo.name)
        pulls = sum(1 for x in world.pulls if x.repo == repo.name)
        counts.append(f"{repo.name}: {seed.summary({'issue': issues, 'pull request': pulls})}")
    roles = {OWNER: "admin", **world.people}
    people = ", ".join(f"{p} ({r})" for p, r in roles.items())
    return [f"# jr2 playground: a fake GitHub on {fake.url}, seeded from {source}",
            f"# {'; '.join(counts)}",
            f"# jr2 acts as {LOGIN}; people: {people}",
            "# act as one: jr2 playground act github --help; Ctrl-C stops the playground",
            f"export GITHUB_API_URL={fake.url}",
            f"export GH_TOKEN={token_of(LOGIN)}"]


def jira_lines(fake: Any, world: seed.JiraWorld, source: Path) -> list[str]:
    """What `jr2 playground jira` prints: comments, then the environment to export."""
    projects = sorted({x.project for x in world.issues})
    tally = {p: sum(1 for x in world.issues if x.project == p) for p in projects}
    counts = "; ".join(f"{p}: {seed.summary({'issue': n})}" for p, n in tally.items())
    people = ", ".join(f"{p} ({r})" for p, r in world.people.items()) or "none"
    cloud = world.deployment == "cloud"
    lines = [f"# jr2 playground: a fake Jira {'Cloud' if cloud else 'Data Center'} on "
             f"{fake.url}, seeded from {source}",
             f"# {counts or 'no issues'}",
             f"# jr2 acts as {LOGIN}; people: {people}",
             "# act as one: jr2 playground act jira --help; Ctrl-C stops the playground",
             f"export JIRA_SERVER={fake.url}"]
    if cloud:
        return [*lines, f"export JIRA_EMAIL={LOGIN}@{EMAIL_DOMAIN}",
                f"export JIRA_API_TOKEN={token_of(LOGIN)}"]
    return [*lines, f"export JIRA_PAT={token_of(LOGIN)}"]


def serve(start: Callable[[], Any], stop: Callable[[], None], lines: Callable[[], list[str]],
          port: int = 0) -> int:
    """Start the fake on `port`, print `lines()`, serve until SIGINT (130) or SIGTERM (0)."""
    done = threading.Event()
    code = [0]

    def on_term(signum: int, frame: FrameType | None) -> None:
        done.set()

    try:
        start()
    except OSError as exc:
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        sys.stdout.write("\n".join(lines()) + "\n")
        sys.stdout.flush()
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:
        code[0] = 130
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop()
    return code[0]
