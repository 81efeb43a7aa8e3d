"""GitHub `label` and `milestone` deliveries that may change what the user's filter selects.

Design note: an issue can enter or leave the scope (`--label`, `--exclude-label`, `--milestone`)
without its `updated_at` moving: a label renamed into or out of a name the filter uses, or
deleted; a milestone the filter names deleted, or renamed (GitHub's descriptions of "Update a
label", "Delete a label", "Update a milestone", "Delete a milestone" do not say the issues'
update time moves). A delta, which lists issues by update time, cannot see that. GitHub sends
the `label` (`created`, `edited`, `deleted`) and `milestone` (`created`, `closed`, `opened`,
`edited`, `deleted`) events for these (their schemas and GitHub's example deliveries are
vendored in `fixtures/github/openapi/`: `webhooks.json`, `webhook-examples.json`). `scope_change`
says whether one delivery can change what the reading selects; the adapter then makes the next
reading a full one (the since-window's gap: `SinceWindow.want_full`), and a milestone title is
looked up again. Every other delivery of these events is ignored at no cost.

What concerns the scope:

* `label`: `deleted`, or `edited` with `changes.name.from` (a rename), when the old or the new
  name is one the reading judges by: `--label`, `--exclude-label`, `--done-label` (a rename
  there changes which issues count as done blockers) and jr2's marks (`jr2:claimed`,
  `jr2:failed`, `--review-label`: a marked issue is listed outside the filter). Names compare
  as GitHub compares label names (case-insensitively). `created` never does: no issue can carry
  a label that did not exist. An `edited` without a rename (colour, description) never does.
* `milestone` with `--milestone TITLE`: `created`, `deleted`, or `edited` with
  `changes.title.from`, when the old or new title is TITLE (the title then names another
  milestone, or none). With `--milestone NUMBER`: that milestone `deleted`. With `*` or `none`:
  any milestone `deleted` (its issues lose their milestone). `closed` and `opened` never do:
  the issues list's `milestone` parameter selects by number, whatever the milestone's state.
* Only deliveries for the configured repository (`repository.full_name`, required in both
  events' schemas) count.
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
