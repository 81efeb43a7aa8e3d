"""Named sources from `jr2.toml` (or `[tool.jr2]` in `pyproject.toml`), found in the working
directory, else the nearest parent up to the repository root (`jr2.toml` first in each).

    [sources.agent-work]
    kind = "github"
    target = "acme/app"
    label = ["agent"]
    token_env = "ACME_GITHUB_TOKEN"     # secrets by environment-variable reference only

`jr2 ready agent-work` then means `jr2 ready github:acme/app --label agent`; command-line options
override the file's. An entry is validated by its kind's model when used (errors name the file,
the source and the field). A relative file `target` (`local`) is relative to the config file. A
key that looks like a secret is refused with a pointer to `token_env`, which names the variable
jr2 reads in place of the kind's own (`SourceKind.token_var`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jr2_core.errors import ConfigError, UsageError
from jr2_core.projectfile import find_config

from .registry import Registry, SourceKind, options_to_values, split_source, validate_config

if TYPE_CHECKING:
    from pydantic import BaseModel

_SECRET_KEY = re.compile(r"(token|secret|password|passwd|api_key|pat)$", re.I)


@dataclass(frozen=True)
class NamedSource:
    """One `[sources.NAME]` entry as the file holds it (`entry`), checked only when it is used
    (`checked`): a broken entry breaks only itself, never the file's other sources."""

    name: str
    entry: Any
    file: Path

    @property
    def where(self) -> str:
        """How errors name the entry: `jr2.toml: source 'NAME'`."""
        return f"{self.file.name}: source {self.name!r}"

    def checked(self) -> tuple[str, dict[str, Any]]:
        """The entry's kind and its other values; a `ConfigError` naming this entry when it
        has no kind or holds a secret-looking key."""
        entry = self.entry
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
            raise ConfigError(f"{self.where}: needs kind = \"...\" (e.g. \"local\", \"github\")")
        for key in entry:
            if _SECRET_KEY.search(key):
                raise ConfigError(
                    f"{self.where}: {key!r} looks like a secret; keep it in the environment "
                    f"and name the variable instead (token_env = \"VARIABLE\")")
        return entry["kind"], {k: v for k, v in entry.items() if k != "kind"}


def load_named_sources(cwd: Path | None = None) -> dict[str, NamedSource]:
    """The named sources of the config file `find_config` finds, unchecked; {} if none."""
    found = find_config(cwd)
    if found is None:
        return {}
    path, data = found.file, found.data
    sources = data.get("sources", {})
    if not isinstance(sources, dict):
        raise ConfigError(f"{path.name}: [sources] must be a table of named sources")
    return {name: NamedSource(name, entry, path) for name, entry in sources.items()}


def _use_token_env(kind: SourceKind, where: str, variable: Any) -> None:
    """Make the variable `token_env` names stand in for the kind's own token variable."""
    if kind.token_var is None:
        raise ConfigError(f"{where}: token_env: the {kind.name} kind reads no token")
    if not isinstance(variable, str) or not variable:
        raise ConfigError(f"{where}: token_env: expected the name of an environment variable")
    value = os.environ.get(variable)
    if not value:
        raise ConfigError(f"{where}: token_env: the variable {variable} is not set")
    os.environ[kind.token_var] = value


def _lookup(spec: str, registry: Registry,
            cwd: Path | None) -> tuple[SourceKind, NamedSource | None]:
    """SOURCE's kind, and its `jr2.toml` entry when it is a named source; a one-line error
    naming the known kinds or sources when it is neither."""
    kind_name, _ = split_source(spec)
    if ":" in spec and (kind_name in registry.kinds or kind_name in registry.conflicts):
        return registry.get(kind_name), None
    named = load_named_sources(cwd)
    entry = named.get(spec)
    if entry is None:
        if ":" in spec:
            registry.get(kind_name)  # raises: unknown kind, listing the kinds
        names = ", ".join(sorted(named)) or "none defined in jr2.toml"
        raise UsageError(f"{spec!r} is neither KIND:TARGET nor a named source ({names})")
    return registry.get(entry.checked()[0]), entry


def token_variables(spec: str, registry: Registry, cwd: Path | None = None) -> tuple[str, ...]:
    """The environment variables SOURCE's token is read from: its kind's own (`token_var`) and,
    for a named source, the one its `token_env` names. jr2 keeps both from its commands."""
    kind, entry = _lookup(spec, registry, cwd)
    variable = None if entry is None else entry.checked()[1].get("token_env")
    return tuple(v for v in (kind.token_var, variable) if isinstance(v, str) and v)


def resolve_source(spec: str, options: list[str], registry: Registry,
                   cwd: Path | None = None) -> tuple[SourceKind, BaseModel]:
    """SOURCE (`kind:target` or a name from jr2.toml) and its options -> (kind, config)."""
    kind, entry = _lookup(spec, registry, cwd)
    if entry is None:
        target = split_source(spec)[1]
        return kind, validate_config(kind, {"target": target, **options_to_values(kind, options)})
    base = entry.checked()[1]
    where = entry.where
    if "token_env" in base:
        _use_token_env(kind, where, base.pop("token_env"))
    file_target = base.get("target")
    if kind.target_is_path and isinstance(file_target, str) and not Path(file_target).is_absolute():
        base["target"] = str(entry.file.parent / file_target)
    validate_config(kind, base, where=where, cli=False)  # the file alone must be valid
    return kind, validate_config(kind, {**base, **options_to_values(kind, options)}, where=where)
