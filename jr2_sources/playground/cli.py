"""`jr2 playground`: serve a fake GitHub or Jira seeded from a file, and act on it as a person.

This module imports click only; the fakes, pydantic and the seed are imported by the command
that runs (`jr2 --help` stays cheap).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from jr2_core.text import terminal_safe

from .act import GitHubActs, JiraActs, playground_url

F = TypeVar("F", bound=Callable[..., Any])


@click.group("playground")
def playground_group() -> None:
    """Try jr2 without a tracker: a fake GitHub or Jira on 127.0.0.1, seeded from a TOML file,
    that you act on as a person while pools run (docs/guides/playground.md).

    \b
        jr2 playground github --seed world.toml   # in a terminal of its own
        # paste the export lines it prints where you work, then:
        jr2 ready github:octo/app
        jr2 playground act github comment octo/app#3 "/jr2 approve deploy" --as alice
    """


def _seed_option(f: F) -> F:
    f = click.option("--port", type=click.IntRange(0, 65535), default=0,
                     help="Port on 127.0.0.1 (0, the default: any free port).")(f)
    return click.option("--seed", "seed_file", required=True, metavar="FILE",
                        type=click.Path(dir_okay=False, path_type=Path),
                        help="The world to start with (TOML; the format: "
                             "docs/guides/playground.md).")(f)


@playground_group.command("github")
@_seed_option
def github_cmd(seed_file: Path, port: int) -> None:
    """Serve a fake GitHub holding the world of --seed until Ctrl-C; print the environment
    to export (GITHUB_API_URL, GH_TOKEN) as shell lines. jr2 acts as jr2-bot; each person of
    the world acts with `jr2 playground act github ... --as LOGIN`. Nothing is kept.
    Exit codes: 0 stopped by SIGTERM, 2 a bad seed file, 130 Ctrl-C."""
    from . import seed, serve

    world = seed.load_github(seed_file)
    fake = serve.github_fake(world, port)
    sys.exit(serve.serve(fake.start, fake.stop,
                         lambda: serve.github_lines(fake, world, seed_file), port))


@playground_group.command("jira")
@_seed_option
def jira_cmd(seed_file: Path, port: int) -> None:
    """Serve a fake Jira (Cloud, or Data Center with `deployment = "data-center"`) holding
    the world of --seed until Ctrl-C; print the environment to export (JIRA_SERVER and the
    credentials) as shell lines. Exit codes: 0 stopped by SIGTERM, 2 a bad seed file, 130
    Ctrl-C."""
    from . import seed, serve

    world = seed.load_jira(seed_file)
    fake = serve.jira_fake(world)
    sys.exit(serve.serve(lambda: fake.start(port), fake.stop,
                         lambda: serve.jira_lines(fake, world, seed_file), port))


# -- jr2 playground act -------------------------------------------------------------------------


@playground_group.group("act")
def act_group() -> None:
    """Act on a running playground as a person does: close, comment, label, merge, fail a
    check. Each act is the tracker's own REST call with the person's token."""


@act_group.group("github")
def act_github() -> None:
    """Act on the playground GitHub at $GITHUB_API_URL (or --url) as a person (--as LOGIN,
    default octocat, the repositories' owner; the person must be in the seed's [people])."""


def _github(f: F) -> F:
    f = click.option("--url", default=None, metavar="URL",
                     help="The playground (default: $GITHUB_API_URL).")(f)
    return click.option("--as", "login", default="octocat", show_default=True,
                        metavar="LOGIN", help="The person who acts.")(f)


def _github_acts(url: str | None, login: str) -> Any:
    return GitHubActs(playground_url(url or os.environ.get("GITHUB_API_URL"),
                                     "GITHUB_API_URL", "github"), login)


@act_github.command("close")
@click.argument("ref", metavar="OWNER/REPO#N")
@click.option("--not-planned", is_flag=True, help="Close as not planned (default: completed).")
@_github
def gh_close(ref: str, not_planned: bool, url: str | None, login: str) -> None:
    """Close an issue (PATCH /repos/{owner}/{repo}/issues/{n})."""
    click.echo(_github_acts(url, login).close(ref, "not_planned" if not_planned else
                                              "completed"))


@act_github.command("reopen")
@click.argument("ref", metavar="OWNER/REPO#N")
@_github
def gh_reopen(ref: str, url: str | None, login: str) -> None:
    """Reopen an issue (PATCH /repos/{owner}/{repo}/issues/{n})."""
    click.echo(_github_acts(url, login).reopen(ref))


@act_github.command("comment")
@click.argument("ref", metavar="OWNER/REPO#N")
@click.argument("text")
@_github
def gh_comment(ref: str, text: str, url: str | None, login: str) -> None:
    """Comment on an issue (POST .../issues/{n}/comments); a gate's answer is
    "/jr2 approve NAME" or "/jr2 reject NAME [reason]"."""
    click.echo(_github_acts(url, login).comment(ref, text))


@act_github.command("label")
@click.argument("ref", metavar="OWNER/REPO#N")
@click.argument("name")
@_github
def gh_label(ref: str, name: str, url: str | None, login: str) -> None:
    """Add a label to an issue (POST .../issues/{n}/labels)."""
    click.echo(_github_acts(url, login).label(ref, name))


@act_github.command("unlabel")
@click.argument("ref", metavar="OWNER/REPO#N")
@click.argument("name")
@_github
def gh_unlabel(ref: str, name: str, url: str | None, login: str) -> None:
    """Remove a label from an issue (DELETE .../labels/{name}); removing jr2:failed retries
    the issue."""
    click.echo(_github_acts(url, login).unlabel(ref, name))


@act_github.command("merge")
@click.argument("ref", metavar="OWNER/REPO#N")
@_github
def gh_merge(ref: str, url: str | None, login: str) -> None:
    """Merge a pull request (PUT /repos/{owner}/{repo}/pulls/{n}/merge)."""
    click.echo(_github_acts(url, login).merge(ref))


@act_github.command("open-pr")
@click.argument("repo", metavar="OWNER/REPO")
@click.option("--head", required=True, metavar="BRANCH", help="The branch with the changes.")
@click.option("--base", default=None, metavar="BRANCH",
              help="The branch to merge into (default: the repository's default branch).")
@click.option("--fixes", type=int, multiple=True, metavar="N",
              help="An issue the pull request closes when merged (`Fixes #N`; repeatable).")
@click.option("--title", default=None, help="The title (default: from the head branch).")
@_github
def gh_open_pr(repo: str, head: str, base: str | None, fixes: tuple[int, ...],
               title: str | None, url: str | None, login: str) -> None:
    """Open a pull request (POST /repos/{owner}/{repo}/pulls)."""
    click.echo(_github_acts(url, login).open_pr(repo, head, base, fixes, title))


@act_github.command("fail-check")
@click.argument("ref", metavar="OWNER/REPO#N")
@click.option("--context", default="ci", show_default=True, help="The check's name.")
@_github
def gh_fail_check(ref: str, context: str, url: str | None, login: str) -> None:
    """Fail a pull request's check: a failing commit status on its merge commit when it
    merged, else on its head (POST /repos/{owner}/{repo}/statuses/{sha})."""
    click.echo(_github_acts(url, login).check(ref, "failure", context))


@act_github.command("pass-check")
@click.argument("ref", metavar="OWNER/REPO#N")
@click.option("--context", default="ci", show_default=True, help="The check's name.")
@_github
def gh_pass_check(ref: str, context: str, url: str | None, login: str) -> None:
    """Pass a pull request's check (as fail-check, with state success)."""
    click.echo(_github_acts(url, login).check(ref, "success", context))


