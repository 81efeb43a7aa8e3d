"""The backlog file people write for the local Work Source (`local:PATH`).

A TOML (or JSON) document of `[[items]]`, each with an id, a title, its blockers (`needs`) and a
few optional fields, validated in one pydantic call (`TypeAdapter`, built once) so a 100k-item
backlog stays fast; TOML is read by `tomli` when installed, else `tomllib`. The rules that span
items (duplicate or empty ids, an item that needs itself or is its own parent) are a validator
on `Backlog`; unknown ids and longer cycles are the Ready-set's to report. Every problem is one
`BacklogError` line naming the file and the line and column or the item (`backlog.toml:12:5:`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from jr2_core.errors import UsageError, error_words

if TYPE_CHECKING:
    import tomllib as _toml
else:
    try:  # tomllib's upstream: same API and messages, compiled, ~2.5x faster
        import tomli as _toml
    except ImportError:
        import tomllib as _toml

BacklogFormat = Literal["toml", "json"]

_RULE = "backlog_rule"  # the pydantic error type of the cross-item rules below


class BacklogError(UsageError):
    """A backlog file that cannot be read, parsed or validated (one line, naming the file)."""


def _q(text: str) -> str:
    """Quote an id the way the messages show it: "T-3", escapes and all (stays one line)."""
    return json.dumps(text, ensure_ascii=False)


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


class BacklogItem(BaseModel):
    """One work item as written in the backlog file.

    Types are strict where a person could write the wrong shape (a string for a list, "2" for a
    priority); `created` takes a TOML datetime or an ISO string, and a time without a zone is UTC.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: StrictStr
    title: StrictStr
    needs: list[StrictStr] = Field(default_factory=list)
    labels: list[StrictStr] = Field(default_factory=list)
    priority: StrictInt | None = None
    status: Literal["open", "done"] = "open"
    body: StrictStr | None = None
    parent: StrictStr | None = None
    branch: StrictStr | None = None
    created: datetime | None = None

    @field_validator("created")
    @classmethod
    def _utc_if_naive(cls, value: datetime | None) -> datetime | None:
        """Give a zone-less time UTC, so that items can be ordered by age."""
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Backlog(BaseModel):
    """The whole backlog file: its items, in file order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: list[BacklogItem] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_rules(self) -> Backlog:
        """Refuse what no reading of the file can make sense of (see `_rule_problems`)."""
        problems = _rule_problems(self.items)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise PydanticCustomError(_RULE, "{problem}", {"problem": problems[0] + more})
        return self

    def by_id(self) -> dict[str, BacklogItem]:
        """Map each id to its item (O(n): call once per snapshot)."""
        return {item.id: item for item in self.items}

    def children(self) -> dict[str, list[str]]:
        """Map each parent id to its children's ids, in file order, derived from `parent`."""
        kids: dict[str, list[str]] = {}
        for item in self.items:
            if item.parent is not None:
                kids.setdefault(item.parent, []).append(item.id)
        return kids


_ADAPTER: TypeAdapter[Backlog] = TypeAdapter(Backlog)


def _describe(error: ErrorDetails, data: Any) -> str:
    """One pydantic error as a phrase: where (item number and id, field) and what."""
    loc, kind, msg = error["loc"], error["type"], error_words(error)
    if kind == _RULE:
        return str(error["msg"])
    if not loc:
        return "the top level must be a table (TOML) or an object (JSON) holding 'items'"
    if loc[0] != "items":
        return f"unknown top-level key {str(loc[0])!r}" if kind == "extra_forbidden" else msg
    if len(loc) == 1 or not isinstance(loc[1], int):
        return f"'items' must be a list of tables ([[items]]): {msg}"
    index = loc[1]
    where = f"item {index + 1}"
    raw = data.get("items") if isinstance(data, dict) else None
    entry = raw[index] if isinstance(raw, list) and index < len(raw) else None
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        where += f" (id {_q(entry['id'])})"
    if len(loc) == 2:
        return f"{where}: {msg}"
    field = str(loc[2])
    if kind == "extra_forbidden":
        return f"{where}: unknown key {field!r}"
    if kind == "missing":
        return f"{where}: missing key {field!r}"
    entries = "".join(
        f" entry {part + 1}" if isinstance(part, int) else f".{part}" for part in loc[3:]
    )
    return f"{where}: field {field!r}{entries}: {msg}"


def _rank(error: ErrorDetails) -> tuple[int, int]:
    """Errors by item; within an item an unknown key first: a typo explains the rest."""
    loc = error["loc"]
    index = loc[1] if len(loc) > 1 and loc[0] == "items" and isinstance(loc[1], int) else -1
    return index, 0 if error["type"] == "extra_forbidden" else 1


def _validation_error(err: ValidationError, data: Any, name: str) -> BacklogError:
    """The first error as one line, with "(and N more)" when there are several."""
    errors = sorted(err.errors(include_url=False, include_input=False), key=_rank)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return BacklogError(f"{name}: {' '.join(_describe(errors[0], data).split())}{more}")


def validate(data: Any, name: str) -> Backlog:
    """Validate decoded data in one call, or raise the first problem as one line."""
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as err:
        raise _validation_error(err, data, name) from None


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


def _decode(text: str, name: str, suffix: str) -> Any:
    """The document as Python data: TOML for .toml, JSON for .json, otherwise TOML if it parses
    as TOML, else JSON (when neither parses, JSON's error if the text starts with `{`, else
    TOML's); a `BacklogError` pointing at the syntax error."""
    toml_err: _toml.TOMLDecodeError | None = None
    if suffix != ".json":
        try:
            return _toml.loads(text)
        except _toml.TOMLDecodeError as err:
            if suffix == ".toml":
                raise _toml_error(err, text, name) from None
            toml_err = err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        if toml_err is None or text.lstrip().startswith("{"):
            raise _json_error(err, name) from None
        raise _toml_error(toml_err, text, name) from None


def _parse(text: str, name: str, suffix: str) -> Backlog:
    try:
        return validate(_decode(text.removeprefix("\ufeff"), name, suffix), name)
    except RecursionError:  # nested deeper than the parsers recurse (`a = [[[[...]]]]`)
        raise BacklogError(f"{name}: nested too deeply to be a backlog") from None


def parse_backlog(text: str, *, name: str, fmt: BacklogFormat) -> Backlog:
    """Parse and validate a backlog document; `name` is the file name the errors show."""
    return _parse(text, name, f".{fmt}")


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


def load_backlog(path: Path, data: bytes | None = None) -> Backlog:
    """Read the backlog at `path` (or `data`, its bytes when the caller read them already with
    `read_bytes`): TOML for .toml, JSON for .json, otherwise sniffed."""
    name = str(path)
    try:
        text = (read_bytes(path) if data is None else data).decode("utf-8")
    except UnicodeDecodeError as err:
        raise BacklogError(f"{name}: not UTF-8 text (bad byte at offset {err.start})") from None
    return _parse(text, name, path.suffix.lower())
