"""Act on a running playground as a person: `jr2 playground act github|jira ...`.

Contract: every act is one or two documented REST calls of the tracker (GitHub: "Update an
issue", "Create an issue comment", "Add labels to an issue", "Remove a label from an issue",
"Merge a pull request", "Create a pull request", "Create a commit status", and the reads;
Jira: "Transition issue", "Add comment", "Edit issue"), sent with the person's playground
token, exactly as `curl` would send them (docs/guides/playground.md shows each call). Only a
loopback playground is ever called: a tracker URL that is not 127.0.0.1 or localhost is refused
before anything is sent, so a person's act never reaches a real tracker.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlsplit

from jr2_core.errors import Jr2Error, UsageError

from .serve import jira_auth, token_of

_REF = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)#(?P<n>\d+)$")
_KEY = re.compile(r"^[A-Z][A-Z0-9]*-\d+$")


class ActError(Jr2Error):
    """The playground refused an act (or does not answer): nothing changed."""

    exit_code = 1


def playground_url(url: str | None, variable: str, kind: str) -> str:
    """The playground's base URL: `url`, else the environment's `variable`; loopback only."""
    if not url:
        raise UsageError(f"no playground: set {variable} (`jr2 playground {kind}` prints it) "
                         "or give --url")
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
        raise UsageError(f"{url} is not a playground (http://127.0.0.1:PORT): a person's acts "
                         f"go only to `jr2 playground {kind}`")
    return url.rstrip("/")


def github_ref(ref: str) -> tuple[str, int]:
    """`owner/repo#N` as (repository, number)."""
    m = _REF.match(ref.strip())
    if m is None:
        raise UsageError(f"expected owner/repo#N, not {ref!r}")
    return m.group("repo"), int(m.group("n"))


def jira_key(key: str) -> str:
    if not _KEY.match(key.strip()):
        raise UsageError(f"expected an issue key such as ENG-3, not {key!r}")
    return key.strip()


def call(base: str, method: str, path: str, auth: str, body: Any = None) -> Any:
    """One request to the playground; its JSON answer (None when empty)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": auth, "Accept": "application/json",
        "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        raise ActError(f"{method} {path}: HTTP {exc.code}: {_message(exc.read())}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ActError(f"no playground answers at {base} ({reason})") from None
    return json.loads(raw) if raw else None


def _message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")[:200]
    if isinstance(data, dict):
        words = data.get("message") or "; ".join(data.get("errorMessages") or [])
        return str(words or data)[:200]
    return str(data)[:200]


