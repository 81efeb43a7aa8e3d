"""The options every label-based tracker source shares (`LabelOptions`, mixed into its config
model): scope and priorities by labels, and the three labels jr2 adds and removes (`claim_label`,
`failed_label`, `done_label`: the only ones it touches, and they must differ). A tracker whose
label names are case-insensitive sets `labels_ignore_case`; every comparison goes through
`label_key` / `has_label`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from .claims import Marker
from .markers import TRUST_HELP

__all__ = ["LabelOptions", "failed_label_differs"]

_PRIORITY = re.compile(r"^(?P<label>.+)=(?P<n>-?\d+)$")


def failed_label_differs(value: str, info: ValidationInfo) -> str:
    """A pydantic check for `failed_label`: it must differ from `claim_label` (declared before
    it), or a failed item would look claimed."""
    if value == info.data.get("claim_label"):
        raise ValueError("must differ from --claim-label")
    return value


class LabelOptions(BaseModel):
    """Label scope, label priorities and jr2's own labels, for a tracker's config model."""

    priority_example: ClassVar[str] = "priority:high=1"  # a LABEL=N for error messages
    labels_ignore_case: ClassVar[bool] = False  # label names compare case-insensitively (GitHub)

    label: list[str] = Field(default_factory=list,
                             description="only issues with this label (repeat: all of them)")
    exclude_label: list[str] = Field(default_factory=list,
                                     description="leave out issues with this label (repeatable)")
    priority_label: list[str] = Field(
        default_factory=list,
        description="LABEL=N: issues with LABEL get priority N, lower first (repeatable)")
    trust: list[str] = Field(default_factory=list, description=TRUST_HELP)
    claim_label: str = Field(default="jr2:claimed", min_length=1,
                             description="the label jr2 puts on an issue a pool holds")
    failed_label: str = Field(default="jr2:failed", min_length=1,
                              description="the label jr2 puts on an issue whose worker failed")
    on_success: Literal["close", "label", "nothing"] = Field(
        default="close",
        description="on success: close the issue, add --done-label, or leave it open")
    done_label: str | None = Field(default=None, validate_default=True,
                                   description="the label --on-success label adds; an issue "
                                               "carrying it counts as done")

    @field_validator("priority_label")
    @classmethod
    def _priorities(cls, values: list[str]) -> list[str]:
        for v in values:
            if not _PRIORITY.match(v):
                raise ValueError(f"expected LABEL=N (e.g. {cls.priority_example}), not {v!r}")
        return values

    _failed_differs = field_validator("failed_label")(failed_label_differs)

    @field_validator("done_label")
    @classmethod
    def _done_label(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            if info.data.get("on_success") == "label":
                raise ValueError("--on-success label needs --done-label")
            return None
        if value in (info.data.get("claim_label"), info.data.get("failed_label")):
            raise ValueError("must differ from --claim-label and --failed-label")
        return value

    def label_key(self, name: str) -> str:
        """The form a label name is compared in (case-folded where the tracker ignores case)."""
        return name.casefold() if self.labels_ignore_case else name

    def label_set(self, labels: Iterable[str | None]) -> set[str]:
        """`labels` as comparable keys."""
        return {self.label_key(name) for name in labels if name}

    def has_label(self, labels: Iterable[str], name: str | None) -> bool:
        """Whether `labels` carries `name`, compared as the tracker compares label names."""
        return name is not None and self.label_key(name) in self.label_set(labels)

    def priorities(self) -> dict[str, int]:
        """The label-to-priority map (`priority:high=1` -> {"priority:high": 1})."""
        out: dict[str, int] = {}
        for v in self.priority_label:
            m = _PRIORITY.match(v)
            assert m is not None
            out[self.label_key(m["label"])] = int(m["n"])
        return out

    def selects(self, labels: Iterable[str]) -> bool:
        """Whether the user's label filter selects an issue with `labels`, ignoring jr2's own
        labels, so jr2's writes never move an issue out of scope."""
        mine = {self.claim_label, self.failed_label, self.done_label}
        have = set(labels)
        return set(self.label) - mine <= have and not (set(self.exclude_label) - mine) & have

    def settled_by(self, labels: Iterable[str],
                   found: Iterable[Marker]) -> Literal["labelled", "done"] | None:
        """Why an open issue is no longer work: the failed or the done label ("labelled"), or
        done before and left open on purpose (a `jr2:done` among `found`: "done"); else None."""
        if self.label_set([self.failed_label, self.done_label]) & self.label_set(labels):
            return "labelled"
        if self.on_success == "nothing" and any(mk.kind == "done" for mk in found):
            return "done"
        return None
