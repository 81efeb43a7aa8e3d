"""Regenerate the vendored parts of the trackers' own descriptions under fixtures/.

    python tools/vendor_descriptions.py jira SWAGGER      # a path or URL of swagger-v3.v3.json
    python tools/vendor_descriptions.py gitlab WEBHOOK_MD # a path or URL of webhook_events.md
    python tools/vendor_descriptions.py gitlab-api LINKS_MD  # ... of doc/api/issue_links.md
    python tools/vendor_descriptions.py gitlab-members MEMBERS_MD  # ... of doc/api/members.md
    python tools/vendor_descriptions.py gitlab-label-events EVENTS_MD  # resource_label_events.md

Design note: the conformance tests check jr2's requests and the fake servers' answers against
material nobody here wrote. Only the parts jr2 uses are kept, so the fixtures stay small and a
diff after regenerating shows what changed upstream:

* jira: the operations jr2 calls (`OPERATIONS`) from Atlassian's Jira Cloud platform OpenAPI
  description (https://developer.atlassian.com/cloud/jira/platform/swagger-v3.v3.json, Apache
  2.0 per its own `info.license`), with every schema they reference, transitively, written to
  fixtures/jira/atlassian/platform-subset.json with its source, version and licence.
* gitlab: the payload examples of the "Work item events" (an Issue Hook) and "Comment on an
  issue" (a Note Hook) sections of GitLab's webhook events page
  (https://gitlab.com/gitlab-org/gitlab/-/raw/master/doc/user/project/integrations/
  webhook_events.md, GitLab documentation, CC BY-SA 4.0), written to fixtures/gitlab/webhooks/.
  The page shows no `work_item` example; it says that for work items other than issues
  "the object_kind field is work_item, and the type is the work item type", so
  `work_item_task.json` is the Issue Hook example with exactly those two fields changed.
* gitlab-api: the example answer of "List issue relations" of GitLab's issue links API page
  (doc/api/issue_links.md, same licence), written to fixtures/gitlab/api/issue_links.json.
* gitlab-members: the example answer of "Get a member of a group or project, including
  inherited (and invited) members" of GitLab's members API page (doc/api/members.md, same
  licence), written to fixtures/gitlab/api/member_all.json (the dashboard's author check).
* gitlab-label-events: the example answer of "List project issue label events" of GitLab's
  resource label events API page (doc/api/resource_label_events.md, same licence), written to
  fixtures/gitlab/api/resource_label_events.json (who added a gate's answer label).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JIRA_OUT = ROOT / "fixtures" / "jira" / "atlassian" / "platform-subset.json"
GITLAB_OUT = ROOT / "fixtures" / "gitlab" / "webhooks"
GITLAB_API_OUT = ROOT / "fixtures" / "gitlab" / "api" / "issue_links.json"
JIRA_SOURCE = "https://developer.atlassian.com/cloud/jira/platform/swagger-v3.v3.json"
GITLAB_SOURCE = ("https://gitlab.com/gitlab-org/gitlab/-/raw/master/doc/user/project/"
                 "integrations/webhook_events.md")
GITLAB_API_SOURCE = "https://gitlab.com/gitlab-org/gitlab/-/raw/master/doc/api/issue_links.md"
GITLAB_EVENTS_OUT = ROOT / "fixtures" / "gitlab" / "api" / "resource_label_events.json"
GITLAB_EVENTS_SOURCE = ("https://gitlab.com/gitlab-org/gitlab/-/raw/master/doc/api/"
                        "resource_label_events.md")
GITLAB_MEMBERS_OUT = ROOT / "fixtures" / "gitlab" / "api" / "member_all.json"
GITLAB_MEMBERS_SOURCE = "https://gitlab.com/gitlab-org/gitlab/-/raw/master/doc/api/members.md"
MEMBER_HEADINGS = ("Get a member of a group or project, including inherited and invited members",
                   "Get a member of a group or project, including inherited members")

# (method, path) of every Jira Cloud operation jr2 sends (as /rest/api/2/..., the same
# operations: "Both versions offer the same collection of operations")
OPERATIONS = (
    ("get", "/rest/api/3/serverInfo"),
    ("get", "/rest/api/3/field"),
    ("get", "/rest/api/3/myself"),
    ("get", "/rest/api/3/status/{idOrName}"),
    ("post", "/rest/api/3/search/jql"),
    ("get", "/rest/api/3/issue/{issueIdOrKey}"),
    ("put", "/rest/api/3/issue/{issueIdOrKey}"),
    ("put", "/rest/api/3/issue/{issueIdOrKey}/assignee"),
    ("get", "/rest/api/3/issue/{issueIdOrKey}/comment"),
    ("post", "/rest/api/3/issue/{issueIdOrKey}/comment"),
    ("put", "/rest/api/3/issue/{issueIdOrKey}/comment/{id}"),
    ("delete", "/rest/api/3/issue/{issueIdOrKey}/comment/{id}"),
    ("post", "/rest/api/3/comment/list"),
    ("get", "/rest/api/3/issue/{issueIdOrKey}/transitions"),
    ("post", "/rest/api/3/issue/{issueIdOrKey}/transitions"),
    ("get", "/rest/api/3/user/permission/search"),
)


def read(source: str) -> str:
    """A file's text, from a path or an http(s) URL."""
    if re.match(r"https?://", source):
        with urllib.request.urlopen(source, timeout=60) as resp:
            return str(resp.read().decode("utf-8"))
    return Path(source).read_text(encoding="utf-8")


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def jira_subset(description: dict[str, Any], source: str) -> dict[str, Any]:
    """The operations of `OPERATIONS` and every schema they reference."""
    paths: dict[str, Any] = {}
    for method, path in OPERATIONS:
        op = description["paths"][path][method]
        paths.setdefault(path, {})[method] = op
    schemas = description["components"]["schemas"]
    wanted: set[str] = set()
    _refs(paths, wanted)
    todo = list(wanted)
    while todo:
        name = todo.pop()
        more: set[str] = set()
        _refs(schemas[name], more)
        for extra in more - wanted:
            wanted.add(extra)
            todo.append(extra)
    info = description["info"]
    return {"x-source": source, "x-regenerate": "python tools/vendor_descriptions.py jira SRC",
            "openapi": description.get("openapi"),
            "info": {"title": info.get("title"), "version": info.get("version"),
                     "license": info.get("license")},
            "paths": paths,
            "components": {"schemas": {n: schemas[n] for n in sorted(wanted)}}}


