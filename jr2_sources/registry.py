"""Source kinds by name: `kind:target` -> a pydantic config model and a factory.

Plugins fill the registry through the `jr2_register_sources` hook. The options after SOURCE are
fields of the kind's config model, parsed here from the command line (names with `-` for `_`;
list fields repeat; bools take `--flag` / `--no-flag`) and validated by the model, so every kind
gets `--help` and one-line errors. A kind's config model, factory and tracker class may each be
named as `module:attr` (`SourceKind`), imported when first needed, so registering a kind imports
none of its modules. A kind is checked on first use (`Registry.get`): its tracker class must
implement the required methods, and its options must not collide with `RESERVED_OPTIONS` or
start with `jr2_` (the names jr2 keeps for options of its own).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from jr2_core.errors import ConfigError, UsageError, error_words

from .capabilities import capabilities_of
from .kit.durations import format_duration, parse_duration
from .optionhint import OptionHint

if TYPE_CHECKING:
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
    field), `factory(config, env)` returning the tracker, and a one-line `help`.
    `target_is_path`: the target is a file, so a relative one in jr2.toml is relative to that
    file. `token_var`: the environment variable the kind reads its token from first, which a
    named source's `token_env` stands in for (None: the kind takes no token)."""

    name: str
    config: type[BaseModel] | str
    """The config model, or its `module:attr`, imported when a model is first needed
    (`model_of`)."""
    factory: Callable[[Any, SourceEnv], Any] | str
    """What builds the tracker (often the tracker class itself), or its `module:attr`, imported
    when a source is first built (`factory_of`)."""
    help: str = ""
    plugin: str = ""
    target_is_path: bool = False
    token_var: str | None = None
    tracker: type | str | None = None
    """The kind's tracker class (a `jr2_sources.Tracker` subclass), or its `module:attr`,
    checked on first use. Its mixins are the kind's capabilities (`kind_capabilities`); None:
    not declared (every option is offered, and the tracker refuses what it cannot do)."""


def resolve(target: Any) -> Any:
    """A kind's model, factory or tracker class: `target` itself, or the attribute a
    `module:attr` string names, its module imported now (once: Python keeps it)."""
    if not isinstance(target, str):
        return target
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"{target!r}: expected module:attr")
    return getattr(import_module(module), attr)


def factory_of(kind: SourceKind) -> Callable[[Any, SourceEnv], Any]:
    """What builds the kind's tracker (`SourceKind.factory`, imported when named)."""
    factory: Callable[[Any, SourceEnv], Any] = resolve(kind.factory)
    return factory


def model_of(kind: SourceKind) -> type[BaseModel]:
    """The kind's config model (`SourceKind.config`, imported when named)."""
    model: type[BaseModel] = resolve(kind.config)
    return model


RESERVED_OPTIONS = frozenset({
    # jr2 ready / jr2 work today
    "cap", "timeout", "lease", "wait", "port", "listen", "webhook_secret_env", "json", "state",
    "format", "explain", "fail_on", "help", "max_attempts", "transient_exit", "retry_backoff",
    "retry_backoff_max", "gate", "on_feedback",
    "global_cap", "exclusive_by", "control_issue", "dashboard", "dashboard_interval",
    # jr2 dashboard
    "issue", "every", "write_interval",
    # reserved for jr2's own options (planned or likely)
    "workdir", "worktree", "pass_env", "log_limit", "tls_cert", "tls_key", "quiet", "verbose",
    "run", "config", "grace", "dry_run", "max_items", "log_dir", "env", "name",
})
"""Option names a kind's config may not use (besides `target`): `jr2 ready`/`jr2 work` take
them. Every name starting with `RESERVED_PREFIX` is reserved too."""

RESERVED_PREFIX = "jr2_"


REQUIRED_METHODS = ("snapshot", "claim", "renew", "settle")
"""The methods a tracker must implement (see `jr2_sources.Tracker`)."""


