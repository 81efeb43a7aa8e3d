"""The playground's seed file: a bad one is one line naming the file and the field, and a good
one becomes the fake's state exactly as the world says (read back over the fake's REST API)."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from jr2_core.errors import UsageError
from jr2_sources.playground import seed, serve

WORLD = """
[people]
alice = "write"
mallory = "none"

[[repos]]
name = "octo/app"
default_branch = "trunk"

[[repos]]
name = "octo/lib"

[[issues]]
repo = "octo/lib"
title = "Library"

[[issues]]
repo = "octo/app"
number = 3
title = "Parser"
labels = ["agent"]
assignees = ["alice"]
comments = [{ author = "alice", body = "/jr2 approve deploy" }]

[[issues]]
repo = "octo/app"
title = "Printer"
body = "Prints."
blocked_by = [3, "octo/lib#1"]
sub_issues = [3]

[[issues]]
repo = "octo/app"
title = "Old"
state = "closed"

[[pulls]]
repo = "octo/app"
head = "jr2/issue-3"
fixes = [3]
state = "merged"
checks = "failure"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "world.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "line"), [
    ('[[repos]]\nname = "o/r"\n[[issues]]\ntitle = "x"\nlabels = "agent"\n',
     "world.toml: issues.0.labels: expected a valid list, not 'agent'"),
    ('[[repos]]\nname = "o/r"\n[[issues]]\ntitle = "x"\nstate = "done"\n',
     "world.toml: issues.0.state: expected 'open' or 'closed', not 'done'"),
    ('[[repos]]\nname = "o/r"\n[[issues]]\ntitle = "x"\ncolour = 1\n',
     "world.toml: issues.0.colour: Extra inputs are not permitted"),
    ('[[issues]]\ntitle = "x"\n', "world.toml: repos: required, and not given"),
    ('[[repos]]\nname = "o/r"\n[[issues]]\ntitle = "x"\nblocked_by = [9]\n',
     "world.toml: issues.0.blocked_by: 9 is not an issue of the world"),
    ('[[repos]]\nname = "o/r"\n[[issues]]\ntitle = "x"\nnumber = 1\n'
     '[[pulls]]\nhead = "b"\nnumber = 1\n', "world.toml: pulls.0.number: o/r#1 is given twice"),
    ('[[repos]]\nname = "o/r"\n[[repos]]\nname = "o/s"\n[[issues]]\ntitle = "x"\n',
     "world.toml: issues.0.repo: name the repository (the world has several)"),
    ('[[repos]]\nname = "o/r"\n[[pulls]]\nhead = "b"\nfixes = [2]\n',
     "world.toml: pulls.0.fixes: #2 is not an issue of o/r"),
    ('[[repos]\n', "world.toml: not TOML: Expected ']]' at the end of an array declaration "
                   "(at line 1, column 8)"),
])
def test_a_bad_github_seed_is_one_line_naming_the_file_and_the_field(
        tmp_path: Path, text: str, line: str) -> None:
    with pytest.raises(UsageError) as err:
        seed.load_github(_write(tmp_path, text))
    assert str(err.value) == str(tmp_path / line)


@pytest.mark.parametrize(("text", "line"), [
    ('[[issues]]\ntitle = "x"\nstatus = "Closed"\n',
     "world.toml: issues.0.status: expected 'To Do', 'In Progress' or 'Done', not 'Closed'"),
    ('[[issues]]\nkey = "eng-1"\ntitle = "x"\n',
     "world.toml: issues.0.key: String should match pattern '^[A-Z][A-Z0-9]*-[1-9]\\d*$'"),
    ('[[issues]]\ntitle = "x"\nblocked_by = ["ENG-7"]\n',
     "world.toml: issues.0.blocked_by: 'ENG-7' is not an issue of the world"),
    ('[[issues]]\nkey = "ENG-1"\ntitle = "x"\n[[issues]]\nkey = "ENG-1"\ntitle = "y"\n',
     "world.toml: issues.1.key: ENG-1 is given twice"),
])
def test_a_bad_jira_seed_is_one_line_naming_the_file_and_the_field(
        tmp_path: Path, text: str, line: str) -> None:
    with pytest.raises(UsageError) as err:
        seed.load_jira(_write(tmp_path, text))
    assert str(err.value) == str(tmp_path / line)