@act_github.command("show")
@click.argument("ref", metavar="OWNER/REPO#N")
@_github
def gh_show(ref: str, url: str | None, login: str) -> None:
    """Print an issue: title, state, labels, body and comments (GET, nothing changes)."""
    click.echo(terminal_safe(_github_acts(url, login).show(ref)))


@act_group.group("jira")
def act_jira() -> None:
    """Act on the playground Jira at $JIRA_SERVER (or --url) as a person (--as NAME, default
    alice; to answer a gate the person needs `edit` in the seed's [people])."""


def _jira(f: F) -> F:
    f = click.option("--url", default=None, metavar="URL",
                     help="The playground (default: $JIRA_SERVER).")(f)
    return click.option("--as", "name", default="alice", show_default=True, metavar="NAME",
                        help="The person who acts.")(f)


def _jira_acts(url: str | None, name: str) -> Any:
    return JiraActs(playground_url(url or os.environ.get("JIRA_SERVER"), "JIRA_SERVER",
                                   "jira"), name)


@act_jira.command("close")
@click.argument("key")
@_jira
def jira_close(key: str, url: str | None, name: str) -> None:
    """Move an issue to Done (POST /rest/api/2/issue/{key}/transitions)."""
    click.echo(_jira_acts(url, name).transition(key, "done"))


@act_jira.command("reopen")
@click.argument("key")
@_jira
def jira_reopen(key: str, url: str | None, name: str) -> None:
    """Move an issue back to To Do (POST .../transitions)."""
    click.echo(_jira_acts(url, name).transition(key, "new"))


@act_jira.command("comment")
@click.argument("key")
@click.argument("text")
@_jira
def jira_comment(key: str, text: str, url: str | None, name: str) -> None:
    """Comment on an issue (POST /rest/api/2/issue/{key}/comment)."""
    click.echo(_jira_acts(url, name).comment(key, text))


@act_jira.command("label")
@click.argument("key")
@click.argument("label")
@_jira
def jira_label(key: str, label: str, url: str | None, name: str) -> None:
    """Add a label (PUT /rest/api/2/issue/{key}, update.labels add)."""
    click.echo(_jira_acts(url, name).label(key, label, add=True))


@act_jira.command("unlabel")
@click.argument("key")
@click.argument("label")
@_jira
def jira_unlabel(key: str, label: str, url: str | None, name: str) -> None:
    """Remove a label (update.labels remove); removing jr2:failed retries the issue."""
    click.echo(_jira_acts(url, name).label(key, label, add=False))


@act_jira.command("show")
@click.argument("key")
@_jira
def jira_show(key: str, url: str | None, name: str) -> None:
    """Print an issue: summary, status, labels, description and comments (GET only)."""
    click.echo(terminal_safe(_jira_acts(url, name).show(key)))
