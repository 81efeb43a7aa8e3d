"""`jr2 work --on-feedback rerun|nothing`: refused in one usage line (exit 2, nothing written)
without what the loop needs, and listed only by the kinds that declare the capability."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from test_github_pulls_e2e import run

from jr2_core.cli import main
from jr2_sources.testing.fakes.github_server import FakeGitHub

REVIEW = ("--done-when", "merged", "--on-success", "review")


@pytest.mark.parametrize(("options", "says"), [
    (("--max-attempts", "3"), "needs --done-when merged --on-success review"),
    (("--done-when", "merged", "--max-attempts", "3"), "--on-success review"),
    ((*REVIEW,), "needs --max-attempts 2 or more"),
    ((*REVIEW, "--max-attempts", "1"), "needs --max-attempts 2 or more"),
])
def test_rerun_without_what_it_needs_is_one_usage_line(fake: FakeGitHub, tmp_path,
                                                       options: tuple[str, ...],
                                                       says: str) -> None:
    fake.add_issue("o/r", "Change")
    res = run(fake, tmp_path, "work", "github:o/r", "--on-feedback", "rerun", *options,
              "--", "true")
    assert res.returncode == 2, res.stderr
    assert says in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert [e for e in fake.requests() if e["method"] != "GET" and e["path"] != "/graphql"] == []


def test_only_kinds_that_declare_it_list_the_option() -> None:
    def shown(kind: str) -> str:
        res = CliRunner().invoke(main, ["work", f"{kind}:", "--help"])
        assert res.exit_code == 0, res.output
        return res.output

    assert "--on-feedback" in shown("github") and "feedback" in shown("github")
    assert "--on-feedback" not in shown("local")


def test_a_source_without_the_loop_refuses_rerun(tmp_path) -> None:
    backlog = tmp_path / "b.toml"
    backlog.write_text('[[item]]\nid = "T-1"\ntitle = "one"\n')
    res = CliRunner().invoke(main, ["work", f"local:{backlog}", "--state", str(tmp_path / "s"),
                                    "--on-feedback", "rerun", "--max-attempts", "2", "--",
                                    "true"])
    assert res.exit_code == 2, res.output
    assert "cannot send an item back on review feedback" in res.output
