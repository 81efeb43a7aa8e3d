"""`python gh_pr_worker.py FAKE_URL LOG PLAN_JSON`: a worker for the pull-request stories.

It appends `<JR2_ITEM_ID> <JR2_ITEM_BRANCH>` to LOG, then does what PLAN_JSON (a mapping of item
id to steps) says for its item, through the fake's REST API as an agent would with `gh`: `open
BASE` opens a pull request from `$JR2_ITEM_BRANCH` into BASE; `squash`/`merge` merges it;
`close` closes it unmerged (PATCH state closed); `check CONCLUSION` adds a check run on the merge
commit, `headcheck CONCLUSION` on the PR's head; `open stacked` opens it into `$JR2_BASE_BRANCH`
(else main); `pr N` takes up pull request N (a rerun), `push` pushes to its head. LOG gets
`<id> <branch> <base branch or ->`, LOG.blockers each `JR2_BLOCKERS_JSON`, LOG.feedback each
`JR2_FEEDBACK_JSON` (with the text file's first line as `text`).
An item not in the plan just succeeds; a list of lists is one list of steps per attempt.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from typing import Any


def call(url: str, method: str, body: Any = None) -> Any:
    req = urllib.request.Request(url, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


def main() -> None:
    fake, log, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    item, branch = os.environ["JR2_ITEM_ID"], os.environ.get("JR2_ITEM_BRANCH", "")
    stacked = os.environ.get("JR2_BASE_BRANCH", "")
    attempt = 0
    if os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            attempt = sum(1 for line in f if line.split()[0] == item)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"{item} {branch} {stacked or '-'}\n")
    blockers_file = os.environ.get("JR2_BLOCKERS_JSON")
    if blockers_file:
        with open(blockers_file, encoding="utf-8") as src:
            listed = json.load(src)
        with open(log + ".blockers", "a", encoding="utf-8") as f:
            f.write(json.dumps({item: listed}) + "\n")
    feedback_file = os.environ.get("JR2_FEEDBACK_JSON")
    if feedback_file:
        with open(feedback_file, encoding="utf-8") as src:
            got = json.load(src)
        with open(os.environ["JR2_FEEDBACK_TEXT"], encoding="utf-8") as src:
            got["text"] = src.read()
        with open(log + ".feedback", "a", encoding="utf-8") as f:
            f.write(json.dumps({item: got}) + "\n")
    repo = item.split("#")[0]
    pr: dict[str, Any] = {}
    steps = plan.get(item, [])
    if steps and isinstance(steps[0], list):  # one list of steps per attempt
        steps = steps[min(attempt, len(steps) - 1)]
    for step in steps:
        verb, _, arg = step.partition(" ")
        if verb == "open":  # `open stacked`: into $JR2_BASE_BRANCH when set, else main
            into = (stacked or "main") if arg == "stacked" else arg
            pr = call(f"{fake}/repos/{repo}/pulls", "POST",
                      {"title": f"Fix {item}", "head": branch, "base": into})
        elif verb == "pr":
            pr = call(f"{fake}/repos/{repo}/pulls/{arg}", "GET")
        elif verb == "push":
            pushed = call(f"{fake}/_fake/push", "POST", {"repo": repo, "number": pr["number"]})
            pr["head"]["sha"] = pushed["sha"]
        elif verb in ("squash", "merge"):
            done = call(f"{fake}/repos/{repo}/pulls/{pr['number']}/merge", "PUT",
                        {"merge_method": verb})
            pr["merge_commit_sha"] = done["sha"]
        elif verb == "close":
            call(f"{fake}/repos/{repo}/pulls/{pr['number']}", "PATCH", {"state": "closed"})
        elif verb in ("check", "headcheck"):  # on the merge commit, or on the PR's head
            sha = pr["merge_commit_sha"] if verb == "check" else pr["head"]["sha"]
            call(f"{fake}/_fake/check", "POST", {"repo": repo, "sha": sha, "conclusion": arg})
    print(json.dumps({"pr": pr.get("html_url")}))


if __name__ == "__main__":
    main()
