"""Secrets on the GitHub and Jira paths: `jr2 ready` and `jr2 work` against the fakes with
tokens and a webhook secret set, the happy paths and the error paths (401 from the fake, a
read-only token's 403, a 403 on search, faults beyond the retry budget, a JQL error), with a
command that prints every secret on stdout and stderr and fails on one item (so its stderr
becomes the failure reason written to the tracker). Searched for the secret values: stdout,
stderr, every file under the test's directory (state, run records, per-item logs), and every
comment and label the pools wrote to the tracker (public to everyone who can see the issue)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rel_trackers import JQL, JR2, tracker

SECRETS = {
    "GITHUB_TOKEN": "ghp_0123456789abcdefRELgithubSECRET",
    "GH_TOKEN": "gho_0123456789abcdefRELghSECRET",
    "JIRA_API_TOKEN": "ATATT3xRELjiraSECRET0123456789",
    "JIRA_PAT": "NjQ5RELpatSECRET0123456789",
    "HOOK_SECRET": "whsec_RELwebhookSECRET0123456789",
}
LEAKY = ('echo "$GITHUB_TOKEN $GH_TOKEN $JIRA_API_TOKEN $JIRA_PAT $HOOK_SECRET"; '
         'echo "token: $GITHUB_TOKEN$JIRA_API_TOKEN$JIRA_PAT" >&2; '
         'case "$JR2_ITEM_ID" in *2) exit 1;; esac')
FAST = ["--write-spacing", "0.001", "--poll-every", "0.2"]
# workers get no secrets unless passed: pass them all, so that the scrubbing of logs is tested
PASS_ALL = [f"--pass-env={name}" for name in SECRETS]


def scan(texts: list[str], where: Path) -> int:
    for f in where.rglob("*"):
        if f.is_file():
            texts.append(f.read_bytes().decode("utf-8", "replace"))
    blob = "\n".join(texts)
    leaks = [name for name, value in SECRETS.items() if value in blob]
    assert not leaks, f"leaked: {leaks}"
    return len(texts)


def run(args: list[str], env: dict[str, str], cwd: Path, seen: list[str]) -> int:
    res = subprocess.run([*JR2, *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=60)
    seen.append(res.stdout + res.stderr)
    return res.returncode


def test_github_paths_leak_no_secret(tmp_path: Path) -> None:
    with tracker("github", SECRETS["GITHUB_TOKEN"]) as tr:
        gh = tr.fake
        gh.tokens = {SECRETS["GITHUB_TOKEN"], SECRETS["GH_TOKEN"]}
        tr.seed(3, 1, deps=1)
        env = {**tr.env(tmp_path / "state"), **SECRETS}
        seen: list[str] = []
        codes = {}
        src = ["github:o/r", *FAST]
        codes["ready json"] = run(["ready", "github:o/r", "--json"], env, tmp_path, seen)
        codes["ready md"] = run(["ready", "github:o/r", "--format", "markdown"], env, tmp_path,
                                seen)
        codes["explain"] = run(["ready", "github:o/r", "--explain", "o/r#2"], env, tmp_path,
                               seen)
        codes["work"] = run(["work", *src, "--json", "--webhook-secret-env", "HOOK_SECRET",
                             *PASS_ALL, "--", "sh", "-c", LEAKY], env, tmp_path, seen)
        gh_only = {k: v for k, v in env.items() if k != "GITHUB_TOKEN"}
        codes["GH_TOKEN ready"] = run(["ready", "github:o/r"], gh_only, tmp_path, seen)
        gh.read_only_tokens = {SECRETS["GH_TOKEN"]}  # the one jr2 uses: GH_TOKEN comes first
        gh.add_issue("o/r", "one more")
        tr.items.append("o/r#4")
        codes["403 read-only work"] = run(["work", *src, "--", "true"], env, tmp_path, seen)
        gh.read_only_tokens = set()
        gh.fault(503, times=100, method="GET")
        codes["503 beyond budget"] = run(["ready", "github:o/r", "--retry-budget", "1s"], env,
                                         tmp_path, seen)
        gh.faults.clear()
        gh.tokens = {"another-token-entirely"}
        codes["401 ready"] = run(["ready", "github:o/r"], env, tmp_path, seen)
        codes["401 work"] = run(["work", *src, "--", "true"], env, tmp_path, seen)
        for c in gh.comments.values():
            seen.append(c.body)
        for i in gh.issues.values():
            seen.extend(i.labels)
        assert codes == {"ready json": 0, "ready md": 0, "explain": 0, "work": 1,
                         "GH_TOKEN ready": 0, "403 read-only work": 4, "503 beyond budget": 4,
                         "401 ready": 4, "401 work": 4}, codes
        assert "***" in "\n".join(seen)  # the leaky command's output was there, scrubbed
        n = scan(seen, tmp_path)
        print(f"github_secrets: {len(codes)} CLI runs, {n} texts and files searched, 0 leaks")


def test_jira_paths_leak_no_secret(tmp_path: Path) -> None:
    with tracker("jira", SECRETS["JIRA_API_TOKEN"]) as tr:
        jf = tr.fake
        tr.seed(3, 2, deps=1)
        env = {**tr.env(tmp_path / "state"), **SECRETS}
        seen: list[str] = []
        codes = {}
        jql = ["--jql", JQL]
        src = ["jira:", *jql, "--on-success-transition", "Done", *FAST]
        codes["ready json"] = run(["ready", "jira:", *jql, "--json"], env, tmp_path, seen)
        codes["ready md"] = run(["ready", "jira:", *jql, "--format", "markdown"], env, tmp_path,
                                seen)
        codes["explain"] = run(["ready", "jira:", *jql, "--explain", tr.items[1]], env,
                               tmp_path, seen)
        codes["work"] = run(["work", *src, "--json", "--webhook-secret-env", "HOOK_SECRET",
                             *PASS_ALL, "--", "sh", "-c", LEAKY], env, tmp_path, seen)
        codes["bad JQL"] = run(["ready", "jira:", "--jql", "project = AND x"], env, tmp_path,
                               seen)
        jf.fault(403, times=100, path="/search", message="Forbidden")
        codes["403 search"] = run(["work", *src, "--", "true"], env, tmp_path, seen)
        jf.faults.clear()
        jf.fault(500, times=100, path="/search")
        codes["500 beyond budget"] = run(["ready", "jira:", *jql, "--retry-budget", "1s"], env,
                                         tmp_path, seen)
        jf.faults.clear()
        jf.deny_auth = True
        codes["401 ready"] = run(["ready", "jira:", *jql], env, tmp_path, seen)
        codes["401 work"] = run(["work", *src, "--", "true"], env, tmp_path, seen)
        jf.deny_auth = False
        pat_env = {k: v for k, v in env.items() if k not in ("JIRA_API_TOKEN", "JIRA_EMAIL")}
        codes["PAT ready"] = run(["ready", "jira:", *jql], pat_env, tmp_path, seen)
        for it in jf.issues.values():
            seen.extend(jf.comment_bodies(it.key))
            seen.extend(it.labels)
        for e in jf.log:  # what jr2 sent in bodies (comments, labels, transitions)
            if e.get("body") is not None:
                seen.append(repr(e["body"]))
        assert codes == {"ready json": 0, "ready md": 0, "explain": 0, "work": 1,
                         "bad JQL": 4, "403 search": 4, "500 beyond budget": 4,
                         "401 ready": 4, "401 work": 4, "PAT ready": 0}, codes
        assert "***" in "\n".join(seen)
        n = scan(seen, tmp_path)
        print(f"jira_secrets: {len(codes)} CLI runs, {n} texts and files searched, 0 leaks")