def missing_methods(cls: type) -> list[str]:
    """The required methods `cls` does not implement (one still abstract counts as missing)."""
    return [name for name in REQUIRED_METHODS
            if not callable(impl := getattr(cls, name, None))
            or getattr(impl, "__isabstractmethod__", False)]


def tracker_class(kind: SourceKind) -> type | None:
    """The kind's tracker class (`SourceKind.tracker`, imported when named), or None when the
    kind declares none."""
    cls: type | None = resolve(kind.tracker)
    return cls


def kind_capabilities(kind: SourceKind) -> tuple[str, ...] | None:
    """The capabilities of a kind, from the mixins of its tracker class
    (`jr2_sources.capabilities`); None when the kind declares no tracker class or it cannot be
    imported here (a missing extra): its capabilities are not known."""
    try:
        cls = tracker_class(kind)
    except ImportError:
        return None
    return None if cls is None else capabilities_of(cls)


def kind_problems(kind: SourceKind) -> list[str]:
    """What is wrong with a kind's declaration: option names jr2 reserves, a tracker class
    missing required methods. Empty when it is fine."""
    problems: list[str] = []
    clash = _option_clash(model_of(kind))
    if clash:
        problems.append(clash)
    tracker = tracker_class(kind)
    if tracker is not None:
        missing = missing_methods(tracker)
        if missing:
            problems.append(f"its tracker {tracker.__name__} does not implement "
                            f"{', '.join(missing)}")
    return problems


def _option_clash(model: type[BaseModel]) -> str:
    """What is wrong with a model's option names (jr2 reserves some), or ""."""
    clash = sorted(n for n in model.model_fields
                   if n in RESERVED_OPTIONS or n.startswith(RESERVED_PREFIX))
    if not clash:
        return ""
    names = ", ".join("--" + n.replace("_", "-") for n in clash)
    return f"option {names} collides with jr2's own options (rename it)"


class Registry:
    """Source kinds by name."""

    def __init__(self) -> None:
        self.kinds: dict[str, SourceKind] = {}
        self.conflicts: dict[str, str] = {}
        self._checked: set[str] = set()

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
        if name not in self._checked:
            problems = kind_problems(kind)
            if problems:
                raise ConfigError(f"source kind {name!r} of plugin {kind.plugin or '?'}: "
                                  + "; ".join(problems))
            self._checked.add(name)
        return kind


def split_source(spec: str) -> tuple[str, str]:
    """`kind:target` -> (kind, target). A bare name is returned as (name, "")."""
    kind, sep, target = spec.partition(":")
    if not kind:
        raise UsageError(f"{spec!r}: expected KIND:TARGET, e.g. local:backlog.toml")
    return kind, target if sep else ""


_COLLECTIONS = (list, tuple, set, frozenset)


def _choices(annotation: Any) -> list[Any]:
    """The types a field takes besides None: the members of a union, else the annotation."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _is_list(annotation: Any) -> bool:
    return any(typing.get_origin(a) in _COLLECTIONS for a in _choices(annotation))


def _is_bool(annotation: Any) -> bool:
    return _choices(annotation) == [bool]


def kind_fields(config: type[BaseModel]) -> list[str]:
    """A config model's option names (not `target`) in the order help shows them: the kind's own
    first, then those the WorkSource layer reads (declared by a base marked `_jr2_layer`, i.e.
    `jr2_sources.Tracker.Options`)."""
    layer = {name for cls in config.__mro__ if cls.__dict__.get("_jr2_layer")
             for name in inspect.get_annotations(cls)}
    names = [n for n in config.model_fields if n != "target"]
    return [n for n in names if n not in layer] + [n for n in names if n in layer]


def option_shapes(kind: SourceKind) -> dict[str, str]:
    """The kind's options in help order, each `bool` (`--x`/`--no-x`), `list` (repeats) or
    `value`, read from its model."""
    model = model_of(kind)
    shapes: dict[str, str] = {}
    for name in kind_fields(model):
        ann = model.model_fields[name].annotation
        shapes[name] = "bool" if _is_bool(ann) else "list" if _is_list(ann) else "value"
    return shapes


def options_to_values(kind: SourceKind, args: list[str]) -> dict[str, Any]:
    """Turn `--name value` options into raw field values of the kind's config model."""
    if not args:
        return {}  # no model needed (nor loaded) to read no options
    fields = option_shapes(kind)
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
        if field == "bool" and not eq:
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
        if field == "list":
            values.setdefault(key, []).append(value)
        else:
            values[key] = value
    return values


