"""GitHub `label` and `milestone` deliveries that may change what the user's filter selects
(which no `updated_at` shows): `scope_change` says so, and the tracker makes the next reading
full and looks a milestone title up again. A `label` `deleted`, or renamed, whose old or new name
the reading judges by (case-insensitively); a `milestone` created, deleted or retitled to or from
`--milestone TITLE`, a NUMBER's deleted, any deleted for `*` or `none`. Only deliveries for the
configured repository count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .config import GitHubConfig
from .refs import same_repo

__all__ = ["SCOPE_EVENTS", "judged_labels", "scope_change"]

SCOPE_EVENTS = frozenset({"label", "milestone"})


def judged_labels(config: GitHubConfig) -> list[str]:
    """The label names the reading judges issues by (see the module notes)."""
    names = [*config.label, *config.exclude_label, config.claim_label, config.failed_label]
    if config.done_label:
        names.append(config.done_label)
    if config.on_success == "review":
        names.append(config.review_label)
    return names


def _renamed_from(payload: Mapping[str, Any], key: str) -> str | None:
    """`changes.<key>.from` of an `edited` delivery (the name or title before), if any."""
    changes = payload.get("changes")
    old = changes.get(key) if isinstance(changes, Mapping) else None
    before = old.get("from") if isinstance(old, Mapping) else None
    return before if isinstance(before, str) else None


def _label_change(payload: Mapping[str, Any], config: GitHubConfig) -> str | None:
    label = payload.get("label")
    name = label.get("name") if isinstance(label, Mapping) else None
    action = payload.get("action")
    if not isinstance(name, str) or action not in ("edited", "deleted"):
        return None
    names = [name]
    if action == "edited":
        before = _renamed_from(payload, "name")
        if before is None:
            return None  # colour or description only
        names.append(before)
    judged = config.label_set(judged_labels(config))
    if not judged & config.label_set(names):
        return None
    what = f"renamed from {names[1]!r} to {name!r}" if action == "edited" else "deleted"
    return f"label {what}"


def _milestone_change(payload: Mapping[str, Any], config: GitHubConfig) -> str | None:
    wanted = config.milestone
    ms = payload.get("milestone")
    if not wanted or not isinstance(ms, Mapping):
        return None
    action = payload.get("action")
    title, number = ms.get("title"), ms.get("number")
    if wanted in ("*", "none") or wanted.isdigit():
        hit = action == "deleted" and (not wanted.isdigit() or number == int(wanted))
        return f"milestone {title!r} deleted" if hit else None
    titles: Iterable[Any] = [title]
    if action == "edited":
        before = _renamed_from(payload, "title")
        if before is None:
            return None  # description or due date only
        titles = [title, before]
    elif action not in ("created", "deleted"):
        return None  # closed, opened: the list selects by number, whatever the state
    if wanted not in titles:
        return None
    return f"milestone {title!r} {action}"


def scope_change(event: str, payload: Mapping[str, Any], repo: str,
                 config: GitHubConfig) -> str | None:
    """Why a `label` or `milestone` delivery for `repo` can change what `config`'s filter
    selects (for logs), or None when it cannot (module notes)."""
    if event not in SCOPE_EVENTS:
        return None
    repository = payload.get("repository")
    full = repository.get("full_name") if isinstance(repository, Mapping) else None
    if not isinstance(full, str) or not same_repo(full, repo):
        return None
    why = (_label_change if event == "label" else _milestone_change)(payload, config)
    return f"{why} in {full}: the filter's scope may have changed" if why else None
