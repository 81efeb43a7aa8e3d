"""An issue's description as plain text, for `--exclusive-by touches`
(`jr2_sources.capabilities.limits.policy`).

Design notes
------------
* What jr2 reads. `Touches: a, b` lines (`jr2_sources.capabilities.limits.policy`) live in the
  item's body; on Jira that is the `description` field. The adapter asks the search for it only
  while a pool or a report uses `--exclusive-by touches` (`JiraAdapter.want_bodies`): a description
  can be large (Atlassian caps a text field at 32,767 characters), and every search of every poll
  would carry it otherwise. Editing a description is an issue edit: `updated` moves and Jira
  delivers
  `jira:issue_updated` with a `description` changelog item, so the delta search that rereads
  the issue (`deltas.py`) brings the new text and the item's groups follow it.
* Two shapes. REST v2, which jr2 calls on Cloud and Data Center alike, answers the description
  as a string: wiki markup on Data Center, and Cloud's rendering of its stored document as wiki
  markup ("v2 bodies are strings where v3 takes ADF", fixtures/jira/README.md, from Atlassian's
  description of the v3 API). Wiki markup keeps a plain `Touches: a, b` line as it is; the
  list and quote prefixes and the bold `*...*` that may surround the word are skipped by the
  `Touches` pattern of `jr2_sources.capabilities.limits.policy`. REST v3 (Cloud) answers an
  Atlassian Document Format document instead: `{"type": "doc", "version": 1, "content": [...]}`, a
  tree of block nodes (paragraph, heading, bulletList, listItem, blockquote, panel, codeBlock,
  table, ...) whose leaves are inline nodes: `text` (its `text`), `hardBreak` (a new line, "the
  equivalent to a <br>"), and others (mention, emoji, inlineCard, ...) that carry no text of the
  line. Atlassian's "Atlassian Document Format" page (developer.atlassian.com/cloud/jira/platform/
  apis/document/structure): "There are two categories of nodes: block and inline", and
  "traversing a document in sequence and concatenating the nodes yields content in the
  correct order". So `description_text` walks the tree in order: the text nodes of one block
  that holds inline content make one line (a hardBreak starts a new one), and every such block
  ends its line. Marks (bold, links, ...) do not change a text node's `text`.
* Which API version delivers which shape, and which one jr2 reads. Atlassian's description of
  Jira Cloud's REST API (fixtures/jira/atlassian/platform-subset.json, cut from its
  swagger-v3.v3.json): version 3's "Edit issue" (`PUT /rest/api/3/issue/{issueIdOrKey}`) says
  "the `description`, `environment`, and any `textarea` type custom fields (multi-line text
  fields) take Atlassian Document Format content", and the same operations under
  /rest/api/2 take and return those fields as strings (fixtures/jira/README.md). Data Center
  has no REST v3: its /rest/api/2 answers the stored wiki markup. Every read of a pool and of
  `jr2 ready` goes through /rest/api/2 (`client.API`), on Cloud and Data Center alike, so the
  string branch is the one that runs: a `Touches:` line a person writes in Cloud's editor
  (stored as ADF) reaches jr2 as Cloud's v2 string. The only REST v3 call is the dashboard's
  (`board.py`, `client.API3`), on its own issue's description, never an item's. The tests pin
  both: the pools' requests stay on /rest/api/2 (tests/reliability/test_limits_trackers.py,
  Jira touches), and a person's ADF description gives the same groups read through v2 and
  through v3 with this function (tests/trackers/jira/test_jira_touches.py). The ADF branch is
  kept, unit-tested on Atlassian's node shapes, for a caller that reads a v3 description; no
  pool reaches it today.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["description_text"]


def description_text(value: Any) -> str | None:
    """The description's text, lines separated by `\\n`: a string as it is (REST v2, wiki
    markup), an ADF document walked block by block (REST v3), None when there is none."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        return None
    lines: list[str] = []
    _walk(value, lines, [])
    return "\n".join(lines)


def _walk(node: Mapping[str, Any], lines: list[str], line: list[str]) -> None:
    """Append `node`'s text to `lines`; `line` gathers the inline text of the current block."""
    kind = node.get("type")
    if kind == "text":
        text = node.get("text")
        line.append(text if isinstance(text, str) else "")
        return
    if kind == "hardBreak":
        lines.append("".join(line))
        line.clear()
        return
    content = node.get("content")
    if not isinstance(content, list):
        return
    children = [c for c in content if isinstance(c, Mapping)]
    inline = any(c.get("type") in ("text", "hardBreak") for c in children)
    if not inline:
        for child in children:
            _walk(child, lines, [])
        return
    own: list[str] = []
    for child in children:
        _walk(child, lines, own)
    lines.append("".join(own))
