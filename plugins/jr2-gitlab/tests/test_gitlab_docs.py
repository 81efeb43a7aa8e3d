"""The fake GitLab against GitLab's own API docs (fixtures/gitlab/api/, from doc/api/
issue_links.md): a links answer holds only documented fields, and every field jr2's reader
takes from a link is one GitLab documents."""

from __future__ import annotations

import json
from pathlib import Path

from fake_gitlab import FakeGitLab
from gitlab_helpers import make_client

DOCS = Path(__file__).resolve().parents[3] / "fixtures" / "gitlab" / "api"
READ_FROM_A_LINK = {"iid", "project_id", "web_url", "state", "link_type"}  # reader.py


def test_a_links_answer_holds_only_documented_fields(fake: FakeGitLab) -> None:
    documented = json.loads((DOCS / "issue_links.json").read_text())[0]
    a = fake.add_issue("g/p", "blocker")
    b = fake.add_issue("g/p", "blocked")
    fake.block(("g/p", a), ("g/p", b))
    client = make_client(fake.url)
    for iid in (a, b):
        links = client.call("GET", f"{client.base_url}/projects/g%2Fp/issues/{iid}/links",
                            None, "read links", write=False).data
        assert links
        for link in links:
            assert set(link) <= set(documented), set(link) - set(documented)
            assert set(link["author"]) <= set(documented["author"])
    assert set(documented) >= READ_FROM_A_LINK
