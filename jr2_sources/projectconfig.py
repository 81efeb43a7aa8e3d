"""Named sources from `jr2.toml` (or `[tool.jr2]` in `pyproject.toml`) in the working directory.

    [sources.agent-work]
    kind = "github"
    target = "acme/app"
    label = ["agent"]
    token_env = "ACME_GITHUB_TOKEN"     # secrets by environment-variable reference only

`jr2 ready agent-work` then means `jr2 ready github:acme/app --label agent`; options given on
the command line override the file's. Each entry is validated by its kind's model, and errors name
the file, the source and the field. A key that looks like a secret (`token`, `password`, ...) is
refused unless it names an environment variable (`*_env`): secrets never live in files.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jr2_core.errors import ConfigError, UsageError

from .registry import Registry, SourceKind, options_to_values, split_source, validate_config

_SECRET_KEY = re.compile(r"(token|secret|password|passwd|api_key|pat)$", re.I)


@dataclass(frozen=True)
class NamedSource:
    """One `[sources.NAME]` entry."""

    name: str
    kind: str
    values: dict[str, Any]
    file: Path


def load_named_sources(cwd: Path | None = None) -> dict[str, NamedSource]:
    """The named sources of `jr2.toml`, else of `pyproject.toml`'s `[tool.jr2]`; {} if none."""
    cwd = cwd or Path.cwd()
    for path, section in ((cwd / "jr2.toml", ()), (cwd / "pyproject.toml", ("tool", "jr2"))):
        if not path.is_file():
            continue
        try:
            data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path.name}: {exc}") from None
        for key in section:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if section and not data:
            continue
        sources = data.get("sources", {}) if isinstance(data, dict) else {}
        if not isinstance(sources, dict):
            raise ConfigError(f"{path.name}: [sources] must be a table of named sources")
        out: dict[str, NamedSource] = {}
        for name, entry in sources.items():
            where = f"{path.name}: source {name!r}"
            if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
                raise ConfigError(f"{where}: needs kind = \"...\" (e.g. \"local\", \"github\")")
            for key in entry:
                if _SECRET_KEY.search(key) and not key.endswith("_env"):
                    raise ConfigError(
                        f"{where}: {key!r} looks like a secret; keep it in the environment and "
                        f"name the variable instead ({key}_env = \"VARIABLE\")")
            values = {k: v for k, v in entry.items() if k != "kind"}
            out[name] = NamedSource(name, entry["kind"], values, path)
        return out
    return {}


def resolve_source(spec: str, options: list[str], registry: Registry,
                   cwd: Path | None = None) -> tuple[SourceKind, BaseModel]:
    """SOURCE (`kind:target` or a name from jr2.toml) and its options -> (kind, config)."""
    kind_name, target = split_source(spec)
    if ":" in spec and (kind_name in registry.kinds or kind_name in registry.conflicts):
        kind = registry.get(kind_name)
        return kind, validate_config(kind, {"target": target, **options_to_values(kind, options)})
    named = load_named_sources(cwd)
    entry = named.get(spec)
    if entry is None:
        if ":" in spec:
            registry.get(kind_name)  # raises: unknown kind, listing the kinds
        names = ", ".join(sorted(named)) or "none defined in jr2.toml"
        raise UsageError(f"{spec!r} is neither KIND:TARGET nor a named source ({names})")
    kind = registry.get(entry.kind)
    where = f"{entry.file.name}: source {entry.name!r}"
    base = dict(entry.values)
    validate_config(kind, base, where=where, cli=False)  # the file alone must be valid
    return kind, validate_config(kind, {**base, **options_to_values(kind, options)}, where=where)
