"""The backlog's pydantic models (`BacklogItem`, `Backlog`) and the one validating call.

The reference for what a valid backlog is, and the source of every validation error's words
(see `backlog.py` for the file format and the error shape). Imported only when needed: by
`parse_backlog`/`load_backlog`, by `read_backlog` for a document its hand check does not accept
(`plainbacklog.py`), and by whoever uses the models.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

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

from jr2_core.errors import error_words

from .backlog import _RULE, BacklogError, _q, _rule_problems, children_of


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
        return children_of(self.items)


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
