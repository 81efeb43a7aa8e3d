"""jr2 against a real Redmine: the CLI, readiness from relations and subtasks, dry runs."""

from __future__ import annotations

import json

from redmine_helpers import Project


def test_jr2_ready_reads_blocks_relations_and_subtasks(redmine_project: Project) -> None:
    p = redmine_project
    a = p.issue("a: ready")
    b = p.issue("b: blocked by a")
    p.block(a, b)
    parent = p.issue("parent: waits for its subtask")
    kid = p.issue("kid: the subtask", parent_issue_id=parent)
    done = p.issue("done: closed")
    c = p.issue("c: blocked by a closed issue")
    p.block(done, c)
    p.close(done)
    res = p.jr2("ready", p.source, "--project", p.identifier, "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert sorted(e["id"] for e in data["ready"]) == sorted(f"#{n}" for n in (a, kid, c))
    reasons = {e["id"]: e["reasons"] for e in data["blocked"]}
    assert reasons[f"#{b}"] == [{"kind": "open_blocker", "ref": f"#{a}", "held_by": None}]
    assert reasons[f"#{parent}"] == [{"kind": "open_children", "refs": [f"#{kid}"]}]


def test_the_real_server_writes_nothing_outside_its_temporary_directory(
        redmine_project: Project) -> None:
    """Redmine's own directories (code, instances, configuration) and the home directory hold
    nothing newer than the server's start: the database, logs, caches, Gemfile.lock and
    Bundler's home are all in the run's temporary directory."""
    import os
    from pathlib import Path as P

    newer = []
    roots = [P("/usr/share/redmine"), P("/var/lib/redmine"), P("/etc/redmine"),
             P("/var/log/redmine"), P("/var/cache/redmine"),
             P(os.path.expanduser("~/.bundle")), P(os.path.expanduser("~/.gem"))]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not P(dirpath, d).is_symlink()]
            for name in [*filenames, *dirnames]:
                path = P(dirpath, name)
                if path.lstat().st_mtime > redmine_project.redmine.started:
                    newer.append(str(path))
    assert newer == []


def test_the_real_server_serves_concurrent_writers_without_errors(
        redmine_project: Project) -> None:
    """Several clients writing at once (as racing pools and a person do) all get 2xx: with
    SQLite, concurrent writers inside one Ruby process would otherwise fail with HTTP 500."""
    from concurrent.futures import ThreadPoolExecutor

    from redmine_helpers import Api

    p = redmine_project

    def write(i: int) -> None:
        api = Api(p.redmine.url, p.redmine.admin_key)  # a session (connection) of its own
        for j in range(8):
            data = api.call("POST", "/issues.json", {"issue": {
                "project_id": p.id, "subject": f"writer {i}, issue {j}"}})
            api.call("PUT", f"/issues/{data['issue']['id']}.json", {"issue": {"notes": "x"}})

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(write, range(6)))  # re-raises the first failed call
    listed = p.admin.call("GET", f"/issues.json?project_id={p.id}&status_id=*&limit=100")
    assert listed["total_count"] == 48