def _json_after(text: str, heading: str) -> Any:
    """The first ```json block after `heading` (a markdown heading line)."""
    at = re.search(rf"^#+ {re.escape(heading)}\s*$", text, re.MULTILINE)
    if at is None:
        raise SystemExit(f"no section {heading!r} in the webhook page")
    block = re.compile(r"```json\n(.*?)\n```", re.DOTALL).search(text, at.end())
    if block is None:
        raise SystemExit(f"no JSON example after {heading!r}")
    return json.loads(block.group(1))


def gitlab_hooks(text: str) -> dict[str, dict[str, Any]]:
    """The vendored payloads by file name."""
    issue = _json_after(text, "Work item events")
    task = json.loads(json.dumps(issue))
    task["object_kind"] = task["event_type"] = "work_item"
    task["object_attributes"]["type"] = "Task"
    return {"issue.json": issue, "note_issue.json": _json_after(text, "Comment on an issue"),
            "work_item_task.json": task}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("which", choices=("jira", "gitlab", "gitlab-api", "gitlab-members",
                                      "gitlab-label-events"))
    ap.add_argument("source", nargs="?", help="a path or URL (default: the upstream URL)")
    args = ap.parse_args()
    if args.which == "jira":
        source = args.source or JIRA_SOURCE
        subset = jira_subset(json.loads(read(source)), JIRA_SOURCE)
        JIRA_OUT.parent.mkdir(parents=True, exist_ok=True)
        JIRA_OUT.write_text(json.dumps(subset, indent=1, sort_keys=True) + "\n")
        print(f"wrote {JIRA_OUT.relative_to(ROOT)} ({len(subset['paths'])} paths, "
              f"{len(subset['components']['schemas'])} schemas)")
        return
    if args.which == "gitlab-api":
        links = _json_after(read(args.source or GITLAB_API_SOURCE), "List issue relations")
        GITLAB_API_OUT.parent.mkdir(parents=True, exist_ok=True)
        GITLAB_API_OUT.write_text(json.dumps(links, indent=2) + "\n")
        print(f"wrote {GITLAB_API_OUT.relative_to(ROOT)}")
        return
    if args.which == "gitlab-label-events":
        events = _json_after(read(args.source or GITLAB_EVENTS_SOURCE),
                             "List project issue label events")
        GITLAB_EVENTS_OUT.write_text(json.dumps(events, indent=2) + "\n")
        print(f"wrote {GITLAB_EVENTS_OUT.relative_to(ROOT)}")
        return
    if args.which == "gitlab-members":
        text = read(args.source or GITLAB_MEMBERS_SOURCE)
        heading = next((h for h in MEMBER_HEADINGS
                        if re.search(rf"^#+ {re.escape(h)}\s*$", text, re.MULTILINE)),
                       MEMBER_HEADINGS[0])
        GITLAB_MEMBERS_OUT.write_text(json.dumps(_json_after(text, heading), indent=2) + "\n")
        print(f"wrote {GITLAB_MEMBERS_OUT.relative_to(ROOT)}")
        return
    source = args.source or GITLAB_SOURCE
    GITLAB_OUT.mkdir(parents=True, exist_ok=True)
    for name, payload in gitlab_hooks(read(source)).items():
        (GITLAB_OUT / name).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {(GITLAB_OUT / name).relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