def test_a_github_world_becomes_the_fakes_state(tmp_path: Path) -> None:
    world = seed.load_github(_write(tmp_path, WORLD))
    fake = serve.github_fake(world).start()
    try:
        url, bot = fake.url, {"Authorization": f"Bearer {serve.token_of('jr2-bot')}"}

        def get(path: str) -> requests.Response:
            return requests.get(f"{url}{path}", headers=bot, timeout=5)

        # numbers: given ones kept, the others the next free one, issues before pulls
        app = {i["number"]: i for i in get("/repos/octo/app/issues?state=all").json()}
        assert sorted(app) == [1, 2, 3, 4]
        assert (app[3]["title"], app[1]["title"], app[2]["title"]) == ("Parser", "Printer",
                                                                      "Old")
        assert [x["name"] for x in app[3]["labels"]] == ["agent"]
        assert [x["login"] for x in app[3]["assignees"]] == ["alice"]
        # the merged PR (#4) closed the issue it fixes; #2 was seeded closed
        assert (app[3]["state"], app[2]["state"], app[4]["pull_request"]["merged_at"] is None
                ) == ("closed", "closed", False)
        assert app[1]["issue_dependencies_summary"]["total_blocked_by"] == 2
        assert app[1]["sub_issues_summary"]["total"] == 1
        assert get("/repos/octo/app").json()["default_branch"] == "trunk"
        pr = get("/repos/octo/app/pulls/4").json()
        assert (pr["merged"], pr["base"]["ref"]) == (True, "trunk")
        assert fake.pulls.rollup(pr["merge_commit_sha"]) == {"state": "FAILURE"}
        [c] = get("/repos/octo/app/issues/3/comments").json()
        assert (c["user"]["login"], c["body"]) == ("alice", "/jr2 approve deploy")
        assert get("/repos/octo/app/collaborators/alice/permission").json()["permission"] == \
            "write"
        assert get("/repos/octo/app/collaborators/mallory/permission").status_code == 404
        # a person's token is theirs; a token the playground did not hand out is refused
        me = requests.get(f"{url}/user", timeout=5,
                          headers={"Authorization": f"Bearer {serve.token_of('mallory')}"})
        assert me.json()["login"] == "mallory"
        assert requests.get(f"{url}/user", headers={"Authorization": "Bearer ghp_real"},
                            timeout=5).status_code == 401
        # the next issue takes the next free number
        assert fake.add_issue("octo/app", "new") == 5
    finally:
        fake.stop()


def test_a_jira_world_becomes_the_fakes_state(tmp_path: Path) -> None:
    world = seed.load_jira(_write(tmp_path, """
[people]
alice = "edit"
bob = "browse"

[[issues]]
key = "ENG-4"
title = "Parser"
labels = ["agent"]
priority = "High"
assignee = "alice"

[[issues]]
title = "Printer"
body = "Prints."
blocked_by = ["ENG-4"]
parent = "ENG-4"
comments = [{ author = "bob", body = "soon" }]
"""))
    fake = serve.jira_fake(world).start()
    try:
        assert sorted(fake.issues) == ["ENG-1", "ENG-4"]
        printer = fake.issue("ENG-1")
        assert (printer.parent, printer.description["type"]) == ("ENG-4", "doc")
        assert [(ln.blocker, ln.blocked) for ln in fake.links] == [("ENG-4", "ENG-1")]
        assert fake.issue("ENG-4").priority == "2"
        assert fake.comment_bodies("ENG-1") == ["soon"]
        assert printer.comments[0]["author"]["accountId"] == "acc-bob"
        assert fake.editors == {"acc-alice"}
        assert fake.people[serve.jira_auth("bob")] == "bob"
        assert fake.add_issue("next") == "ENG-5"
    finally:
        fake.stop()
