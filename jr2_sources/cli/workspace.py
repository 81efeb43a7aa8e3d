"""Where the command of `jr2 work` runs for one item: the start directory (the default, as `xargs`
does; the item's scratch directory is `JR2_SANDBOX`), `--workdir DIR` (checked once), or a git
worktree per item (`--worktree [BASE]`).

* The worktree is `git worktree add` on the item's branch (`JR2_ITEM_BRANCH`: the branch the
  tracker names, `refs/heads/x` read as `x` and other `refs/...` refused, else
  `jr2/<slug>-<hash>`) under `<state>/worktrees/<run id>/`. An existing branch is checked out as
  it is; a new one starts from BASE (default `HEAD`) or, for an item stacked on its blocker
  (`extra.stack_on`), from that blocker's head branch (local, else `origin/<branch>`; neither:
  the item fails).
* After success the worktree is removed and the branch stays. After a failure the worktree is
  kept aside (`<state>/worktrees/kept/<slug>-<time>`) and the branch freed for a retry: one jr2
  made in this attempt is renamed `<branch>-failed-<time>`, one that existed before is left as
  it is (the kept worktree detached).
* Every `git worktree` call holds an exclusive lock file in the clone's common git directory,
  so pools on one clone never race on git's bookkeeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import re
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from jr2_core import Failure
from jr2_core.errors import UsageError
from jr2_core.paths import safe_name

_BRANCH_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_branch(item_id: str) -> str:
    """`jr2/<slug>-<hash>`: a valid git branch name, unique per id (the hash is of the id)."""
    stem = safe_name(item_id)
    slug, _, digest = stem.rpartition("-")
    slug = _BRANCH_UNSAFE.sub("-", slug).strip("-") or "item"
    return f"jr2/{slug}-{digest}"


def branch_name(branch: str | None, item_id: str) -> str:
    """The item's branch as git names a branch: the tracker's (a full ref `refs/heads/x` is the
    branch `x`, so git does not make `refs/heads/refs/heads/x`), else `default_branch`."""
    return branch.removeprefix("refs/heads/") if branch else default_branch(item_id)


def _git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout, or a `RuntimeError` with git's own message."""
    res = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                         check=False)
    if res.returncode != 0:
        msg = (res.stderr.strip().splitlines() or [f"exit code {res.returncode}"])[-1]
        raise RuntimeError(f"git {args[0]}: {msg}")
    return res.stdout.strip()


@dataclass(frozen=True)
class Place:
    """Where one item's command runs, and the branch it is told about."""

    cwd: Path
    branch: str


class Workspace:
    """Directories for items: the same `cwd` for every item (default and `--workdir`)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    @contextlib.asynccontextmanager
    async def place(self, item_id: str, branch: str | None, succeeded: Callable[[], bool],
                    start: str | None = None) -> AsyncIterator[Place]:
        yield Place(self.cwd, branch_name(branch, item_id))


class Worktrees(Workspace):
    """A git worktree per item, from `base`, under `root` (`<state>/worktrees`)."""

    def __init__(self, repo: Path, base: str, root: Path, run_id: str) -> None:
        super().__init__(repo)
        self.repo = repo
        self.base = base
        self.root = root
        self.run_dir = root / run_id
        self._lock_path = Path(_git(repo, "rev-parse", "--path-format=absolute",
                                    "--git-common-dir")) / "jr2-worktree.lock"

    @classmethod
    def open(cls, start: Path, base: str, state: Path, run_id: str) -> Worktrees:
        """Check, before anything is claimed, that `start` is in a git clone and BASE exists."""
        try:
            top = Path(_git(start, "rev-parse", "--show-toplevel"))
        except (RuntimeError, OSError):
            raise UsageError(f"--worktree: {start} is not inside a git repository") from None
        try:
            _git(top, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        except RuntimeError:
            raise UsageError(f"--worktree {base}: no such commit or branch in {top}") from None
        return cls(top, base, state.resolve() / "worktrees", run_id)

    def _locked(self, *args: str) -> str:
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return _git(self.repo, *args)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _has(self, ref: str) -> bool:
        try:
            _git(self.repo, "rev-parse", "--verify", "--quiet", ref)
        except RuntimeError:
            return False
        return True

    def _add(self, path: Path, branch: str, start: str | None = None) -> bool:
        """Add the worktree; True when this made the branch (from `start`, else BASE)."""
        if branch.startswith("refs/"):  # a tag or a remote ref is not a branch to work on
            raise RuntimeError(f"{branch} is not a branch name (refs/heads/NAME or NAME)")
        _git(self.repo, "check-ref-format", "--branch", branch)
        path.parent.mkdir(parents=True, exist_ok=True)
        if self._has(f"refs/heads/{branch}"):
            self._locked("worktree", "add", str(path), branch)
            return False
        self._locked("worktree", "add", "-b", branch, str(path), self._start_point(start))
        return True

    def _start_point(self, start: str | None) -> str:
        """BASE, or `start` (`--stack`: the blocker's head branch), local or as `origin/...`."""
        if start is None:
            return self.base
        for ref in (f"refs/heads/{start}", f"refs/remotes/origin/{start}"):
            if self._has(ref):
                return ref
        raise RuntimeError(f"the blocker's branch {start} is neither a branch nor origin/{start} "
                           "in this clone (git fetch?)")

    def _keep(self, path: Path, branch: str, made: bool) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        kept = self.root / "kept" / f"{path.name}-{stamp}"
        kept.parent.mkdir(parents=True, exist_ok=True)
        self._locked("worktree", "move", str(path), str(kept))
        if made:
            self._locked("branch", "-m", branch, f"{branch}-failed-{stamp}")
        else:
            _git(kept, "checkout", "--quiet", "--detach")

    @contextlib.asynccontextmanager
    async def place(self, item_id: str, branch: str | None, succeeded: Callable[[], bool],
                    start: str | None = None) -> AsyncIterator[Place]:
        name = branch_name(branch, item_id)
        path = self.run_dir / safe_name(item_id)
        try:
            made = await asyncio.to_thread(self._add, path, name, start)
        except RuntimeError as exc:
            raise Failure(f"--worktree: {exc}") from None
        try:
            yield Place(path, name)
        finally:
            ok = succeeded()
            try:
                if ok:
                    await asyncio.shield(asyncio.to_thread(
                        self._locked, "worktree", "remove", "--force", str(path)))
                    with contextlib.suppress(OSError):
                        self.run_dir.rmdir()  # once the run's last worktree is gone
                else:
                    await asyncio.shield(asyncio.to_thread(self._keep, path, name, made))
            except RuntimeError:
                pass  # the worktree stays where it is; `git worktree list` shows it
