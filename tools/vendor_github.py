"""Vendor the parts of GitHub's own API description that jr2 uses into fixtures/github/openapi/.

`python tools/vendor_github.py [--openapi VER] [--webhooks VER] [--examples VER]` fetches three
npm packages with `npm pack` (the npm registry is their published home) and writes subsets:

* `@octokit/openapi` (GitHub's REST description from github/rest-api-description, MIT): the
  operations in `OPERATIONS` for api.github.com and GitHub Enterprise Server 3.17, 3.18 and 3.19,
  each with the closure of the components they reference (`examples` dropped to stay small), as
  `openapi/<plan>.json`. An operation a plan lacks is simply absent from its subset: that is
  how the tests know which endpoints an Enterprise Server does not serve.
* `@octokit/openapi-webhooks` (GitHub's webhook schemas, MIT): the events in `WEBHOOK_PREFIXES`
  (`label` and `milestone` too: they can change what the user's filter selects) with their
  component closure, as `openapi/webhooks.json`.
* `@octokit/webhooks-examples` (community-recorded real payloads, MIT): the events in
  `EXAMPLE_EVENTS`, as `openapi/webhook-examples.json`.

The fake GitHub ships with jr2 (the playground) without fixtures/: it answers 404 for an
operation its plan lacks from `jr2_sources/testing/fakes/github_operations.json`, the
(method, path) of each plan's operations, written here from the subsets (`operations_table`).

`openapi/VENDORED.md` records each package's version, npm integrity and licence. Nothing is
edited: the subsets are verbatim JSON (key order kept) so a diff against a newer release is
meaningful. The conformance tests (`tests/github/test_github_openapi.py`) read these files only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fixtures" / "github" / "openapi"
OPERATIONS_TABLE = ROOT / "jr2_sources" / "testing" / "fakes" / "github_operations.json"

PLANS = ("api.github.com", "ghes-3.17", "ghes-3.18", "ghes-3.19")

# (method, path) of every REST operation jr2 sends (jr2_sources/github/).
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("get", "/user"),
    ("get", "/app"),
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/installation"),
    ("post", "/app/installations/{installation_id}/access_tokens"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("get", "/repos/{owner}/{repo}/milestones"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("delete", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/assignees"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/events"),
    ("get", "/repos/{owner}/{repo}/issues/events"),
    # the feedback loop (`--on-feedback rerun`, trackers/github/feedback.py)
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/status"),
)

WEBHOOK_PREFIXES = ("issues-", "issue-dependencies-", "sub-issues-", "ping", "label-",
                    "milestone-")
# every example of the events that wake a pool or can change its scope (`label`, `milestone`:
# trackers/github/scopehooks.py); a few of events that never do
EXAMPLE_EVENTS = {"issues": None, "ping": None, "issue_comment": 3, "label": None,
                  "milestone": None}

PACKAGES = {"openapi": "@octokit/openapi", "webhooks": "@octokit/openapi-webhooks",
            "examples": "@octokit/webhooks-examples"}


def npm_pack(spec: str, into: Path) -> tuple[Path, dict[str, Any]]:
    """`npm pack SPEC` into `into`, extracted; the package dir and npm's report on it."""
    res = subprocess.run(["npm", "pack", spec, "--json", "--pack-destination", str(into)],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"npm pack {spec} failed: {res.stderr.strip()[:300]}")
    info = json.loads(res.stdout)[0]
    dest = into / info["name"].replace("/", "+")
    with tarfile.open(into / info["filename"]) as tar:
        tar.extractall(dest, filter="data")
    return dest / "package", info


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/"):
            found.add(ref)
        for v in node.values():
            _refs(v, found)
    elif isinstance(node, list):
        for v in node:
            _refs(v, found)


def _drop_examples(node: Any, names: bool = False) -> Any:
    """`node` without `example`/`examples` entries (documentation only); the keys of a
    `properties` map are names, never dropped."""
    if isinstance(node, dict):
        return {k: _drop_examples(v, k == "properties") for k, v in node.items()
                if names or k not in ("examples", "example")}
    if isinstance(node, list):
        return [_drop_examples(v) for v in node]
    return node


