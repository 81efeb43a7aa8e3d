"""Source kinds by name: `kind:target` -> a pydantic config model and a factory.

Plugins fill the registry through the `jr2_register_sources` hook. The options a user gives
after SOURCE (`--label agent`, `--lease 10m`) are fields of the kind's config model, parsed here
from the command line and validated by the model, so every kind gets `--help` and one-line errors
for free. Option names are field names with `-` for `_`; list fields repeat (`--label a --label b`);
bool fields take `--flag` / `--no-flag`. `--help` names each option's value by its type (`TEXT`,
`N`, `close|label|nothing`, or an `OptionHint`'s metavar such as `DURATION`) and shows defaults in
the words a user would type (`10m`, `on`), leaving out defaults that mean "not set".
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jr2_core.errors import ConfigError, UsageError, error_words


@dataclass(frozen=True)
class OptionHint:
    """Metadata for a config field type (`Annotated[float, ..., OptionHint("DURATION", fmt)]`):
    how `--help` names its value and shows its default. pydantic ignores it."""

    metavar: str
    show: Callable[[Any], str] | None = None

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class SourceEnv:
    """What a factory may use besides its config: where local state lives, and whether the
    caller only reads (a dry-run report must not write to the tracker or create state)."""

    state_dir: Path
    read_only: bool = False


@dataclass(frozen=True)
class SourceKind:
    """A source kind: `name` (used as `name:target`), its `config` model (with a `target: str`
    field), `factory(config, env)` returning the tracker adapter, and a one-line `help`.
    `target_is_path`: the target is a file, so a relative one in jr2.toml is relative to that
    file. `token_var`: the environment variable the kind reads its token from first, which a
    named source's `token_env` stands in for (None: the kind takes no token)."""

    name: str
    config: type[BaseModel]
    factory: Callable[[Any, SourceEnv], Any]
    help: str = ""
    plugin: str = ""
    target_is_path: bool = False
    token_var: str | None = None


class Registry:
    """Source kinds by name."""

    def __init__(self) -> None:
        self.kinds: dict[str, SourceKind] = {}
        self.conflicts: dict[str, str] = {}

    def register(self, kind: SourceKind) -> None:
        """Add a kind. A second registration of one name makes that kind unusable (which of
        the two would run is not ours to guess) and raises an error naming both plugins."""
        old = self.kinds.get(kind.name)
        if old is not None and old.plugin != kind.plugin:
            msg = (f"source kind {kind.name!r} is registered twice: by {old.plugin} and by "
                   f"{kind.plugin}; uninstall one or limit plugins with JR2_LOAD_PLUGINS")
            self.conflicts[kind.name] = msg
            raise ConfigError(msg)
        self.kinds[kind.name] = kind

    def get(self, name: str) -> SourceKind:
        if name in self.conflicts:
            raise ConfigError(self.conflicts[name])
        kind = self.kinds.get(name)
        if kind is None:
            known = ", ".join(sorted(self.kinds)) or "none"
            raise UsageError(f"unknown source kind {name!r} (kinds: {known})")
        return kind


def split_source(spec: str) -> tuple[str, str]:
    """`kind:target` -> (kind, target). A bare name is returned as (name, "")."""
    kind, sep, target = spec.partition(":")
    if not kind:
        raise UsageError(f"{spec!r}: expected KIND:TARGET, e.g. local:backlog.toml")
    return kind, target if sep else ""


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_list(a) for a in typing.get_args(annotation) if a is not type(None))
    return False


def _is_bool(annotation: Any) -> bool:
    if annotation is bool:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args == [bool]
    return False