class GitHubActs:
    """A person's acts on the fake GitHub."""

    def __init__(self, base: str, login: str) -> None:
        self.base, self.login = base, login
        self.auth = f"Bearer {token_of(login)}"

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return call(self.base, method, path, self.auth, body)

    def close(self, ref: str, reason: str = "completed") -> str:
        repo, n = github_ref(ref)
        self._call("PATCH", f"/repos/{repo}/issues/{n}",
                   {"state": "closed", "state_reason": reason})
        return f"{repo}#{n}: closed ({reason}) by {self.login}"

    def reopen(self, ref: str) -> str:
        repo, n = github_ref(ref)
        self._call("PATCH", f"/repos/{repo}/issues/{n}", {"state": "open"})
        return f"{repo}#{n}: reopened by {self.login}"

    def comment(self, ref: str, text: str) -> str:
        repo, n = github_ref(ref)
        self._call("POST", f"/repos/{repo}/issues/{n}/comments", {"body": text})
        return f"{repo}#{n}: comment by {self.login}"

    def label(self, ref: str, name: str) -> str:
        repo, n = github_ref(ref)
        self._call("POST", f"/repos/{repo}/issues/{n}/labels", {"labels": [name]})
        return f"{repo}#{n}: labelled {name} by {self.login}"

    def unlabel(self, ref: str, name: str) -> str:
        repo, n = github_ref(ref)
        self._call("DELETE", f"/repos/{repo}/issues/{n}/labels/{quote(name, '')}")
        return f"{repo}#{n}: label {name} removed by {self.login}"

    def merge(self, ref: str) -> str:
        repo, n = github_ref(ref)
        done = self._call("PUT", f"/repos/{repo}/pulls/{n}/merge", {"merge_method": "merge"})
        return f"{repo}#{n}: merged by {self.login} ({str(done.get('sha'))[:7]})"

    def open_pr(self, repo: str, head: str, base: str | None, fixes: tuple[int, ...],
                title: str | None) -> str:
        if base is None:
            base = self._call("GET", f"/repos/{repo}")["default_branch"]
        body = "\n".join(f"Fixes #{n}" for n in fixes)
        made = self._call("POST", f"/repos/{repo}/pulls", {
            "title": title or f"Changes from {head}", "head": head, "base": base,
            "body": body})
        return f"{repo}#{made['number']}: pull request {head} -> {base} opened by {self.login}"

    def check(self, ref: str, state: str, context: str) -> str:
        """A commit status on the pull request's merge commit when it merged, else its head."""
        repo, n = github_ref(ref)
        pr = self._call("GET", f"/repos/{repo}/pulls/{n}")
        sha = pr.get("merge_commit_sha") if pr.get("merged") else pr["head"]["sha"]
        self._call("POST", f"/repos/{repo}/statuses/{sha}", {"state": state, "context": context})
        which = "merge commit" if pr.get("merged") else "head"
        return f"{repo}#{n}: check {context} {state} on its {which} {str(sha)[:7]}"

    def show(self, ref: str) -> str:
        repo, n = github_ref(ref)
        issue = self._call("GET", f"/repos/{repo}/issues/{n}")
        comments = self._call("GET", f"/repos/{repo}/issues/{n}/comments?per_page=100")
        labels = ", ".join(x["name"] for x in issue["labels"]) or "none"
        lines = [f"{repo}#{n}: {issue['title']}",
                 f"  state: {issue['state']}" + (f" ({issue['state_reason']})"
                                                 if issue.get("state_reason") else ""),
                 f"  labels: {labels}"]
        if issue.get("body"):
            lines += ["  body:", *(f"    {ln}" for ln in str(issue["body"]).splitlines())]
        for c in comments:
            lines += [f"  comment by {c['user']['login']}:",
                      *(f"    {ln}" for ln in str(c["body"]).splitlines())]
        return "\n".join(lines)


class JiraActs:
    """A person's acts on the fake Jira."""

    def __init__(self, base: str, name: str) -> None:
        self.base, self.name = base, name
        # Cloud takes an email and API token, Data Center a personal access token
        info = call(base, "GET", "/rest/api/2/serverInfo", jira_auth(name))
        self.auth = jira_auth(name, cloud=info.get("deploymentType") == "Cloud")

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return call(self.base, method, f"/rest/api/2{path}", self.auth, body)

    def transition(self, key: str, category: str) -> str:
        key = jira_key(key)
        found = self._call("GET", f"/issue/{key}/transitions")["transitions"]
        to = next(t for t in found if t["to"]["statusCategory"]["key"] == category)
        self._call("POST", f"/issue/{key}/transitions", {"transition": {"id": to["id"]}})
        return f"{key}: {to['to']['name']} by {self.name}"

    def comment(self, key: str, text: str) -> str:
        key = jira_key(key)
        self._call("POST", f"/issue/{key}/comment", {"body": text})
        return f"{key}: comment by {self.name}"

    def label(self, key: str, name: str, *, add: bool) -> str:
        key = jira_key(key)
        op = "add" if add else "remove"
        self._call("PUT", f"/issue/{key}", {"update": {"labels": [{op: name}]}})
        return f"{key}: label {name} {'added' if add else 'removed'} by {self.name}"

    def show(self, key: str) -> str:
        key = jira_key(key)
        issue = self._call("GET", f"/issue/{key}?fields=summary,status,labels,description")
        comments = self._call("GET", f"/issue/{key}/comment")["comments"]
        f = issue["fields"]
        lines = [f"{key}: {f.get('summary')}", f"  status: {f['status']['name']}",
                 f"  labels: {', '.join(f.get('labels') or []) or 'none'}"]
        if f.get("description"):
            lines += ["  description:",
                      *(f"    {ln}" for ln in str(f["description"]).splitlines())]
        for c in comments:
            who = c["author"].get("displayName") or c["author"].get("name")
            lines += [f"  comment by {who}:",
                      *(f"    {ln}" for ln in str(c["body"]).splitlines())]
        return "\n".join(lines)
