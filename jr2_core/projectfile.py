"""The project's jr2 configuration file, found like ruff and uv find theirs.

In the working directory, else in the nearest parent, up to the repository root (the first
directory holding `.git`) or the file system's root: `jr2.toml`, else a `pyproject.toml` with a
`[tool.jr2]` table (one without it is passed over). The engine uses it for one thing, the default
state directory (`.jr2/` beside the file); `jr2_sources.projectconfig` reads its named sources.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class ProjectConfig:
    """The config file found, and its jr2 table (`{}` when it has none)."""

    file: Path
    data: dict[str, Any]

    @property
    def root(self) -> Path:
        """The directory of the config file: relative targets and `.jr2/` live here."""
        return self.file.parent


def _read(path: Path) -> Any:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None


def find_config(cwd: Path | None = None) -> ProjectConfig | None:
    """The nearest `jr2.toml` or `pyproject.toml` with `[tool.jr2]`, from `cwd` up to the
    repository root; None when there is none."""
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        jr2_toml = folder / "jr2.toml"
        if jr2_toml.is_file():
            data = _read(jr2_toml)
            return ProjectConfig(jr2_toml, data if isinstance(data, dict) else {})
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            tool = _read(pyproject).get("tool", {})
            table = tool.get("jr2") if isinstance(tool, dict) else None
            if isinstance(table, dict) and table:
                return ProjectConfig(pyproject, table)
        if (folder / ".git").exists():
            return None
    return None