def options_to_values(kind: SourceKind, args: list[str]) -> dict[str, Any]:
    """Turn `--name value` options into raw field values of the kind's config model."""
    fields = {n: f for n, f in kind.config.model_fields.items() if n != "target"}
    values: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            raise UsageError(f"{kind.name}: unexpected argument {arg!r}")
        name, eq, inline = arg[2:].partition("=")
        key = name.replace("-", "_")
        negate = False
        if key not in fields and key.startswith("no_") and key[3:] in fields:
            key, negate = key[3:], True
        field = fields.get(key)
        if field is None:
            known = ", ".join("--" + n.replace("_", "-") for n in fields) or "none"
            raise UsageError(f"{kind.name}: no such option --{name} (options: {known})")
        if _is_bool(field.annotation) and not eq:
            values[key] = not negate
            i += 1
            continue
        if eq:
            value = inline
        else:
            if i + 1 >= len(args):
                raise UsageError(f"{kind.name}: --{name} needs a value")
            value = args[i + 1]
            i += 1
        i += 1
        if _is_list(field.annotation):
            values.setdefault(key, []).append(value)
        else:
            values[key] = value
    return values


def validate_config(kind: SourceKind, values: dict[str, Any], *, where: str = "",
                    cli: bool = True) -> BaseModel:
    """Validate raw values with the kind's model; a failure is one line naming the field (as
    an option when it came from the command line)."""
    from pydantic import ValidationError  # imported here: plugins import this module at start-up

    try:
        return kind.config.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(config)"
        name = loc.split(".")[0]
        field = name if not cli or name == "target" else "--" + name.replace("_", "-")
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        msg = error_words(first)
        if first["type"] == "extra_forbidden":
            known = [n for n in kind.config.model_fields if n != "target"]
            names = ", ".join(n if not cli else "--" + n.replace("_", "-") for n in known)
            msg = f"no such {'option' if cli else 'key'} ({'options' if cli else 'keys'}: " \
                  f"{names or 'none'})"
        raise ConfigError(f"{where or kind.name}: {field}: {msg}{more}") from None


def parse_options(kind: SourceKind, target: str, args: list[str]) -> BaseModel:
    """Parse `--name value` options into the kind's config model, or raise a one-line error."""
    return validate_config(kind, {"target": target, **options_to_values(kind, args)})


def _hint(f: FieldInfo) -> OptionHint | None:
    return next((m for m in f.metadata if isinstance(m, OptionHint)), None)


def _metavar(f: FieldInfo) -> str:
    hint = _hint(f)
    if hint is not None:
        return hint.metavar
    ann = f.annotation
    args = [a for a in typing.get_args(ann) if a is not type(None)]
    if typing.get_origin(ann) in (typing.Union, types.UnionType, list, tuple, set, frozenset):
        ann = args[0] if len(args) == 1 else ann
    if typing.get_origin(ann) is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(ann))
    names: dict[Any, str] = {int: "N", float: "NUMBER"}
    return names.get(ann, "TEXT")


def _default_words(f: FieldInfo) -> str:
    """The default as a user would type it; "" when it means "not set" (None, empty)."""
    value = f.get_default(call_default_factory=True)
    if value is None or value == [] or value == "":
        return ""
    hint = _hint(f)
    if hint is not None and hint.show is not None:
        return hint.show(value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def kind_help(kind: SourceKind) -> str:
    """The options of a kind, for `jr2 ready KIND: --help`."""
    lines = [f"{kind.name}:TARGET  {kind.help}".rstrip(), ""]
    target = kind.config.model_fields.get("target")
    if target is not None and target.description:
        lines += [f"  TARGET  {target.description}", ""]
    lines.append("Options:")
    for name, f in kind.config.model_fields.items():
        if name == "target":
            continue
        opt = "--" + name.replace("_", "-")
        if _is_bool(f.annotation):
            opt = f"{opt} / --no-{name.replace('_', '-')}"
        elif _is_list(f.annotation):
            opt += f" {_metavar(f)} (repeatable)"
        else:
            opt += f" {_metavar(f)}"
        shown = "" if f.is_required() else _default_words(f)
        default = f"  [default: {shown}]" if shown else ""
        lines.append(f"  {opt}\n      {f.description or ''}{default}")
    return "\n".join(lines)