def closure(doc: dict[str, Any], roots: Any) -> dict[str, dict[str, Any]]:
    """The components `roots` reference, transitively, as {section: {name: object}}."""
    todo: set[str] = set()
    _refs(roots, todo)
    done: set[str] = set()
    out: dict[str, dict[str, Any]] = {}
    while todo:
        ref = todo.pop()
        if ref in done:
            continue
        done.add(ref)
        _, _, section, name = ref.split("/", 3)
        if section == "examples":
            continue
        obj = _drop_examples(doc["components"][section][name])
        out.setdefault(section, {})[name] = obj
        _refs(obj, todo)
    return {s: dict(sorted(v.items())) for s, v in sorted(out.items())}


def api_subset(doc: dict[str, Any]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for method, path in OPERATIONS:
        op = doc["paths"].get(path, {}).get(method)
        if op is not None:
            entry = paths.setdefault(path, {})
            if "parameters" in doc["paths"][path]:
                entry["parameters"] = doc["paths"][path]["parameters"]
            entry[method] = _drop_examples(op)
    return {"openapi": doc["openapi"], "info": doc["info"], "servers": doc.get("servers", []),
            "paths": paths, "components": closure(doc, paths)}


def webhook_subset(doc: dict[str, Any]) -> dict[str, Any]:
    hooks = {k: _drop_examples(v) for k, v in doc["webhooks"].items()
             if k.startswith(WEBHOOK_PREFIXES)}
    return {"openapi": doc["openapi"], "info": doc["info"], "webhooks": hooks,
            "components": closure(doc, hooks)}


def operations_table(specs: Path = OUT) -> dict[str, list[list[str]]]:
    """{plan: [[METHOD, path template], ...]} of the vendored subsets in `specs`."""
    table = {}
    for plan in PLANS:
        doc = json.loads((specs / f"{plan}.json").read_text())
        table[plan] = [[m.upper(), template] for template, item in doc["paths"].items()
                       for m in item if m != "parameters"]
    return table


def write_operations_table() -> None:
    OPERATIONS_TABLE.write_text(json.dumps(operations_table(), indent=1) + "\n")
    print(f"wrote {OPERATIONS_TABLE.relative_to(ROOT)}")


def write(name: str, data: Any) -> None:
    path = OUT / name
    path.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for key, pkg in PACKAGES.items():
        ap.add_argument(f"--{key}", default="latest", help=f"the version of {pkg}")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    notes = ["# Vendored from GitHub's published descriptions\n",
             "Written by `tools/vendor_github.py`; do not edit by hand. Subsets only: the "
             "operations, webhook events and examples jr2 uses (see the script).\n"]
    with tempfile.TemporaryDirectory() as tmp:
        for key, pkg in PACKAGES.items():
            pkg_dir, info = npm_pack(f"{pkg}@{getattr(args, key)}", Path(tmp))
            meta = json.loads((pkg_dir / "package.json").read_text())
            if key == "openapi":
                for plan in PLANS:
                    doc = json.loads((pkg_dir / "generated" / f"{plan}.json").read_text())
                    write(f"{plan}.json", api_subset(doc))
            elif key == "webhooks":
                doc = json.loads((pkg_dir / "generated" / "api.github.com.json").read_text())
                write("webhooks.json", webhook_subset(doc))
            else:
                events = json.loads((pkg_dir / "api.github.com" / "index.json").read_text())
                kept = [{**e, "examples": e["examples"][:EXAMPLE_EVENTS[e["name"]]]}
                        for e in events if e["name"] in EXAMPLE_EVENTS]
                write("webhook-examples.json", kept)
            lic = pkg_dir / "LICENSE"
            licence = lic.read_text().strip().splitlines()[0] if lic.exists() else "no file"
            notes.append(f"* `{pkg}` {meta['version']} (licence {meta.get('license')}: "
                         f"{licence}), npm integrity `{info.get('integrity')}`, "
                         f"from {meta.get('repository')}")
    (OUT / "VENDORED.md").write_text("\n".join(notes) + "\n")
    print(f"wrote {(OUT / 'VENDORED.md').relative_to(ROOT)}")
    write_operations_table()


if __name__ == "__main__":
    main()