def validate_config(kind: SourceKind, values: dict[str, Any], *, where: str = "",
                    cli: bool = True) -> BaseModel:
    """Validate raw values with the kind's model; a failure is one line naming the field (as
    an option when it came from the command line)."""
    model = model_of(kind)
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(config)"
        name = loc.split(".")[0]
        field = name if not cli or name == "target" else "--" + name.replace("_", "-")
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        msg = error_words(first)
        if first["type"] == "extra_forbidden":
            known = kind_fields(model)
            names = ", ".join(n if not cli else "--" + n.replace("_", "-") for n in known)
            msg = f"no such {'option' if cli else 'key'} ({'options' if cli else 'keys'}: " \
                  f"{names or 'none'})"
        raise ConfigError(f"{where or kind.name}: {field}: {msg}{more}") from None


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
    model = model_of(kind)
    target = model.model_fields.get("target")
    if target is not None and target.description:
        lines += [f"  TARGET  {target.description}", ""]
    lines.append("Options:")
    for name in kind_fields(model):
        f = model.model_fields[name]
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


def _seconds(value: Any) -> Any:
    """`10m`-style durations (the kit's `Duration`), None kept."""
    return None if value is None else parse_duration(value)


class TrackerOptions(BaseModel):
    """The options the WorkSource layer reads from a kind's config. A kind's config model
    subclasses it (as `Tracker.Options`) and adds its own fields. Defined here, beside
    `layer_options` and `kind_fields` that read it, because `jr2_sources.tracker` builds on
    the registry."""

    model_config = ConfigDict(extra="forbid")
    _jr2_layer: ClassVar[bool] = True  # these fields come last in `jr2 ready KIND: --help`

    target: str = Field(min_length=1, description="what to read (a file, a repository, a URL)")
    children_block: bool = Field(default=True,
                                 description="a parent waits until its children are done")
    poll_every: Annotated[float | None, BeforeValidator(_seconds)] = Field(
        default=None, description="how often a waiting pool looks for changes (default 5s), "
                                  "and how often held items are watched")
    resync_every: Annotated[float, BeforeValidator(_seconds),
                            OptionHint("DURATION", lambda v: format_duration(float(v)))] = Field(
        default=300.0, gt=0,
        description="a pool read by deltas reads everything again this often, so a change the "
                    "tracker's 'changed since' question cannot see is missed at most this long")


class LayerOptions(Protocol):
    """What `layer_options` gives: the layer's options, read as attributes."""

    target: str
    children_block: bool
    poll_every: float | None
    resync_every: float


def layer_options(config: Any) -> LayerOptions:
    """The layer's options from any kind's config: the config itself when it carries them all
    (a model subclassing `Tracker.Options`), else a `TrackerOptions` of its fields of the same
    names (a kind whose model declares only some of them; defaults for the rest). The registry
    is the one place that looks a config's attributes up by name."""
    if config is not None and all(hasattr(config, name) for name in TrackerOptions.model_fields):
        return cast(LayerOptions, config)
    if config is None:
        return TrackerOptions(target="?")
    values = {name: getattr(config, name) for name in TrackerOptions.model_fields
              if name in type(config).model_fields}
    values["target"] = values.get("target") or "?"  # a kind may take its target elsewhere
    return TrackerOptions.model_validate(values)
