"""Where jr2 keeps local state, and how an item id becomes a safe file name.

State lives where the command's own clean-up (`git clean -fdx`) cannot delete it: in a git
repository, in `jr2/` of its common git directory (`.git/jr2`, shared by linked worktrees);
outside one, in `.jr2/` of the project's directory (where `jr2.toml`, or a `pyproject.toml` with
`[tool.jr2]`, is found upward), else of the working directory. `$JR2_STATE_DIR` or `--state DIR`
choose another; nothing is written beside a backlog. `prepare_state_dir` puts a `.gitignore`
of `*` in a directory it creates. `safe_name` turns an id into a readable slug plus a short
hash: distinct ids never collide and none can climb out of its directory.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from .projectfile import find_config

STATE_DIR_ENV = "JR2_STATE_DIR"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def default_state_dir() -> Path:
    """`$JR2_STATE_DIR`, else `jr2/` in the git directory of the project's repository, else
    `.jr2/` of the project's directory (beside its config file, or the working directory); not
    created here."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV])
    found = find_config()
    root = found.root if found is not None else None
    git = git_dir(root or Path.cwd())
    if git is not None:
        return git / "jr2"
    return root / ".jr2" if root is not None else Path(".jr2")


def git_dir(start: Path) -> Path | None:
    """The git directory of the repository `start` is in (for a linked worktree, the common
    one its `commondir` names), as git finds it (`gitrepository-layout`: a `.git` directory,
    or a `.git` file saying `gitdir: PATH`); None outside a repository."""
    here = start.resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if not dot.is_file():
            continue
        try:
            text = dot.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not text.startswith("gitdir:"):
            return None
        gd = (folder / text.removeprefix("gitdir:").strip()).resolve()
        common = gd / "commondir"
        try:
            return (gd / common.read_text(encoding="utf-8").strip()).resolve()
        except (OSError, UnicodeDecodeError):
            return gd  # a submodule's, or a worktree without commondir: its own
    return None


def prepare_state_dir(path: Path) -> Path:
    """Create the state directory if needed; one jr2 creates gets a `.gitignore` of `*`."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        ignore = path / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# created by jr2: local state, never committed\n*\n",
                              encoding="utf-8")
    return path


def safe_name(item_id: str, *, max_slug: int = 40) -> str:
    """A file-name-safe, collision-free name for an id: `<slug>-<8 hex of sha256>`."""
    slug = _SLUG.sub("_", item_id).strip("._-")[:max_slug] or "item"
    digest = hashlib.sha256(item_id.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}"


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically with mode 0600 (a reader sees all of it or nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
