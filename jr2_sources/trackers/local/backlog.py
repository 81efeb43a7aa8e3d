"""The backlog file people write for the local Work Source (`local:PATH`).

Design note: a backlog is a TOML (or JSON) document holding `[[items]]`, each with an id, a title,
its blockers (`needs`, ids in the same file) and a few optional fields. The file is validated in
one pydantic call over the whole document (`TypeAdapter`, built once, in `backlogmodel.py`) so that
a 100k-item backlog stays fast. A run reads it with `read_backlog`, which first checks the usual
well-formed document by hand into plain slotted records (`plainbacklog.py`: no pydantic import,
about 0.1 s less at every start) and hands anything else to the models, which word every error.
TOML is read by `tomli` when it is installed (compiled, about twice as fast as the standard
library's `tomllib`, which is its pure-Python copy) and by `tomllib` otherwise.

The rules that span items (duplicate ids, an item that needs itself or is its own parent, empty
ids) live in a validator on `Backlog`, so every `Backlog`, however built, keeps them. Unknown
blocker or parent ids are not errors: the Ready-set reports them as missing blockers. Parent
cycles longer than one item are not errors either: like `needs` cycles, they are the Ready-set's
to report.

Every problem becomes one `BacklogError` line that names the file and, where it can, the line
and column (syntax) or the item (validation), in the shape compilers use: `backlog.toml:12:5: ...`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from jr2_core.errors import UsageError

if TYPE_CHECKING:
    import tomllib as _toml

    from .backlogmodel import Backlog, BacklogItem
    from .plainbacklog import PlainBacklog, PlainItem

    AnyBacklog: TypeAlias = Backlog | PlainBacklog
    """A backlog as a run reads it (`read_backlog`): the models' or the hand check's."""
    AnyItem: TypeAlias = BacklogItem | PlainItem
else:
    try:  # tomllib's upstream: same API and messages, compiled, ~2.5x faster
        import tomli as _toml
    except ImportError:
        import tomllib as _toml

__all__ = [
    "Backlog",
    "BacklogError",
    "BacklogFormat",
    "BacklogItem",
    "load_backlog",
    "parse_backlog",
    "read_backlog",
    "read_bytes",
]

BacklogFormat = Literal["toml", "json"]

_RULE = "backlog_rule"  # the pydantic error type of the cross-item rules below


class BacklogError(UsageError):
    """A backlog file that cannot be read, parsed or validated (one line, naming the file)."""


def __getattr__(name: str) -> Any:
    """`Backlog` and `BacklogItem`, the pydantic models, live in `backlogmodel.py` (loaded on
    first use: a run reads its backlog through `read_backlog` without pydantic)."""
    if name in ("Backlog", "BacklogItem"):
        from . import backlogmodel

        return getattr(backlogmodel, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _q(text: str) -> str:
    """Quote an id the way the messages show it: "T-3", escapes and all (stays one line)."""
    return json.dumps(text, ensure_ascii=False)


def children_of(items: Iterable[Any]) -> dict[str, list[str]]:
    """Each parent id's children's ids, in file order, from the items' `parent` (the models'
    and the hand-checked backlog's `children()`)."""
    kids: dict[str, list[str]] = {}
    for item in items:
        if item.parent is not None:
            kids.setdefault(item.parent, []).append(item.id)
    return kids


def _rule_problems(items: Sequence[Any]) -> list[str]:
    """Every cross-item problem, in file order: empty or duplicate ids, self-needs, self-parents."""
    problems: list[str] = []
    first_at: dict[str, int] = {}
    for number, item in enumerate(items, start=1):
        if not item.id.strip():
            problems.append(f"item {number} has an empty id")
            continue
        if item.id in first_at:
            problems.append(f"duplicate id {_q(item.id)} (items {first_at[item.id]} and {number})")
        else:
            first_at[item.id] = number
        if item.id in item.needs:
            problems.append(f"item {_q(item.id)} needs itself")
        if any(not need.strip() for need in item.needs):
            problems.append(f"item {_q(item.id)} needs an empty id")
        if item.parent == item.id:
            problems.append(f"item {_q(item.id)} is its own parent")
    return problems


_TOML_AT = re.compile(r"^(?P<msg>.*) \(at line (?P<line>\d+), column (?P<col>\d+)\)$", re.DOTALL)
_TOML_AT_END = re.compile(r"^(?P<msg>.*) \(at end of document\)$", re.DOTALL)


