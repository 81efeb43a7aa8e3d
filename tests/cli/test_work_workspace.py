"""Where `jr2 work` runs a command: the start directory, --workdir, a git worktree per item;
and what it is given: JR2_SANDBOX, JR2_ITEM_BRANCH, no secrets unless --pass-env."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from clihelp import JR2, env, jr2
from jr2_sources.cli.workerenv import worker_env
from jr2_sources.cli.workspace import default_branch

SHOW = 'echo "$JR2_ITEM_ID|$PWD|$JR2_SANDBOX|$JR2_ITEM_BRANCH" >> "$SEEN"'


def backlog(path: Path, *ids: str) -> None:
    path.write_text("".join(f'[[items]]\nid = "{i}"\ntitle = "item {i}"\n' for i in ids))


def seen(path: Path) -> list[list[str]]:
    return [line.split("|") for line in path.read_text().splitlines()]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def test_the_command_runs_in_the_start_directory_with_a_sandbox(tmp_path: Path) -> None:
    backlog(tmp_path / "b.toml", "A")
    (tmp_path / "agent.sh").write_text(f"#!/bin/sh\n{SHOW}\n")
    (tmp_path / "agent.sh").chmod(0o755)
    res = jr2("work", "local:b.toml", "--", "sh", "agent.sh", cwd=tmp_path,
              env=env(SEEN=str(tmp_path / "seen")))
    assert res.returncode == 0, res.stderr
    [[iid, cwd, sandbox, branch]] = seen(tmp_path / "seen")
    assert (iid, cwd) == ("A", str(tmp_path))  # a relative script path works, as with xargs
    assert "/sandboxes/" in sandbox
    assert branch == default_branch("A")


def test_workdir_chooses_the_directory(tmp_path: Path) -> None:
    backlog(tmp_path / "b.toml", "A")
    (tmp_path / "there").mkdir()
    res = jr2("work", "local:b.toml", "--workdir", "there", "--", "sh", "-c", SHOW,
              cwd=tmp_path, env=env(SEEN=str(tmp_path / "seen")))
    assert res.returncode == 0, res.stderr
    assert seen(tmp_path / "seen")[0][1] == str(tmp_path / "there")
    bad = jr2("work", "local:b.toml", "--workdir", "nowhere", "--", "true", cwd=tmp_path)
    assert bad.returncode == 2 and "nowhere" in bad.stderr


def test_default_branches_are_valid_and_unique_per_id(tmp_path: Path) -> None:
    ids = ["o/r#12", "o/r#12 ", "a..b", "ENG-1", "x.lock", "日本"]
    names = [default_branch(i) for i in ids]
    assert len(set(names)) == len(ids)
    for name in names:
        assert name.startswith("jr2/")
        ok = subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True)
        assert ok.returncode == 0, name


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "README").write_text("hello\n")
    git(r, "add", "README")
    git(r, "commit", "-q", "-m", "init")
    return r


def test_worktree_per_item_removed_after_success_kept_after_failure(repo: Path,
                                                                    tmp_path: Path) -> None:
    backlog(repo / "b.toml", "A", "B")
    script = (f'{SHOW}; test -f README && test "$(git branch --show-current)" = '
              '"$JR2_ITEM_BRANCH" && echo work > made && git add made && '
              'git -c user.email=t@t -c user.name=t commit -qm "$JR2_ITEM_ID" && '
              'test "$JR2_ITEM_ID" = A')
    state = tmp_path / "state"
    res = jr2("work", "local:b.toml", "--state", str(state), "--worktree", "--", "sh", "-c",
              script, cwd=repo, env=env(SEEN=str(tmp_path / "seen")))
    assert res.returncode == 1, res.stderr  # B failed
    rows = {r[0]: r for r in seen(tmp_path / "seen")}
    assert rows["A"][1] != rows["B"][1] and rows["A"][1].startswith(str(state / "worktrees"))
    assert not Path(rows["A"][1]).exists()  # removed after success ...
    branch_a, branch_b = default_branch("A"), default_branch("B")
    assert git(repo, "log", "-1", "--format=%s", branch_a) == "A"  # ... its branch kept
    kept = list((state / "worktrees" / "kept").iterdir())
    assert len(kept) == 1 and (kept[0] / "made").is_file()  # the failure kept for a person
    failed_branches = git(repo, "branch", "--format=%(refname:short)", "--list",
                          f"{branch_b}-failed-*").split()
    assert len(failed_branches) == 1  # renamed aside ...
    assert git(repo, "branch", "--list", branch_b) == ""  # ... so a retry can take the name
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_worktree_needs_a_git_repository_and_a_real_base(repo: Path, tmp_path: Path) -> None:
    backlog(tmp_path / "b.toml", "A")
    res = jr2("work", "local:b.toml", "--worktree", "--", "true", cwd=tmp_path)
    assert res.returncode == 2 and "not inside a git repository" in res.stderr
    backlog(repo / "b.toml", "A")
    res = jr2("work", "local:b.toml", "--worktree", "no-such-base", "--", "true", cwd=repo)
    assert res.returncode == 2 and "no-such-base" in res.stderr
    data = json.loads(jr2("ready", "local:b.toml", "--json", cwd=repo).stdout)
    assert [e["id"] for e in data["ready"]] == ["A"]  # refused before anything was claimed


def test_two_pools_on_one_clone_each_get_their_own_worktrees(repo: Path, tmp_path: Path) -> None:
    ids = [f"I-{i}" for i in range(8)]
    backlog(repo / "b.toml", *ids)
    procs = [subprocess.Popen(
        [*JR2, "work", "local:b.toml", "--cap", "4", "--worktree",
         "--state", str(tmp_path / "state"), "--", "sh", "-c", SHOW + "; sleep 0.2"],
        cwd=repo, env=env(SEEN=str(tmp_path / "seen")), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    rows = seen(tmp_path / "seen")
    assert sorted(r[0] for r in rows) == ids  # each item once, across both pools
    assert len({r[1] for r in rows}) == len(ids)
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_workers_get_no_secrets_unless_passed(tmp_path: Path) -> None:
    backlog(tmp_path / "b.toml", "A")
    secrets = {"GH_TOKEN": "ghp_one_secret", "GITHUB_APP_PRIVATE_KEY": "-----BEGIN key",
               "WEBHOOK_SECRET": "hook_secret_value", "OTHER_API_KEY": "key_value_1"}
    script = 'echo "${GH_TOKEN:-no}|${GITHUB_APP_PRIVATE_KEY:-no}|${WEBHOOK_SECRET:-no}|' \
             '${OTHER_API_KEY:-no}|${PLAIN:-no}" > "$OUT"'
    res = jr2("work", "local:b.toml", "--pass-env",
              "OTHER_API_KEY", "--", "sh", "-c", script, cwd=tmp_path,
              env=env(OUT=str(tmp_path / "out"), PLAIN="plain", **secrets))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out").read_text().strip() == "no|no|no|key_value_1|plain"


def test_worker_env_filters_by_name() -> None:
    base = {"PATH": "/bin", "JIRA_PAT": "p" * 8, "ACME": "t" * 8, "MY_SECRET": "s" * 8}
    assert worker_env((), ["ACME"], base) == {"PATH": "/bin"}
    assert worker_env(["ACME", "JIRA_PAT"], ["ACME"], base) == {
        "PATH": "/bin", "ACME": "t" * 8, "JIRA_PAT": "p" * 8}
    assert os.environ is not base


def test_a_branch_jr2_did_not_make_is_never_renamed(repo: Path, tmp_path: Path) -> None:
    (repo / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\nbranch = "feature/x"\n')
    git(repo, "branch", "feature/x")
    state = tmp_path / "state"
    res = jr2("work", "local:b.toml", "--state", str(state), "--worktree", "--", "sh", "-c",
              'test "$(git branch --show-current)" = feature/x && echo more > more && '
              'git add more && git -c user.email=t@t -c user.name=t commit -qm more && false',
              cwd=repo)
    assert res.returncode == 1, res.stderr
    assert git(repo, "log", "-1", "--format=%s", "feature/x") == "more"  # the work is on it
    assert git(repo, "branch", "--list", "feature/x-failed-*") == ""
    [kept] = (state / "worktrees" / "kept").iterdir()
    assert (kept / "more").is_file()
    assert subprocess.run(["git", "-C", str(kept), "symbolic-ref", "-q", "HEAD"]).returncode != 0


def test_a_full_ref_names_its_branch_and_another_ref_fails_only_its_item(repo: Path,
                                                                        tmp_path: Path) -> None:
    """`refs/heads/x` is the branch `x` (never `refs/heads/refs/heads/x`); a tag is no branch."""
    (repo / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\nbranch = "refs/heads/fix"\n'
                                 '[[items]]\nid = "B"\ntitle = "b"\nbranch = "refs/tags/v1"\n')
    state = tmp_path / "state"
    res = jr2("work", "local:b.toml", "--state", str(state), "--worktree", "--", "sh", "-c",
              f'{SHOW}; test "$(git branch --show-current)" = fix && false', cwd=repo,
              env=env(SEEN=str(tmp_path / "seen")))
    assert res.returncode == 1, res.stderr
    assert [r[3] for r in seen(tmp_path / "seen")] == ["fix"]  # JR2_ITEM_BRANCH; B never ran
    assert "failed B: --worktree: refs/tags/v1 is not a branch name" in res.stderr
    branches = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/").split()
    assert [b for b in branches if b.startswith("refs/heads/fix-failed-")]  # renamed aside
    assert not [b for b in branches if "refs/heads/refs/" in b]


def test_a_stacked_item_starts_its_worktree_from_its_blockers_branch(repo: Path) -> None:
    """GitHub's `--stack` hands `extra.stack_on`; the worktree starts from that branch."""
    import asyncio

    from jr2_core import Failure
    from jr2_sources.cli.workspace import Worktrees

    git(repo, "switch", "-q", "-c", "jr2/issue-1")
    (repo / "one.txt").write_text("blocker's change\n")
    git(repo, "add", "one.txt")
    git(repo, "commit", "-q", "-m", "blocker")
    git(repo, "switch", "-q", "main")
    trees = Worktrees.open(repo, "main", repo / ".jr2", "r-1")

    async def place(number: int, start: str) -> str:
        async with trees.place(f"o/r#{number}", f"jr2/issue-{number}", lambda: True,
                               start) as where:
            return (where.cwd / "one.txt").read_text()

    assert asyncio.run(place(2, "jr2/issue-1")) == "blocker's change\n"
    assert git(repo, "log", "-1", "--format=%s", "jr2/issue-2") == "blocker"
    with pytest.raises(Failure, match="jr2/issue-9 is neither a branch"):
        asyncio.run(place(3, "jr2/issue-9"))