def _toml_error(err: _toml.TOMLDecodeError, text: str, name: str) -> BacklogError:
    """`name:LINE:COL: message`, from tomllib's "(at line X, column Y)" tail (3.11 has no attrs)."""
    lineno, colno, msg = getattr(err, "lineno", None), getattr(err, "colno", None), None
    if isinstance(lineno, int) and isinstance(colno, int):
        msg = str(getattr(err, "msg", "")) or None
    raw = str(err)
    if msg is None and (match := _TOML_AT.match(raw)):
        msg, lineno, colno = match["msg"], int(match["line"]), int(match["col"])
    elif msg is None and (match := _TOML_AT_END.match(raw)):
        msg, lineno = match["msg"], text.count("\n") + 1
        colno = len(text) - (text.rfind("\n") + 1) + 1
    if msg is None or lineno is None or colno is None:
        return BacklogError(f"{name}: {' '.join(raw.split())}")
    return BacklogError(f"{name}:{lineno}:{colno}: {' '.join(msg.split())}")


def _json_error(err: json.JSONDecodeError, name: str) -> BacklogError:
    """`name:LINE:COL: message`, from the json module's own position."""
    return BacklogError(f"{name}:{err.lineno}:{err.colno}: {err.msg}")


def _decode(text: str, *, name: str, fmt: BacklogFormat) -> Any:
    """The document as Python data, or a `BacklogError` pointing at the syntax error."""
    if fmt == "toml":
        try:
            return _toml.loads(text)
        except _toml.TOMLDecodeError as err:
            raise _toml_error(err, text, name) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise _json_error(err, name) from None


def _validate(data: Any, name: str) -> Backlog:
    """Validate decoded data with the pydantic models (`backlogmodel.py`, imported here)."""
    from .backlogmodel import validate

    return validate(data, name)


def _too_deep(name: str) -> BacklogError:
    """A document nested deeper than the parsers recurse (`a = [[[[...]]]]`)."""
    return BacklogError(f"{name}: nested too deeply to be a backlog")


def parse_backlog(text: str, *, name: str, fmt: BacklogFormat) -> Backlog:
    """Parse and validate a backlog document; `name` is the file name the errors show."""
    text = text.removeprefix("\ufeff")
    try:
        return _validate(_decode(text, name=name, fmt=fmt), name)
    except RecursionError:
        raise _too_deep(name) from None


def _sniff(text: str, name: str) -> Any:
    """The data of a file with no telling suffix: TOML if it parses as TOML, else JSON.

    When neither parses, the error shown is JSON's if the text starts with `{`, else TOML's.
    """
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as toml_err:
        try:
            return json.loads(text)
        except json.JSONDecodeError as json_err:
            if text.lstrip().startswith("{"):
                raise _json_error(json_err, name) from None
            raise _toml_error(toml_err, text, name) from None


MAX_BYTES = 256 * 1024 * 1024
"""The largest backlog file read (a few hundred thousand items fit in far less)."""


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or one `BacklogError` line saying why they cannot be read. Only a
    regular file of at most `MAX_BYTES` is read: a FIFO, a device (`/dev/zero`) or a socket
    would block or never end. It is opened without blocking and checked on the open file."""
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError
            if not stat.S_ISREG(st.st_mode):
                raise BacklogError(f"{name}: not a regular file (a pipe, device or socket); "
                                   "a backlog is a .toml or .json file")
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise BacklogError(f"{name}: larger than {MAX_BYTES // (1024 * 1024)} MiB; not "
                               "read as a backlog")
        return data
    except FileNotFoundError:
        raise BacklogError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise BacklogError(f"{name}: is a directory, not a backlog file") from None
    except OSError as err:
        raise BacklogError(f"{name}: cannot read: {err.strerror or err}") from None


def _read_data(path: Path, data: bytes | None = None) -> Any:
    """The decoded document at `path` (or `data`, its bytes read already): TOML for .toml,
    JSON for .json, otherwise sniffed."""
    name = str(path)
    if data is None:
        data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BacklogError(f"{name}: not UTF-8 text (bad byte at offset {err.start})") from None
    text = text.removeprefix("\ufeff")
    suffix = path.suffix.lower()
    try:
        if suffix in (".toml", ".json"):
            return _decode(text, name=name, fmt="toml" if suffix == ".toml" else "json")
        return _sniff(text, name)
    except RecursionError:
        raise _too_deep(name) from None


def load_backlog(path: Path) -> Backlog:
    """Read the backlog at `path`: TOML for .toml, JSON for .json, otherwise sniffed."""
    data = _read_data(path)
    try:
        return _validate(data, str(path))
    except RecursionError:
        raise _too_deep(str(path)) from None


def read_backlog(path: Path, data: bytes | None = None) -> Backlog | PlainBacklog:
    """`load_backlog` for a run: a well-formed document becomes a `PlainBacklog` checked by
    hand (no pydantic); anything else is validated by the models, errors and all. `data`: the
    file's bytes when the caller read them already (`read_bytes`), to keep them."""
    from .plainbacklog import quick_backlog

    doc = _read_data(path, data)
    quick = quick_backlog(doc)
    if quick is not None:
        return quick
    try:
        return _validate(doc, str(path))
    except RecursionError:
        raise _too_deep(str(path)) from None
